#!/usr/bin/env bash
# A bounded schemathesis pass over the OpenAPI document: a real server (the
# debug binary, a fresh SQLite database with the demo data) is fuzzed as a
# customer, an agent, an approver, a manager and the shop, each with its own
# bearer token. Fails on any 5xx, any status the document does not list, any
# answer that does not match its documented schema or content type.
#   scripts/api-fuzz.sh              (after `cargo build -p server`)
#   API_FUZZ_EXAMPLES=50 scripts/api-fuzz.sh   more cases per operation
set -euo pipefail
cd "$(dirname "$0")/.."

bin="${COUNTERSIGN_BIN:-target/debug/countersign}"
schemathesis=.venv/api-fuzz/bin/schemathesis
port="${API_FUZZ_PORT:-3290}"
examples="${API_FUZZ_EXAMPLES:-12}"
seed="${API_FUZZ_SEED:-1}"
work=target/api-fuzz

[[ -x "$bin" ]] || { echo "no server binary at $bin: run cargo build -p server" >&2; exit 1; }
[[ -x "$schemathesis" ]] || { echo "schemathesis is missing: run scripts/setup.sh --tests" >&2; exit 1; }

rm -rf "$work" && mkdir -p "$work"
export COUNTERSIGN_LISTEN="127.0.0.1:$port"
export COUNTERSIGN_DATABASE_URL="sqlite://$work/countersign.db"
export COUNTERSIGN_SITE_ROOT=target/site
export COUNTERSIGN_DEMO_PASSWORD="api-fuzz-demo-password"
export COUNTERSIGN_SEED_DEMO=true
export COUNTERSIGN_SANDBOX_SECRET_KEY=sk_sbx_api_fuzz
export COUNTERSIGN_RECONCILE_INTERVAL_SECONDS=0
export RUST_LOG="${RUST_LOG:-warn}"

"$bin" serve >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null

token_for() {
  "$bin" token create --user "$1" --label api-fuzz | awk '/^secret/ { print $NF }'
}

failed=()
for user in customer agent approver manager shop; do
  token=$(token_for "$user")
  [[ -n "$token" ]] || { echo "no token for $user" >&2; exit 1; }
  printf '\n==> schemathesis as %s (%s cases per operation)\n' "$user" "$examples"
  # The live stream never ends by itself: it is documented, not fuzzed.
  if ! "$schemathesis" run "http://127.0.0.1:$port/api/openapi.json" \
      --header "Authorization: Bearer $token" \
      --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
      --exclude-path /api/live/proposals \
      --phases examples,coverage,fuzzing \
      --max-examples "$examples" \
      --seed "$seed" \
      --workers 2 \
      --request-timeout 20 \
      --suppress-health-check all \
      --warnings off \
      --report junit --report-dir "$work/report-$user"; then
    failed+=("$user")
  fi
done

# A panic anywhere is a defect, even one the client never saw.
if grep -n "panicked at" "$work/server.log"; then
  echo "the server panicked during the API fuzz pass (log: $work/server.log)" >&2
  failed+=("panic")
fi
if ((${#failed[@]})); then
  echo "API fuzz pass failed: ${failed[*]} (server log: $work/server.log)" >&2
  exit 1
fi
echo "API fuzz pass: no 5xx, no undocumented status, every answer as documented"
