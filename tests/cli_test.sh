#!/usr/bin/env bash
# End-to-end tests of the autoshard CLI: outputs, exit codes and bad input.
# Usage: tests/cli_test.sh AUTOSHARD_BINARY SOURCE_DIR [FAKE_COMPILER]
# Writes only to a temporary folder. Prints "N passed, M failed".
set -u
BIN=$1
SRC=$2
FAKE=${3:-}
MODEL=$SRC/models/squeezenet1_1.onnx
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# autoshard's own temporary folders (compile candidates) go to a folder of
# this test's, so the check that none is left sees no other test's.
mkdir -p "$TMP/tmpdir"
export TMPDIR="$TMP/tmpdir"

cp "$MODEL" "$TMP/model.onnx"
before=$(sha256sum "$TMP/model.onnx")

# The main job: 4 IPUs, all outputs.
expect 0 "shard 4 IPUs" -- "$BIN" shard "$TMP/model.onnx" --num-ipus 4 \
  --sharding-config "$TMP/s.yaml" --plan "$TMP/plan.json"
[ ! -e "$TMP/model.sharded.onnx" ] && ok || bad "no model written without -o (issue 27)"
stdout_has "no annotated model written (-o FILE writes it)" "the report says no model was written"
[ -s "$TMP/s.yaml" ] && ok || bad "sharding config written"
grep -q '"num_ipus": 4' "$TMP/plan.json" && ok || bad "plan JSON has num_ipus 4"
grep -qE '^3 +[0-9]+' "$TMP/out" && ok || bad "report has a row for IPU 3"
[ "$(sha256sum "$TMP/model.onnx")" = "$before" ] && ok || bad "input unchanged"
# Issue 33: the facts are fp16 runs on one IPU; this plan is fp32 on 4, and
# the report and the plan say so.
stdout_has "outside what the calibration checked: fp32 (the facts: fp16)" "report names the conditions no fact checked"
grep -q '"4 IPUs (the facts ran on 1: inter-IPU copies unchecked)"' "$TMP/plan.json" && ok || bad "plan JSON lists calibration_outside"

# Assumed shapes in plain sight (issue 16 point 3): SqueezeNet's input is
# [batch, 3, 224, 224]; without an option batch is 1, and the report says so.
stdout_has "shapes: assumed: batch=1 (not the model's own; set them, e.g. --dim batch=1)" "report names the assumed dim"
/usr/bin/python3 -c 'import json, sys; a = json.load(open(sys.argv[1]))["assumptions"]; sys.exit(0 if [(x["tensor"], x["dim"], x["dim_name"], x["value"]) for x in a] == [("input", 0, "batch", 1)] else 1)' "$TMP/plan.json" && ok || bad "plan JSON lists input[0] 'batch' = 1 as assumed"
expect 0 "--report json" -- "$BIN" shard "$TMP/model.onnx" -n 2 -o "$TMP/q.onnx" --report json
stdout_has '"dim_name": "batch"' "--report json lists the assumption"
# Plan without writing (issue 27 point 1): --report json alone writes no file.
mkdir "$TMP/plan_only" && cp "$MODEL" "$TMP/plan_only/m.onnx"
(cd "$TMP/plan_only" && "$BIN" shard m.onnx -n 2 --report json -q >"$TMP/out" 2>"$TMP/err") && ok || bad "--report json alone"
[ "$(ls "$TMP/plan_only")" = "m.onnx" ] && ok || bad "--report json alone wrote: $(ls "$TMP/plan_only")"
grep -q '"num_ipus": 2' "$TMP/out" && ok || bad "--report json alone printed the plan"
expect 0 "--dim batch=8" -- "$BIN" shard "$TMP/model.onnx" -n 2 --dim batch=8 -o "$TMP/dim8.onnx"
stdout_has "batch: 8" "--dim batch=8 sets the batch"
lacks "$TMP/out" "assumed:" "--dim leaves nothing assumed"
expect 2 "--dim of no input" -- "$BIN" shard "$TMP/model.onnx" -n 2 --dim seq_len=128 -o "$TMP/dim-bad.onnx"
stderr_has "--dim seq_len: no graph input has a dim named 'seq_len' (symbolic dims: batch)" "--dim names the dims there are"
expect 2 "--dim without a value" -- "$BIN" shard "$TMP/model.onnx" -n 2 --dim batch -o "$TMP/dim-bad.onnx"
stderr_has "--dim 'batch': expected NAME=VALUE" "--dim without a value"

