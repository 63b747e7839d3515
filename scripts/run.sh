#!/usr/bin/env bash
# Sets up, builds and runs Countersign on its embedded default: SQLite in
# data/countersign.db with demo data; the URL and demo logins are printed.
# Extra arguments go to `countersign serve` (e.g. --listen 0.0.0.0:3000).
#
#   scripts/run.sh --groups   two agent groups on this machine: support
#                             (http://127.0.0.1:3000, data/countersign.db)
#                             and the returns desk (http://127.0.0.1:3001,
#                             data/returns/countersign.db), each with its own key,
#                             trusting each other for returns.inspection.
set -euo pipefail
cd "$(dirname "$0")/.."
groups=false
if [[ "${1:-}" == "--groups" ]]; then
  groups=true
  shift
fi
scripts/setup.sh
scripts/build-site.sh --release
cargo build --release -p server
export COUNTERSIGN_SITE_ROOT="${COUNTERSIGN_SITE_ROOT:-target/site}"
if ! $groups; then
  exec target/release/countersign serve "$@"
fi

exec scripts/groups.sh target/release/countersign data 127.0.0.1:3000 127.0.0.1:3001 "$@"
