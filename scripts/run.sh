#!/usr/bin/env bash
# Sets up, builds and runs Countersign on its embedded default: SQLite in
# data/countersign.db with demo data; the URL and demo logins are printed.
# Extra arguments go to `countersign serve` (e.g. --listen 0.0.0.0:3000).
#
#   scripts/run.sh --groups   two agent groups on this machine: support
#                             (http://127.0.0.1:3000, data/countersign.db)
#                             and the returns desk (http://127.0.0.1:3001,
#                             data/returns.db), each with its own key,
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

bin=target/release/countersign
mkdir -p data/gateway
chmod 700 data/gateway
# Each group's master key, made once and kept (it seals the group's key).
master_key() {
  local file="data/gateway/$1.master-key"
  if [[ ! -s "$file" ]]; then
    (umask 077 && "$bin" gateway new-master-key > "$file")
  fi
  cat "$file"
}
# Runs the CLI as group $1 (its database, key and port); the rest are args.
as_group() {
  local group="$1" db listen
  shift
  case "$group" in
    support) db="sqlite://data/countersign.db" listen="127.0.0.1:3000" ;;
    returns) db="sqlite://data/returns.db" listen="127.0.0.1:3001" ;;
  esac
  COUNTERSIGN_DATABASE_URL="$db" COUNTERSIGN_LISTEN="$listen" \
    COUNTERSIGN_GATEWAY_GROUP="$group" \
    COUNTERSIGN_GATEWAY_MASTER_KEY="$(master_key "$group")" \
    COUNTERSIGN_EXECUTOR_NAME="executor-$group" \
    "$@"
}
# Group $1 pins every key version group $2 publishes (idempotent).
pin_keys_of() {
  as_group "$2" "$bin" gateway keys | while read -r kid public _; do
    IFS=/ read -r _ key_id version <<< "$kid"
    as_group "$1" "$bin" gateway pin-key --group "$2" --key-id "$key_id" \
      --version "${version#v}" --public-key "$public" --admin admin
  done
}
for group in support returns; do
  # Migrates, and seeds the demo data into an empty database (the returns
  # desk's parcel records with it); the logins are printed at start.
  as_group "$group" "$bin" seed-demo > /dev/null
done
pin_keys_of returns support
pin_keys_of support returns
as_group returns "$bin" gateway allow --from support --to returns \
  --kind returns.inspection --admin admin
as_group support "$bin" gateway peer --group returns \
  --url http://127.0.0.1:3001/a2a --admin admin

as_group returns "$bin" serve &
returns_pid=$!
trap 'kill "$returns_pid" 2> /dev/null || true; wait "$returns_pid" 2> /dev/null || true' EXIT INT TERM
echo "returns desk: http://127.0.0.1:3001 (its logins: data/returns.db's demo password file)"
COUNTERSIGN_GATEWAY_RETURNS_DESK=returns as_group support "$bin" serve "$@"