# apply with the written config reproduces the plan's placements.
expect 0 "apply" -- "$BIN" apply "$TMP/model.onnx" --sharding-config "$TMP/s.yaml" \
  -o "$TMP/applied.onnx" --plan "$TMP/plan2.json"
# The plans' node placements ("node", "ipu", "pipeline_stage" lines after the
# sharding points) must be the same, and not empty.
placements() { sed -n '/"nodes": \[/,$p' "$1" | grep -E '"(node|ipu|pipeline_stage)"'; }
if [ "$(placements "$TMP/plan.json" | wc -l)" -gt 100 ] &&
   diff <(placements "$TMP/plan.json") <(placements "$TMP/plan2.json") >/dev/null; then
  ok
else
  bad "apply reproduces the shard placements"
fi

# Bad input: one clear line, exit 2, no output left behind.
expect 2 "missing file" -- "$BIN" shard "$TMP/nope.onnx" --num-ipus 2 -o "$TMP/o1.onnx"
stderr_has "$TMP/nope.onnx: no such file" "missing file"
printf 'not a model' >"$TMP/text.onnx"
expect 2 "not ONNX" -- "$BIN" shard "$TMP/text.onnx" --num-ipus 2 -o "$TMP/o2.onnx"
stderr_has "not an ONNX model" "not ONNX"
head -c 100000 "$MODEL" >"$TMP/trunc.onnx"
expect 2 "truncated" -- "$BIN" shard "$TMP/trunc.onnx" --num-ipus 2 -o "$TMP/o3.onnx"
stderr_has "$TMP/trunc.onnx: not an ONNX model" "truncated"
expect 2 "zero IPUs" -- "$BIN" shard "$TMP/model.onnx" --num-ipus 0 -o "$TMP/o4.onnx"
stderr_has "at least 1 or auto, got '0'" "zero IPUs"
expect 2 "IPUs not a number" -- "$BIN" shard "$TMP/model.onnx" --num-ipus two -o "$TMP/o4.onnx"
stderr_has "at least 1 or auto, got 'two'" "IPUs not a number"
expect 2 "more IPUs than nodes" -- "$BIN" shard "$TMP/model.onnx" --num-ipus 1000 -o "$TMP/o5.onnx"
stderr_has "every IPU needs at least one node" "more IPUs than nodes"
expect 2 "unwritable output" -- "$BIN" shard "$TMP/model.onnx" --num-ipus 2 -o "$TMP/no/dir/o.onnx"
stderr_has "does not exist" "unwritable output"
expect 2 "output is the input" -- "$BIN" shard "$TMP/model.onnx" --num-ipus 2 -o "$TMP/model.onnx"
stderr_has "refusing to overwrite" "output is the input"
[ "$(sha256sum "$TMP/model.onnx")" = "$before" ] && ok || bad "input unchanged after refusals"
printf -- '- {node: no_such_node, device: 0, stage: 0}\n' >"$TMP/bad.yaml"
expect 2 "unknown node in YAML" -- "$BIN" apply "$TMP/model.onnx" --sharding-config "$TMP/bad.yaml" -o "$TMP/o6.onnx"
stderr_has "no_such_node" "unknown node in YAML"
expect 2 "bad --input-shape" -- "$BIN" shard "$TMP/model.onnx" --num-ipus 2 --input-shape "nope:1,2" -o "$TMP/o7.onnx"
stderr_has "'nope', which is not a graph input" "bad --input-shape"
expect 2 "unknown flag" -- "$BIN" shard "$TMP/model.onnx" --num-ipus 2 --frobnicate
for f in o1 o2 o3 o4 o5 o6 o7; do
  [ -e "$TMP/$f.onnx" ] && bad "no output left for $f" || ok
done
leftovers=$(find "$TMP" -name '.autoshard_tmp*' | wc -l)
[ "$leftovers" -eq 0 ] && ok || bad "no temporary files left"

