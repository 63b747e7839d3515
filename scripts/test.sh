#!/usr/bin/env bash
# Sets up everything and runs every check: formatting, clippy, unit and
# integration tests on SQLite and on a real PostgreSQL, a schemathesis pass
# over the OpenAPI document, and the Playwright browser tests in Debian's
# Chromium. Idempotent; CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# CI builds once from a clean clone: incremental caches would only add to the
# size of target/ without saving any time (a clean run used 12 GB with them
# and debug info for dependencies, 5.4 GB without).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
disk() { printf 'disk: %s free; target/ %s\n' "$(df -h --output=avail . | tail -1 | tr -d ' ')" "$(du -sh target 2>/dev/null | cut -f1)"; }

scripts/setup.sh --tests

disk
say "format and lints"
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo clippy -p frontend --target wasm32-unknown-unknown -- -D warnings

disk
say "tests on SQLite"
cargo test --no-fail-fast

disk
say "tests on PostgreSQL"
# The same package selection as above, so nothing is rebuilt: selecting only
# the database crates unifies dependency features differently and compiled a
# second copy of half the tree (1.4 GB). The crates that never touch the
# database rerun their tests in a few seconds.
TEST_DATABASE_URL="postgres://countersign:countersign@127.0.0.1:5432/countersign" \
  cargo test --no-fail-fast

disk
say "API fuzz pass (schemathesis against a real server, one pass per role)"
# target/debug/countersign is the server binary `cargo test` built for the
# integration tests. `cargo build -p server` would compile storage, engine,
# app and server a second time (about 2.5 minutes here), only because the
# tests' dev-dependencies add storage's `testing` module, which the binary
# never calls.
scripts/api-fuzz.sh

disk
say "browser tests (Playwright + Chromium) against the release bundle"
# The bundle people get: wasm-opt'd, versioned and gzipped, so a hydration
# break from the optimiser fails here rather than in production.
scripts/build-site.sh --release
(cd end2end && npx playwright test)
disk
say "all checks passed"
