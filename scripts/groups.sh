#!/usr/bin/env bash
# Runs two agent groups on this machine: support (its refund specialist asks
# the returns desk before asking the customer) and returns (the desk, seeded
# with returned parcels). Each has its own database and signing key (master
# keys kept in DATA/gateway/); they pin each other's keys, the returns group
# allows support's returns.inspection tasks, and support knows where the
# returns group is. Idempotent; demo data is seeded into empty databases.
#
#   scripts/groups.sh BIN DATA SUPPORT_LISTEN RETURNS_LISTEN [serve args…]
#
# Other COUNTERSIGN_* variables (site root, demo password, …) apply to both.
set -euo pipefail
bin="$1" data="$2" support_listen="$3" returns_listen="$4"
shift 4
# The returns group's database in a folder of its own: a generated demo
# password is kept next to each database, one per group.
mkdir -p "$data/gateway" "$data/returns"
chmod 700 "$data/gateway"
# Each group's master key, made once and kept (it seals the group's key).
master_key() {
  local file="$data/gateway/$1.master-key"
  if [[ ! -s "$file" ]]; then
    (umask 077 && "$bin" gateway new-master-key > "$file")
  fi
  cat "$file"
}
# Runs the CLI as group $1 (its database, key and address); the rest are args.
as_group() {
  local group="$1" db listen
  shift
  case "$group" in
    support) db="sqlite://$data/countersign.db" listen="$support_listen" ;;
    returns) db="sqlite://$data/returns/countersign.db" listen="$returns_listen" ;;
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
  --url "http://$returns_listen/a2a" --admin admin

# RETURNS_FORWARD (`kind=group`, optional): the returns desk passes the
# tasks it has no record for on to that group (gateway_forward).
COUNTERSIGN_GATEWAY_FORWARD="${RETURNS_FORWARD:-}" as_group returns "$bin" serve &
returns_pid=$!
trap 'kill "$returns_pid" 2> /dev/null || true; wait "$returns_pid" 2> /dev/null || true' EXIT INT TERM
echo "returns desk: http://$returns_listen (the same demo logins; its password is printed below)"
COUNTERSIGN_GATEWAY_RETURNS_DESK=returns as_group support "$bin" serve "$@"