# Outputs never clash with each other or with an input, never replace a
# non-regular file, and an empty name is an error.
expect 2 "two outputs, one file" -- "$BIN" shard "$TMP/model.onnx" -n 2 -o "$TMP/same.onnx" --plan "$TMP/same.onnx"
stderr_has "named for two outputs" "two outputs, one file"
expect 2 "apply over its own config" -- "$BIN" apply "$TMP/model.onnx" --sharding-config "$TMP/s.yaml" -o "$TMP/s.yaml"
stderr_has "is an input" "apply over its own config"
grep -q "node:" "$TMP/s.yaml" && ok || bad "config left intact"
mkfifo "$TMP/fifo"
expect 2 "output is a FIFO" -- "$BIN" shard "$TMP/model.onnx" -n 2 -o "$TMP/fifo"
stderr_has "not a regular file" "output is a FIFO"
[ -p "$TMP/fifo" ] && ok || bad "FIFO left in place"
expect 2 "empty output name" -- "$BIN" shard "$TMP/model.onnx" -n 2 -o ""
stderr_has "output path is empty" "empty output name"
expect 2 "batch size -1" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size -1 -o "$TMP/o9.onnx"
stderr_has "--batch-size must be at least 1, got -1" "batch size -1"
expect 2 "batch size 0" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 0 -o "$TMP/o9.onnx"
stderr_has "--batch-size must be at least 1, got 0" "batch size 0"
expect 0 "--input-shape before the model" -- "$BIN" shard --input-shape input:1,3,224,224 "$TMP/model.onnx" -n 2 -o "$TMP/o10.onnx" -q
printf '[]\n' >"$TMP/empty.yaml"
expect 0 "empty config: one IPU" -- "$BIN" apply "$TMP/model.onnx" --sharding-config "$TMP/empty.yaml" -o "$TMP/one-ipu.onnx"
stderr_has "has no points: every node runs on IPU 0" "empty config"
# A 1-IPU plan writes an empty config, and apply reproduces it.
expect 0 "one IPU" -- "$BIN" shard "$TMP/model.onnx" -n 1 -o "$TMP/one.onnx" --sharding-config "$TMP/one.yaml" --plan "$TMP/one.json"
grep -q '"num_ipus": 1' "$TMP/one.json" && ok || bad "1-IPU plan"
expect 0 "apply the 1-IPU config" -- "$BIN" apply "$TMP/model.onnx" --sharding-config "$TMP/one.yaml" -o "$TMP/one-applied.onnx" -q
grep -m1 'node:' "$TMP/s.yaml" | sed 's/device: 0, stage: 0/device: 2, stage: 2/' >"$TMP/gap.yaml"
expect 2 "IPU gaps" -- "$BIN" apply "$TMP/model.onnx" --sharding-config "$TMP/gap.yaml" -o "$TMP/o13.onnx"
stderr_has "get no nodes" "IPU gaps"
expect 2 "missing config" -- "$BIN" apply "$TMP/model.onnx" --sharding-config "$TMP/none.yaml" -o "$TMP/o14.onnx"
stderr_has "none.yaml: no such file" "missing config"
expect 2 "usage error" -- "$BIN" shard "$TMP/model.onnx" --num-ipus two
stderr_has "autoshard: error:" "usage error"
for f in o9 o11 o13 o14 same; do
  [ -e "$TMP/$f.onnx" ] && bad "no output left for $f" || ok
done

