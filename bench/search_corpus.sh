#!/usr/bin/env bash
# For every model under a folder, splits it onto 2 and 4 IPUs with the raw
# strategy on ipu2, then again with --strategy search on an ipu2 whose tiles
# hold only PERCENT% (default 80) of the raw split's fullest tile, so the raw
# split overflows. Prints: model, IPUs, raw max tile bytes, tile size used,
# search max tile bytes, fits, candidates, seconds.
# Usage: bench/search_corpus.sh [MODELS_DIR] [PERCENT]   (needs python3)
# Both columns are measured at the device's available memory proportion.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-../shared/models}
PERCENT=${2:-80}
BIN=build/autoshard
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
field() { python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
printf '| model | IPUs | raw max tile | tile bytes | search max tile | fits | candidates | search seconds |\n'
printf '|---|---|---|---|---|---|---|---|\n'
find "$DIR" -name '*.onnx' | sort | while read -r model; do
  name=${model#"$DIR"/}
  for k in 2 4; do
    rm -f "$TMP/raw.json" "$TMP/s.json"
    code=0
    "$BIN" shard "$model" -n "$k" --batch-size 1 -q -o "$TMP/raw.onnx" --plan "$TMP/raw.json" 2>/dev/null || code=$?
    if [ "$code" -ne 0 ] && [ "$code" -ne 3 ]; then
      printf '| %s | %d | (raw failed: exit %d) |||||\n' "$name" "$k" "$code"
      continue
    fi
    raw=$(field "$TMP/raw.json" "max(int(i['memory']['max_tile_bytes']) for i in p['ipus'])")
    tile=$((raw * PERCENT / 100))
    printf 'base: "ipu2"\nname: "ipu2-%spct"\nbytes_per_tile: %s\n' "$PERCENT" "$tile" >"$TMP/dev.textproto"
    code=0
    "$BIN" shard "$model" -n "$k" --batch-size 1 -q --strategy search --device "$TMP/dev.textproto" \
      -o "$TMP/s.onnx" --plan "$TMP/s.json" 2>/dev/null || code=$?
    if [ ! -f "$TMP/s.json" ]; then
      printf '| %s | %d | %s | %s | (search failed: exit %d) ||||\n' "$name" "$k" "$raw" "$tile" "$code"
      continue
    fi
    printf '| %s | %d | %s | %s | %s | %s | %s | %.2f |\n' "$name" "$k" "$raw" "$tile" \
      "$(field "$TMP/s.json" "p['search']['max_tile_bytes']")" \
      "$(field "$TMP/s.json" "'yes' if p['fits'] else 'no'")" \
      "$(field "$TMP/s.json" "p['search']['candidates']")" \
      "$(field "$TMP/s.json" "p['search']['seconds']")"
  done
done
