#!/usr/bin/env bash
# Installs what Countersign needs on a fresh Debian machine with only the Rust
# toolchain. Idempotent: every step checks first.
#   scripts/setup.sh          toolchain and Chromium, for building and running the app
#   scripts/setup.sh --tests  also PostgreSQL and Playwright
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=false
[[ "${1:-}" == "--tests" ]] && with_tests=true

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

apt_updated=false
apt_install() {
  if [[ "$apt_updated" == false ]]; then
    as_root apt-get update -qq
    apt_updated=true
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# --- Rust: the wasm target and a wasm-bindgen CLI matching Cargo.lock -------
if ! rustup target list --installed | grep -q '^wasm32-unknown-unknown$'; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
wb_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
if [[ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$wb_version" ]]; then
  say "installing wasm-bindgen-cli $wb_version (a few minutes, once)"
  # Without --locked: the CLI's own lock file does not resolve offline-only registries.
  cargo install wasm-bindgen-cli --version "$wb_version"
fi

# --- Chromium: the browser lane reads carriers' tracking pages in it, and
# the browser tests drive it ----------------------------------------------
if ! command -v chromium >/dev/null; then
  say "installing Chromium (Debian's, for the browser lane)"
  apt_install chromium
fi

[[ "$with_tests" == true ]] || exit 0

# --- PostgreSQL for the second storage backend ------------------------------
if ! command -v pg_ctlcluster >/dev/null; then
  say "installing PostgreSQL"
  apt_install postgresql
fi
cluster=$(pg_lsclusters --no-header | awk 'NR==1 { print $1 " " $2 }')
if [[ -z "$cluster" ]]; then
  as_root pg_createcluster 15 main
  cluster="15 main"
fi
if ! pg_lsclusters --no-header | awk 'NR==1 { exit ($4 == "online") ? 0 : 1 }'; then
  say "starting PostgreSQL $cluster"
  as_root pg_ctlcluster $cluster start
fi
for _ in $(seq 1 30); do
  as_root su postgres -c "psql -qtAc 'select 1'" >/dev/null 2>&1 && break
  sleep 1
done
as_root su postgres -c "psql -qtAc \"DO \\\$\\\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'countersign') THEN CREATE ROLE countersign LOGIN CREATEDB PASSWORD 'countersign'; END IF; END \\\$\\\$;\"" >/dev/null
if ! as_root su postgres -c "psql -qtAc \"SELECT 1 FROM pg_database WHERE datname = 'countersign'\"" | grep -q 1; then
  as_root su postgres -c "createdb -O countersign countersign"
fi

# --- Chromium and Playwright for the browser tests --------------------------
if ! command -v npm >/dev/null; then
  say "installing Node.js"
  apt_install nodejs npm
fi
if [[ ! -x end2end/node_modules/.bin/playwright ]] || [[ end2end/package-lock.json -nt end2end/node_modules/.package-lock.json ]]; then
  say "installing Playwright (npm, no browser download: Debian's Chromium is used)"
  (cd end2end && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
fi

# --- schemathesis for the API fuzz pass (scripts/api-fuzz.sh) ---------------
schemathesis_version=4.32.5
if [[ "$(.venv/api-fuzz/bin/schemathesis --version 2>/dev/null | awk '{ print $NF }')" != "$schemathesis_version" ]]; then
  say "installing schemathesis $schemathesis_version (PyPI, in .venv/api-fuzz)"
  command -v curl >/dev/null || apt_install curl
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    apt_install python3 python3-venv
  fi
  rm -rf .venv/api-fuzz
  python3 -m venv .venv/api-fuzz
  .venv/api-fuzz/bin/pip install --quiet --disable-pip-version-check "schemathesis==$schemathesis_version"
fi

# --- the official A2A Python SDK for the gateway's interop tests -------------
# (server/tests/http/a2a.rs runs interop/a2a_peer.py, a signing a2a-sdk client,
# and interop/a2a_server.py, a plain a2a-sdk server, in this venv)
a2a_requirements="a2a-sdk[http-server]==1.3.0 uvicorn==0.32.0 rfc8785==0.1.4 cryptography==50.0.2"
if [[ "$(cat .venv/a2a/requirements 2>/dev/null)" != "$a2a_requirements" ]]; then
  say "installing a2a-sdk and its signing peers (PyPI, in .venv/a2a)"
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    apt_install python3 python3-venv
  fi
  rm -rf .venv/a2a
  python3 -m venv .venv/a2a
  # shellcheck disable=SC2086 # one word per requirement
  .venv/a2a/bin/pip install --quiet --disable-pip-version-check $a2a_requirements
  echo "$a2a_requirements" > .venv/a2a/requirements
fi