# Device profiles, the memory model's verdict, inspect.
cat >"$TMP/tiny.textproto" <<'EOT'
name: "tiny"
tiles_per_ipu: 16
bytes_per_tile: 65536
peak_fp16_flops_per_s: 1e12
peak_fp32_flops_per_s: 0.25e12
link_bytes_per_s: 1e10
available_memory_proportion: 0.6
op_overhead_s: 2e-6
grain_bytes: 64
EOT
expect 3 "does not fit on a tiny chip" -- "$BIN" shard "$TMP/model.onnx" -n 2 --device "$TMP/tiny.textproto" -o "$TMP/tiny.onnx"
# 16 tiles x 65,536 bytes = 1,048,576 an IPU; SqueezeNet's 4,941,984 bytes
# of weights need ceil(4.71) = 5 IPUs: the reason says so, and what would fit.
stderr_has "the plan does not fit tiny: the weights (4.94 MB) need at least 5 IPUs (an IPU holds 1.05 MB); the plan has 2; would fit: --num-ipus 5 or more" "the weights' reason"
[ ! -e "$TMP/tiny.onnx" ] && ok || bad "no model written when the plan does not fit"
stderr_has "(no model written: --write-anyway writes it; exit code 3)" "the error says no model was written"
grep -q "^does not fit: " "$TMP/out" && ok || bad "report says why it does not fit"
grep -q "^  fullest tile: Out of memory on tile" "$TMP/out" && ok || bad "report has the compiler-style line"
grep -q "^would fit: " "$TMP/out" && ok || bad "report says what would fit"
expect 3 "--write-anyway" -- "$BIN" shard "$TMP/model.onnx" -n 2 --device "$TMP/tiny.textproto" -o "$TMP/tiny.onnx" --write-anyway
[ -f "$TMP/tiny.onnx" ] && ok || bad "--write-anyway writes the model that does not fit"
expect 0 "fits on ipu21" -- "$BIN" shard "$TMP/model.onnx" -n 2 --device ipu21 --precision fp16 -o "$TMP/bow.onnx"
grep -qE "^1 .* yes " "$TMP/out" && ok || bad "report says IPU 1 fits"
grep -q "^bound: no split is faster than .* (certified by .*; gap " "$TMP/out" && ok || bad "report has the best proven bound"
lacks "$TMP/out" "cheap lower bound" "the cheap bound only with -v"
expect 2 "unknown device" -- "$BIN" shard "$TMP/model.onnx" -n 2 --device ipu9 -o "$TMP/o15.onnx"
stderr_has "neither a built-in profile" "unknown device"
expect 2 "bad memory proportion" -- "$BIN" shard "$TMP/model.onnx" -n 2 --available-memory-proportion 2 -o "$TMP/o16.onnx"
stderr_has "must be in (0, 1]" "bad memory proportion"
expect 0 "inspect" -- "$BIN" inspect "$TMP/model.onnx" --batch-size 1
grep -q "fewest IPUs: 1 (planned as shard --num-ipus auto plans: strategy auto)" "$TMP/out" && ok || bad "inspect: fewest IPUs"
grep -qE "^Conv +26 " "$TMP/out" && ok || bad "inspect: 26 Conv nodes"
expect 0 "inspect --json" -- "$BIN" inspect "$TMP/model.onnx" --batch-size 1 --json
grep -q '"parameters": 1235496' "$TMP/out" && ok || bad "inspect --json: SqueezeNet 1.1's 1,235,496 parameters"
# JSON numbers are numbers (issue 16 point 2): a consumer comparing figures
# must not get "50903" > 60000 as text. No string in these files is an integer.
cp "$TMP/out" "$TMP/inspect.json"
json_has_no_integer_strings() {
  /usr/bin/python3 -c '
import json, re, sys
def walk(v, path):
    if isinstance(v, dict):
        for k, x in v.items(): yield from walk(x, path + "." + k)
    elif isinstance(v, list):
        for x in v: yield from walk(x, path + "[]")
    elif isinstance(v, str) and re.fullmatch(r"-?[0-9]+", v):
        yield path + " = " + repr(v)
bad = list(walk(json.load(open(sys.argv[1])), ""))
print("\n".join(bad[:5]), file=sys.stderr)
sys.exit(1 if bad else 0)' "$1"
}
json_has_no_integer_strings "$TMP/inspect.json" && ok || bad "inspect --json: integers are JSON numbers"
json_has_no_integer_strings "$TMP/plan.json" && ok || bad "--plan: integers are JSON numbers"
/usr/bin/python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["ipus"][0]["memory"]; sys.exit(0 if isinstance(m["max_tile_bytes"], int) and m["max_tile_bytes"] > 0 else 1)' "$TMP/plan.json" && ok || bad "--plan: max_tile_bytes is a positive JSON number"

