#!/usr/bin/env bash
# Builds the browser half of the site into target/site: the hydration wasm
# (frontend crate → wasm-bindgen), the stylesheet and public/ files.
# Usage: scripts/build-site.sh [--release]
set -euo pipefail
cd "$(dirname "$0")/.."

profile=debug
cargo_profile=()
if [[ "${1:-}" == "--release" ]]; then
  profile=wasm-release
  cargo_profile=(--profile wasm-release)
fi

site=target/site
pkg="$site/pkg"
staging="$pkg/.staging"
rm -rf "$staging"
mkdir -p "$staging"

cargo build -p frontend --lib --target wasm32-unknown-unknown "${cargo_profile[@]}"
wasm-bindgen --target web --no-typescript --out-name countersign --out-dir "$staging" \
  "target/wasm32-unknown-unknown/$profile/frontend.wasm"
# npm's binaryen (installed with the browser tests; never Debian's v108,
# which breaks hydration) shrinks the release wasm about threefold. Without
# it the bundle is bigger but works.
if [[ "$profile" != debug ]] && [[ -x end2end/node_modules/.bin/wasm-opt ]]; then
  end2end/node_modules/.bin/wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
    "$staging/countersign_bg.wasm" -o "$staging/countersign_bg.wasm"
fi
cp style/main.css "$staging/countersign.css"

# The bundle is served from a path named after its content
# (server::site_bundle), so browsers cache it for a year and a new build is
# a new path. Each file gets a gzip copy the server sends when accepted.
version=$(cat "$staging"/countersign.js "$staging"/countersign_bg.wasm "$staging"/countersign.css \
  | sha256sum | cut -c1-16)
for file in "$staging"/countersign.js "$staging"/countersign_bg.wasm "$staging"/countersign.css; do
  gzip -9 --keep --force --no-name "$file"
done
rm -rf "${pkg:?}/$version"
mv "$staging" "$pkg/$version"
echo "$version" > "$pkg/current.new"
mv "$pkg/current.new" "$pkg/current"
# Earlier builds' bundles and the unversioned layout of older scripts.
find "$pkg" -mindepth 1 -maxdepth 1 ! -name "$version" ! -name current -exec rm -rf {} +
cp -r public/. "$site/"
gzipped=$(cat "$pkg/$version"/*.gz | wc -c)
echo "site built in $site ($profile, bundle $version, $((gzipped / 1024)) KiB gzipped)"
