#!/usr/bin/env bash
# The README's remote-weights figures (issue 30): makes the Llama-2-70B-shaped
# graph at sequence 512 with the shared tool (138 GB of fp16 weights in a
# sparse file) and plans it for a POD256 with every weight remote, sharded
# over all the replicas of each IPU count; the report compares the POD
# throughput with the best all-on-chip plan (planned in the same run).
# Usage: scripts/llama_pod.sh AUTOSHARD_BINARY MAKE_LLAMA_GRAPH_PY OUT_DIR
# Writes OUT_DIR/model.onnx (+ sparse data), remote.json, popart.json.
set -euo pipefail
BIN=$1
TOOL=$2
OUT=$3
/usr/bin/python3 "$TOOL" "$OUT" 80 8192 28672 64 8 32000 512 >/dev/null
"$BIN" shard "$OUT/model.onnx" --precision fp16 -n auto --total-ipus 256 \
  --weights-location remote --shard-over group --plan "$OUT/remote.json" \
  --popart-options "$OUT/popart.json"
