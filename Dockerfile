# Multi-stage build: the server binary plus the site assets (wasm, css).
FROM rust:1.95-bookworm AS build
ARG WASM_BINDGEN_VERSION=0.2.130
RUN rustup target add wasm32-unknown-unknown \
 && cargo install wasm-bindgen-cli --version "${WASM_BINDGEN_VERSION}"
WORKDIR /src
COPY . .
RUN scripts/build-site.sh --release \
 && cargo build --release -p server

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /var/lib/countersign --create-home countersign
COPY --from=build /src/target/release/countersign /usr/local/bin/countersign
COPY --from=build /src/target/site /srv/countersign/site
ENV COUNTERSIGN_SITE_ROOT=/srv/countersign/site \
    COUNTERSIGN_LISTEN=0.0.0.0:3000 \
    COUNTERSIGN_DATABASE_URL=sqlite:///var/lib/countersign/countersign.db \
    COUNTERSIGN_LOG_FORMAT=json
USER countersign
WORKDIR /var/lib/countersign
EXPOSE 3000
HEALTHCHECK CMD ["/bin/sh", "-c", "exec 3<>/dev/tcp/127.0.0.1/3000"]
STOPSIGNAL SIGTERM
CMD ["countersign", "serve"]