# The search: on ipu2 with 18,142-byte tiles (80% of the raw 2-IPU split's
# fullest tile, 22,678 B) raw overflows and one move fits.
printf 'base: "ipu2"\nbytes_per_tile: 18142\n' >"$TMP/small.textproto"
expect 3 "raw overflows the small ipu2" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 1 --device "$TMP/small.textproto" --strategy raw -o "$TMP/raw-small.onnx"
expect 0 "optimal fits the small ipu2" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 1 --device "$TMP/small.textproto" --strategy optimal -o "$TMP/optimal-small.onnx"
stdout_has "optimal: the fastest fitting slicing of" "optimal report line"
expect 0 "auto fits the small ipu2" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 1 --device "$TMP/small.textproto" -o "$TMP/auto-small.onnx" --plan "$TMP/auto.json"
stdout_has "strategy: auto" "auto is the default strategy"
stdout_has "auto: bottlenecks raw" "auto report line"
grep -q '"chosen": true' "$TMP/auto.json" && ok || bad "auto plan marks the chosen split"
# --num-ipus auto: SqueezeNet fits one ipu2, and needs 2 of the small ones.
expect 0 "num-ipus auto" -- "$BIN" shard "$TMP/model.onnx" -n auto --batch-size 1 -o "$TMP/auto-n.onnx"
stdout_has "IPUs: 1 " "num-ipus auto picks 1 IPU"
stdout_has "--num-ipus auto: IPU counts tried: 1" "num-ipus auto report line"
expect 0 "num-ipus auto, small ipu2" -- "$BIN" shard "$TMP/model.onnx" -n auto --batch-size 1 --device "$TMP/small.textproto" -o "$TMP/auto-n2.onnx"
stdout_has "IPUs: 2 " "num-ipus auto picks 2 small IPUs"
stdout_has "IPU counts tried: 1, 2" "num-ipus auto tried 1 then 2"
expect 0 "search fits the small ipu2" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 1 --device "$TMP/small.textproto" --strategy search -o "$TMP/search-small.onnx" --plan "$TMP/search.json"
grep -q '"fits": true' "$TMP/search.json" && ok || bad "search plan fits"
expect 0 "search --optimal-perf" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 1 --device "$TMP/small.textproto" --strategy search --optimal-perf -o "$TMP/opt-small.onnx"
grep -q "best bottleneck" "$TMP/out" && ok || bad "report says optimal-perf"

# A compiler as the judge (tests/fake_compiler.cc: out of memory on tile 17
# while IPU 0 holds more than $FAKE_LIMIT nodes). The raw 2-IPU split puts 54
# of SqueezeNet's 65 nodes on IPU 0; one move leaves 40.
if [ -n "$FAKE" ]; then
  FAKE_LIMIT=40 expect 0 "search judged by a compiler" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 1 \
    --strategy search --compile-cmd "$FAKE {model}" --jobs 2 -o "$TMP/compiled.onnx" --plan "$TMP/compiled.json"
  grep -q '"raw_max_tile_bytes": 714000' "$TMP/compiled.json" && ok || bad "the compiler's 714,000 bytes on tile 17 for the raw split"
  grep -q '"fits": true' "$TMP/compiled.json" && ok || bad "the compiler accepted the moved split"
  FAKE_MODE=variable expect 3 "compiler failing without a tile" -- "$BIN" shard "$TMP/model.onnx" -n 2 \
    --strategy search --compile-cmd "$FAKE {model}" -o "$TMP/variable.onnx"
  stderr_has "Cannot fit all variable data" "compiler failing without a tile"
  expect 2 "compile command not found" -- "$BIN" shard "$TMP/model.onnx" -n 2 --strategy search \
    --compile-cmd "no_such_compiler_xyz {model}" -o "$TMP/nocc.onnx"
  stderr_has "cannot be run (exit 127)" "compile command not found"
  TMPDIR="$TMP/no_such_dir" expect 2 "no temporary folder" -- "$BIN" shard "$TMP/model.onnx" -n 2 \
    --strategy search --compile-cmd "$FAKE {model}" -o "$TMP/notmp.onnx"
  stderr_has "check TMPDIR" "no temporary folder"
  # --compile-cmd with auto (the default strategy) compiles auto's chosen
  # split; when the compiler refuses it, the next candidate, best first. This
  # compiler refuses its first compile and accepts the rest.
  cat >"$TMP/cc_once.sh" <<'EOF'
