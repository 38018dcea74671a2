#!/usr/bin/env bash
# Planning seconds at POD scale (issue 15): the Llama-2-70B-shaped graph
# (4,648 nodes, 138 GB of fp16 weights as a sparse external file) planned
# with --num-ipus auto up to 256 (target: under 10 s), with 64, 256 and 1024
# IPUs, and for a POD256 with --total-ipus; each run's planning seconds
# (the plan's planned-in figure) and wall seconds.
# Usage: bench/pod_bench.sh [AUTOSHARD_BINARY] [MAKE_LLAMA_GRAPH_PY] [SEQ]
# (defaults: build/autoshard, ../shared/tools/make_llama_graph.py, which
# needs Debian's python3-numpy and python3-onnx). Writes under a temporary
# folder only.
set -euo pipefail
BIN=${1:-build/autoshard}
TOOL=${2:-../shared/tools/make_llama_graph.py}
SEQ=${3:-2048}  # sequence length; at 2048 a node alone overflows an IPU
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 "$TOOL" "$TMP/llama" 80 8192 28672 64 8 32000 "$SEQ" >/dev/null
printf '%-34s %5s %5s %10s %6s %6s\n' run IPUs fits planned_s cpu_s wall_s
# run NAME FLAGS...: one shard run; CPU seconds are user + system.
run() {
  local name=$1
  shift
  local TIMEFORMAT='%R %U %S'
  { time "$BIN" shard "$TMP/llama/model.onnx" --precision fp16 -o "$TMP/out.onnx" \
      --plan "$TMP/plan.json" "$@" >"$TMP/report" 2>"$TMP/err"; } 2>"$TMP/time" || true
  local wall user sys ipus fits planned
  read -r wall user sys <"$TMP/time"
  ipus=$(grep -o '^ "num_ipus": [0-9]*' "$TMP/plan.json" | head -1 | grep -o '[0-9]*$')
  fits=$(grep -o '^ "fits": [a-z]*' "$TMP/plan.json" | head -1 | grep -o '[a-z]*$')
  planned=$(grep -o 'planned in [0-9.]*' "$TMP/report" | grep -o '[0-9.]*$')
  printf '%-34s %5s %5s %10s %6.2f %6.2f\n' "$name" "$ipus" "$fits" "$planned" \
    "$(echo "$user + $sys" | bc)" "$wall"
}
run "-n auto --max-ipus 256" -n auto --max-ipus 256
run "-n 64" -n 64
run "-n 256" -n 256
run "-n 1024" -n 1024
run "-n auto --total-ipus 256" -n auto --total-ipus 256
run "-n auto --total-ipus 1024" -n auto --total-ipus 1024 --max-ipus 1024
