#!/usr/bin/env bash
# Issue 26 point 1: one `shard` run computes each analysis of the model once,
# whatever it writes. With AUTOSHARD_STEP_COUNTS=1 the CLI prints, on stderr,
# one "step_count NAME N" line per costly step (base/step_counts.h); this
# runs the bundled squeezenet onto 4 IPUs once per output kind, and once with
# all of them, and checks each count.
# Usage: tests/step_counts_cli_test.sh AUTOSHARD_BINARY SOURCE_DIR
# Writes only to a temporary folder. Prints "N passed, M failed".
set -u
BIN=$1
SRC=$2
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MODEL="$SRC/models/squeezenet1_1.onnx"

# count NAME: the last run's count of step NAME.
count() { awk -v n="$1" '$1 == "step_count" && $2 == n { print $3 }' "$TMP/err"; }
# counted WHAT NAME WANT: the last run counted step NAME WANT times.
counted() {
  local got
  got=$(count "$2")
  if [ "$got" = "$3" ]; then ok; else bad "$1: $2 is '$got', want $3"; fi
}
# once WHAT: every analysis of the last run was computed once.
once() {
  for step in node_namings dag_builds onnx_inferences constant_masks \
      profile_loads device_models; do
    counted "$1" "$step" 1
  done
  # --batch-size 1 fixes squeezenet's free batch dim: its Flatten, whose
  # recorded output type names `batch`, is inferred again on its own
  # (docs/architecture.md), once; and the options' dims are checked against
  # every op (graph/dim_conflicts.h) once, finding no conflict.
  counted "$1" node_reinferences 1
  counted "$1" dim_checks 1
}

run_kind() {  # WHAT ARGS...: shard squeezenet onto 4 IPUs with ARGS
  local what=$1
  shift
  rm -rf "$TMP/out_dir"
  mkdir -p "$TMP/out_dir"
  expect 0 "$what" -- env AUTOSHARD_STEP_COUNTS=1 "$BIN" shard "$MODEL" \
    --num-ipus 4 --batch-size 1 -q "$@"
}

run_kind "-o" -o "$TMP/out_dir/m.onnx"
once "-o"
counted "-o" stage_inferences 0
run_kind "--plan" --plan "$TMP/out_dir/plan.json"
once "--plan"
run_kind "--sharding-config" --sharding-config "$TMP/out_dir/s.yaml"
once "--sharding-config"
run_kind "--report json" --report json
once "--report json"
run_kind "--html" --html "$TMP/out_dir/r.html"
once "--html"
run_kind "--graph" --graph "$TMP/out_dir/g.dot"
once "--graph"
run_kind "--split-dir" -o "$TMP/out_dir/m.onnx" --split-dir "$TMP/out_dir/stages"
once "--split-dir"
# Each of the 4 stage models is checked by ONNX's strict inference once.
counted "--split-dir" stage_inferences 4
run_kind "all" -o "$TMP/out_dir/m.onnx" --plan "$TMP/out_dir/plan.json" \
  --sharding-config "$TMP/out_dir/s.yaml" --split-dir "$TMP/out_dir/stages" \
  --html "$TMP/out_dir/r.html" --graph "$TMP/out_dir/g.dot"
once "all"
counted "all" stage_inferences 4
# Without the variable nothing is printed.
expect 0 "no counts" -- "$BIN" shard "$MODEL" --num-ipus 4 --batch-size 1 -q \
  -o "$TMP/out_dir/m.onnx"
lacks "$TMP/err" "step_count" "no counts"
finish
