#!/usr/bin/env bash
# Sets up, builds and runs Countersign on its embedded default: SQLite in
# data/countersign.db with demo data; the URL and demo logins are printed.
# Extra arguments go to `countersign serve` (e.g. --listen 0.0.0.0:3000).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build-site.sh --release
cargo build --release -p server
export COUNTERSIGN_SITE_ROOT="${COUNTERSIGN_SITE_ROOT:-target/site}"
exec target/release/countersign serve "$@"
