#!/usr/bin/env bash
# Sets up everything and runs every check: formatting, clippy, unit and
# integration tests on SQLite and on a real PostgreSQL, and the Playwright
# browser tests in Debian's Chromium. Idempotent; CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

scripts/setup.sh --tests

say "format and lints"
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo clippy -p frontend --target wasm32-unknown-unknown -- -D warnings

say "tests on SQLite"
cargo test

say "tests on PostgreSQL"
TEST_DATABASE_URL="postgres://countersign:countersign@127.0.0.1:5432/countersign" \
  cargo test -p storage -p engine -p server

say "browser tests (Playwright + Chromium)"
scripts/build-site.sh
cargo build -p server
(cd end2end && npx playwright test)
say "all checks passed"