#!/bin/sh
n=$(($(cat "$CC_COUNT" 2>/dev/null || echo 0) + 1))
echo "$n" >"$CC_COUNT"
[ "$n" -ge 2 ] && exit 0
echo "Out of memory on tile 17: 700000 bytes used but tiles only have 638976 bytes of memory"
exit 1
EOF
  chmod +x "$TMP/cc_once.sh"
  expect 0 "auto without a compiler" -- "$BIN" shard "$TMP/model.onnx" -n 2 \
    --batch-size 1 -o "$TMP/auto0.onnx" --plan "$TMP/auto0.json"
  CC_COUNT=$TMP/cc_count expect 0 "auto with --compile-cmd" -- "$BIN" shard "$TMP/model.onnx" -n 2 \
    --batch-size 1 --compile-cmd "$TMP/cc_once.sh {model}" -o "$TMP/auto-cc.onnx" --plan "$TMP/auto-cc.json"
  [ "$(cat "$TMP/cc_count")" = 2 ] && ok || bad "two compiles: the chosen split, then the next"
  stderr_has "the compile command refused 1 split before accepting" "the refused split is a warning"
  stderr_has "out of memory on tile 17 (700000 bytes)" "the refusal says the compiler's tile"
  chosen() { python3 -c 'import json,sys; print([c["strategy"] for c in json.load(open(sys.argv[1]))["candidates"] if c.get("chosen")])' "$1"; }
  [ "$(chosen "$TMP/auto0.json")" != "$(chosen "$TMP/auto-cc.json")" ] && ok ||
    bad "the plan is the next candidate's: $(chosen "$TMP/auto0.json") then $(chosen "$TMP/auto-cc.json")"
  # A compiler that refuses every split: exit 3, the reason, no model.
  expect 3 "optimal, its split refused" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 1 \
    --strategy optimal --compile-cmd "false {model}" -o "$TMP/auto-none.onnx"
  stderr_has "the compile command accepted no split: it refused the split (optimal: " "optimal: its one split compiled"
  [ ! -e "$TMP/auto-none.onnx" ] && ok || bad "no model when the compiler refuses every split"
  # A compiler that accepts everything wins over the model (18,142-byte tiles
  # overflow in the model): exit 0, the disagreement is a warning.
  expect 0 "the compiler's word wins" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 1 \
    --device "$TMP/small.textproto" --strategy search --compile-cmd "true {model}" -o "$TMP/cc-ok.onnx"
  stderr_has "disagrees with the compile command" "the compiler's word wins"
  # calibrate: the fake compiler plays an ipu2 whose tiles hold 30,000 fixed
  # bytes (ipu2: 2,074); calibrate finds them and writes a usable profile.
  printf 'base: "ipu2"\ntile_fixed_bytes: 30000\n' >"$TMP/hidden.textproto"
  expect 0 "calibrate" -- "$BIN" calibrate "$TMP/model.onnx" --batch-size 1 \
    --compile-cmd "FAKE_DEVICE=$TMP/hidden.textproto $FAKE {model}" -o "$TMP/calibrated.textproto"
  grep -qE '^tile_fixed_bytes: (2[7-9]|3[0-2])[0-9]{3}$' "$TMP/calibrated.textproto" && ok ||
    bad "calibrate recovers 30,000 fixed bytes per tile within 10%: $(grep tile_fixed "$TMP/calibrated.textproto")"
  stdout_has "fitted: code and codelet bytes x" "calibrate prints the fit"
  expect 0 "shard with the calibrated profile" -- "$BIN" shard "$TMP/model.onnx" -n 1 --batch-size 1 \
    --device "$TMP/calibrated.textproto" -o "$TMP/calibrated.onnx"
  stdout_has "memory fitted by autoshard calibrate" "the report names the calibration"
  expect 2 "calibrate without a figure" -- "$BIN" calibrate "$TMP/model.onnx" --batch-size 1 \
    --compile-cmd "true {model}" -o "$TMP/none.textproto"
  stderr_has "nothing to fit" "calibrate without a figure"
  [ ! -e "$TMP/none.textproto" ] && ok || bad "no profile written when nothing was fitted"
  leftovers=$(find "$TMPDIR" -maxdepth 1 -name 'autoshard_compile_*' | wc -l)
  [ "$leftovers" -eq 0 ] && ok || bad "compile folders removed"
fi

# External data: the output elsewhere keeps valid references (a hard link
# here on ext4/tmpfs; a clone of the same bytes where the file system clones).
mkdir -p "$TMP/ext" "$TMP/extout"
if [ -n "${AUTOSHARD_CORPUS_DIR:-}" ] && [ -d "$AUTOSHARD_CORPUS_DIR/extdata_mobilenet_v2" ]; then
  cp "$AUTOSHARD_CORPUS_DIR/extdata_mobilenet_v2/"* "$TMP/ext/"
  expect 0 "external data" -- "$BIN" shard "$TMP/ext/model.onnx" --num-ipus 2 -o "$TMP/extout/m.onnx"
  { [ "$TMP/ext/model.onnx.data" -ef "$TMP/extout/model.onnx.data" ] || cmp -s "$TMP/ext/model.onnx.data" "$TMP/extout/model.onnx.data"; } && ok || bad "data shared"
  rm "$TMP/ext/model.onnx.data"
  expect 2 "missing external data" -- "$BIN" shard "$TMP/ext/model.onnx" --num-ipus 2 -o "$TMP/ext/o8.onnx"
  stderr_has "is missing" "missing external data"
