#!/usr/bin/env bash
# Big models at the speed of the disk (issue 27): the time and peak memory of
# `autoshard shard -n 4 -o`, of `shard -n 4 -o --split-dir` (the per-stage
# models too) and of `shard -n 4 --report json` (no model written) on
# inline-weight models, side by side with `cp` of the file and
# Python's onnx.load + one attribute on every node + onnx.save. Medians over
# RUNS runs (default 5), peak RSS from /usr/bin/time -v, warm page cache
# (every command reads the same file; cp runs first).
#
# Usage: bench/model_io_bench.sh [MODEL.onnx...]
#   Default models: GPT-2-shaped with 12, 24 and 36 layers (652 MB, 993 MB,
#   1.33 GB), made by bench/make_gpt2_model.py under $BENCH_DIR
#   (/tmp/autoshard_bench) if missing.
#   BIN: the autoshard to measure (build/autoshard); BEFORE: an older one to
#   compare with (e.g. /work/main/build/autoshard), optional.
# Checks (issue 27's targets), printed per model:
#   shard -o <= 1.5 x (cp + planning), where planning is --report json's time
#   (shard fsyncs its output before the rename, cp does not: "cp+sync" is cp
#   followed by sync(1) of the copy, for comparison);
#   shard -o <= 0.5 x Python; --report json <= 0.25 x Python;
#   peak RSS of shard -o, and of shard -o --split-dir, <= 25% of the file +
#   100 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
BIN=${BIN:-build/autoshard}
BEFORE=${BEFORE:-}
BENCH_DIR=${BENCH_DIR:-/tmp/autoshard_bench}
mkdir -p "$BENCH_DIR"
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  for layers in 12 24 36; do
    m="$BENCH_DIR/gpt2_${layers}.onnx"
    [ -f "$m" ] || /usr/bin/python3 bench/make_gpt2_model.py "$m" "$layers"
    models+=("$m")
  done
fi
out="$BENCH_DIR/out"
mkdir -p "$out"

# Runs "$@" RUNS times; prints "median_seconds median_peak_rss_MB".
measure() {
  local i s=() r=()
  for ((i = 0; i < RUNS; i++)); do
    rm -f "$out"/*.onnx
    /usr/bin/time -f '%e %M' -o "$out/time" "$@" >/dev/null 2>"$out/stderr" ||
      { echo "failed: $* ($(tail -1 "$out/stderr"))" >&2; exit 1; }
    read -r sec kb <"$out/time"
    s+=("$sec")
    r+=("$kb")
  done
  printf '%s %s\n' \
    "$(printf '%s\n' "${s[@]}" | sort -g | sed -n "$(((RUNS + 1) / 2))p")" \
    "$(printf '%s\n' "${r[@]}" | sort -g | sed -n "$(((RUNS + 1) / 2))p" | awk '{printf "%.0f", $1 / 1024}')"
}

py_save='import onnx, sys
m = onnx.load(sys.argv[1])
for n in m.graph.node:
    n.attribute.append(onnx.helper.make_attribute("__ipu_number", 0))
onnx.save(m, sys.argv[2])'

printf '%-14s %8s %14s %14s %14s %14s %14s %14s' model MB "cp s/MB" "cp+sync s" "python s/MB" "-o s/MB" "split s/MB" "json s/MB"
[ -n "$BEFORE" ] && printf ' %16s %16s' "before -o s/MB" "before json"
printf '\n'
fails=0
for m in "${models[@]}"; do
  mb=$(($(stat -L -c %s "$m") / 1000000))
  read -r cp_s cp_r < <(measure cp "$m" "$out/cp.onnx")
  read -r cs_s cs_r < <(measure sh -c 'cp "$1" "$2" && sync "$2"' cp_sync "$m" "$out/cs.onnx")
  read -r py_s py_r < <(measure /usr/bin/python3 -c "$py_save" "$m" "$out/py.onnx")
  read -r o_s o_r < <(measure "$BIN" shard "$m" -n 4 -q -o "$out/a.onnx")
  read -r d_s d_r < <(measure "$BIN" shard "$m" -n 4 -q -o "$out/d.onnx" --split-dir "$out/split")
  read -r j_s j_r < <(measure "$BIN" shard "$m" -n 4 -q --report json)
  printf '%-14s %8s %14s %14s %14s %14s %14s %14s' "$(basename "$m" .onnx)" "$mb" \
    "$cp_s/$cp_r" "$cs_s" "$py_s/$py_r" "$o_s/$o_r" "$d_s/$d_r" "$j_s/$j_r"
  if [ -n "$BEFORE" ]; then
    read -r bo_s bo_r < <(measure "$BEFORE" shard "$m" -n 4 -q -o "$out/b.onnx")
    read -r bj_s bj_r < <(measure "$BEFORE" shard "$m" -n 4 -q --report json -o "$out/bj.onnx")
    printf ' %16s %16s' "$bo_s/$bo_r" "$bj_s/$bj_r"
  fi
  printf '\n'
  check() {  # name, condition for awk
    if awk "BEGIN { exit !($2) }"; then echo "  ok   $1"; else echo "  FAIL $1"; fails=$((fails + 1)); fi
  }
  check "-o $o_s s <= 1.5 x (cp $cp_s s + planning $j_s s)" "$o_s <= 1.5 * ($cp_s + $j_s)"
  check "-o $o_s s <= 1.5 x (cp+sync $cs_s s + planning $j_s s)" "$o_s <= 1.5 * ($cs_s + $j_s)"
  check "-o $o_s s <= 0.5 x Python $py_s s" "$o_s <= 0.5 * $py_s"
  check "--report json $j_s s <= 0.25 x Python $py_s s" "$j_s <= 0.25 * $py_s"
  check "-o peak RSS $o_r MB <= 25% of $mb MB + 100 MB" "$o_r <= 0.25 * $mb + 100"
  check "-o --split-dir peak RSS $d_r MB <= 25% of $mb MB + 100 MB" "$d_r <= 0.25 * $mb + 100"
done
rm -rf "$out"
[ "$fails" -eq 0 ]
