#!/usr/bin/env bash
# Opens an HTML page in headless Chromium (Debian's `chromium`; as root it
# needs --no-sandbox) and writes what a browser made of it:
#   OUT.dom.html  the DOM after the page's scripts ran (--dump-dom)
#   OUT.log       the browser's log, console messages (script errors) included
#   OUT.png       a screenshot of the top WIDTHxHEIGHT pixels
# Usage: scripts/render_page.sh PAGE.html OUT [WIDTH,HEIGHT]  (default 1280,2400)
# Each run uses a new empty profile; nothing is fetched from the network.
set -euo pipefail
page=$(realpath "$1")
out=$2
size=${3:-1280,2400}
if ! command -v chromium >/dev/null; then
  echo "render_page: chromium is missing; run scripts/setup_browser.sh" >&2
  exit 1
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --hide-scrollbars)
chromium "${flags[@]}" --user-data-dir="$profile/dom" --enable-logging=stderr --v=0 \
  --dump-dom "file://$page" >"$out.dom.html" 2>"$out.log"
chromium "${flags[@]}" --user-data-dir="$profile/shot" --screenshot="$out.png" \
  --window-size="$size" "file://$page" >>"$out.log" 2>&1
[ -s "$out.png" ] || { echo "render_page: no screenshot of $page" >&2; exit 1; }
