#!/usr/bin/env bash
# Remakes docs/images/report_squeezenet.png, the README's picture of the
# --html page: the bundled model sharded onto 4 IPUs, opened in headless
# Chromium (scripts/render_page.sh). Builds the CLI and installs chromium
# when missing. Usage: scripts/screenshot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh autoshard
scripts/setup_browser.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/autoshard shard models/squeezenet1_1.onnx --num-ipus 4 --batch-size 1 \
  -o "$tmp/sq.onnx" --html "$tmp/sq.html" -q
scripts/render_page.sh "$tmp/sq.html" "$tmp/shot" 1280,1450
mkdir -p docs/images
cp "$tmp/shot.png" docs/images/report_squeezenet.png
echo "wrote docs/images/report_squeezenet.png ($(wc -c <"$tmp/sq.html") bytes of HTML)"
