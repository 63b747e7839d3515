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
mkdir -p "$pkg"

cargo build -p frontend --lib --target wasm32-unknown-unknown "${cargo_profile[@]}"
wasm-bindgen --target web --no-typescript --out-name countersign --out-dir "$pkg" \
  "target/wasm32-unknown-unknown/$profile/frontend.wasm"
# Without wasm-opt the release wasm is ~3x larger but works; with npm's
# binaryen (never Debian's v108, which breaks hydration) it is optimised.
if [[ "$profile" != debug ]] && [[ -x end2end/node_modules/.bin/wasm-opt ]]; then
  end2end/node_modules/.bin/wasm-opt -Oz "$pkg/countersign_bg.wasm" -o "$pkg/countersign_bg.wasm"
fi
cp style/main.css "$pkg/countersign.css"
cp -r public/. "$site/"
echo "site built in $site ($profile)"