fi

# The certified bound, and the problem file: written, solved again, refused
# when broken (issue 19).
expect 0 "write problem" -- "$BIN" shard "$TMP/model.onnx" --num-ipus 2 \
  -o "$TMP/o20.onnx" --write-problem "$TMP/p.json" --plan "$TMP/p20.json"
stdout_has "(certified by " "report has the certified bound"
grep -q '"certified_bound_s"' "$TMP/p20.json" && ok || bad "plan has the certified bound"
grep -q '"num_ipus": 2' "$TMP/p.json" && ok || bad "problem file has num_ipus"
expect 0 "solve" -- "$BIN" solve "$TMP/p.json" --plan "$TMP/solved.json"
stdout_has "(certified by " "solve prints the certified bound"
# shard's planner (issue 31): the same strategy and the same split.
/usr/bin/python3 -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); sys.exit(0 if a["strategy"] == b["strategy"] == "auto" and [n["ipu"] for n in a["nodes"]] == [n["ipu"] for n in b["nodes"]] else 1)' "$TMP/solved.json" "$TMP/p20.json" && ok || bad "solve gives shard's plan"
expect 0 "solve 4 IPUs, bound off" -- "$BIN" solve "$TMP/p.json" --num-ipus 4 --bound-seconds 0
stdout_has "by cheap" "bound off: the cheap bound"
expect 0 "solve -n auto, a strategy" -- "$BIN" solve "$TMP/p.json" -n auto --strategy optimal \
  --max-search-seconds 5 --max-ipus 4 --bound-seconds 0
stdout_has "strategy: optimal" "solve --strategy"
stdout_has "IPU counts tried: 1" "solve -n auto"
expect 2 "solve -n 0" -- "$BIN" solve "$TMP/p.json" -n 0
stderr_has "--num-ipus must be a count of at least 1 or auto" "solve -n 0"
# Pins (issue 31): the first node the free plan puts on IPU 1, pinned to IPU
# 0, runs there; a pin to an IPU the count does not have is refused naming it.
FIRST=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["nodes"][0]["name"])' "$TMP/p.json")
MOVED=$(/usr/bin/python3 -c 'import json, sys; print(next(n["node"] for n in json.load(open(sys.argv[1]))["nodes"] if n["ipu"] == 1))' "$TMP/solved.json")
expect 0 "solve --pin" -- "$BIN" solve "$TMP/p.json" --pin "$MOVED=0" --plan "$TMP/pinned.json"
/usr/bin/python3 -c 'import json, sys; sys.exit(0 if [n["ipu"] for n in json.load(open(sys.argv[1]))["nodes"] if n["node"] == sys.argv[2]] == [0] else 1)' "$TMP/pinned.json" "$MOVED" && ok || bad "solve --pin moves the node to IPU 0"
expect 2 "solve --pin to IPU 5 of 2" -- "$BIN" solve "$TMP/p.json" --pin "$FIRST=5"
stderr_has "may run only on IPU 5, none of the 2 IPUs" "pin out of range"
expect 2 "shard --pin unknown node" -- "$BIN" shard "$TMP/model.onnx" --num-ipus 2 \
  -o "$TMP/o22.onnx" --pin "no_such_node=0"
stderr_has "no node is named 'no_such_node'" "shard --pin unknown node"
printf '{"nodes": [{"name": "a"}], "tensors": [{"producer": 3}], "num_ipus": 1}' >"$TMP/bad.json"
expect 2 "bad problem" -- "$BIN" solve "$TMP/bad.json"
stderr_has "bad.json: tensor 0: producer 3 is not a node index" "bad problem"
expect 2 "not a problem" -- "$BIN" solve "$TMP/text.onnx"
expect 2 "negative bound seconds" -- "$BIN" shard "$TMP/model.onnx" --num-ipus 2 \
  -o "$TMP/o21.onnx" --bound-seconds -1

expect 0 "help" -- "$BIN" shard --help
grep -q "Examples" "$TMP/out" && ok || bad "--help shows examples"
expect 0 "version" -- "$BIN" --version

finish
