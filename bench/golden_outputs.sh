#!/usr/bin/env bash
# Records every output of `shard` and `inspect --json` over a corpus, for a
# byte-for-byte comparison of two builds (a refactoring must not change them):
#   bench/golden_outputs.sh BINARY OUT_DIR [MODELS_DIR]
# then `diff -r OLD_DIR NEW_DIR`. For each model (every *.onnx below
# MODELS_DIR, default /work/shared/models, and models/squeezenet1_1.onnx):
# shard at 2 and 4 IPUs with the default strategy, and at 4 with raw, search,
# optimal and auto, each with -o, --sharding-config, --plan, --split-dir and
# the text report (stdout), stderr and the exit code; inspect --json.
# Timing fields (planning, search, strategy and bound seconds, "in S s|ms|us") are
# replaced by "T" so that only behaviour is compared.
set -uo pipefail
bin=$(realpath "$1")
out=$2
models_dir=${3:-/work/shared/models}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(realpath "$out")
untime() {  # FILE...: timing fields to T
  sed -i -E \
    -e 's/"(planning_s|planningS|seconds|bound_seconds)": [0-9.e+-]+/"\1": T/g' \
    -e 's/(planning_s|seconds|time)( *[:=] *)[0-9.e+-]+/\1\2T/g' \
    -e 's/in [0-9.]+ (s|ms|us)\b/in T \1/g' \
    -e 's/[0-9.]+ s planning/T s planning/g' "$@"
}
run() {  # NAME ARGS...: one shard run into $out/NAME
  local name=$1; shift
  local d="$out/$name"
  mkdir -p "$d"
  (cd "$d" && "$bin" shard "$@" -o "$d/model.sharded.onnx" \
     --sharding-config "$d/sharding.yaml" --plan "$d/plan.json" \
     --split-dir "$d/stages" >"$d/report.txt" 2>"$d/stderr.txt"
   echo $? >"$d/exit_code")
  # The report and stderr name the output folder: make them relative.
  sed -i "s#$d#OUT#g" "$d/report.txt" "$d/stderr.txt"
  [ -f "$d/plan.json" ] && sed -i "s#$d#OUT#g" "$d/plan.json"
  [ -f "$d/stages/manifest.json" ] && sed -i "s#$d#OUT#g" "$d/stages/manifest.json"
  untime "$d/report.txt" "$d/stderr.txt" $( [ -f "$d/plan.json" ] && echo "$d/plan.json")
}
mapfile -t models < <(find "$models_dir" -name '*.onnx' | sort; echo "$repo/models/squeezenet1_1.onnx")
for m in "${models[@]}"; do
  name=$(basename "$(dirname "$m")")_$(basename "$m" .onnx)
  for k in 2 4; do run "$name/ipus$k" "$m" --num-ipus "$k"; done
  for s in raw search optimal auto; do run "$name/ipus4_$s" "$m" --num-ipus 4 --strategy "$s"; done
  mkdir -p "$out/$name/inspect"
  "$bin" inspect "$m" --json >"$out/$name/inspect/inspect.json" 2>"$out/$name/inspect/stderr.txt"
  echo $? >"$out/$name/inspect/exit_code"
  untime "$out/$name/inspect/inspect.json" "$out/$name/inspect/stderr.txt"
done
