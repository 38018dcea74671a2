#!/usr/bin/env bash
# Issue 16 points 1, 3, 7 and 8, one check per kind of fault, exact text or
# JSON values: assumed shapes (--dim, static dims replaced, a constant that
# contradicts them), inspect planned as shard plans it, an annotated model
# evaluated (--keep-placement), plurals and small things.
# Usage: tests/ux_shapes_cli_test.sh AUTOSHARD_BINARY SOURCE_DIR ONNX_TEXT_TO_MODEL
# Writes only to a temporary folder. Prints "N passed, M failed".
set -u
BIN=$1
SRC=$2
TEXT2MODEL=$3
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
model() { "$TEXT2MODEL" "$TMP/$1.onnx" || bad "model $1 does not parse"; }
# json FILE EXPR: Python's json reads FILE and EXPR (of `j`) is true.
json() { /usr/bin/python3 -c "import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }

# A model exported at batch 1 that hard-codes it in a Reshape (n1), and one
# whose Reshape infers the batch (-1).
model fixed <<'M'
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (float[1,4] y) {
  s = Constant<value = int64[2] {1, 4}>()
  r = Reshape(x, s)
  y = Relu(r)
}
M
model free <<'M'
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4] x) => (float[1,4] y) {
  s = Constant<value = int64[2] {-1, 4}>()
  r = Reshape(x, s)
  y = Relu(r)
}
M
# Symbolic dims by name: x[N, seq_len], 4 x 4 floats of weight (64 B).
model symbolic <<'M'
<ir_version: 8, opset_import: ["" : 13]>
g (float[N,seq_len,4] x) => (float[N,seq_len,4] y) <float[4,4] w = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}> {
  m = MatMul(x, w)
  y = Relu(m)
}
M

# --- Point 3: assumed shapes in plain sight, --dim, static dims replaced.
expect 0 "no --dim: seq_len assumed" -- "$BIN" shard "$TMP/symbolic.onnx" -n 1 -o "$TMP/s1.onnx" --plan "$TMP/s1.json"
stdout_has "shapes: assumed: N=1, seq_len=1 (not the model's own; set them, e.g. --dim N=1 --dim seq_len=1)" "report header names the assumed dims"
json "$TMP/s1.json" '[(a["dim_name"], a["value"]) for a in j["assumptions"]] == [("N", 1), ("seq_len", 1)]' && ok || bad "plan JSON lists N=1, seq_len=1"
expect 0 "--dim seq_len=128 --dim N=2" -- "$BIN" shard "$TMP/symbolic.onnx" -n 1 --dim seq_len=128 --dim N=2 -o "$TMP/s2.onnx" --plan "$TMP/s2.json"
lacks "$TMP/out" "assumed:" "--dim leaves nothing assumed"
stdout_has "batch: 2" "--dim N=2 is the batch"
json "$TMP/s2.json" '"assumptions" not in j or j["assumptions"] == []' && ok || bad "plan JSON: no assumptions"
expect 2 "--dim of no input" -- "$BIN" shard "$TMP/symbolic.onnx" -n 1 --dim batch=8 -o "$TMP/s3.onnx"
stderr_has "--dim batch: no graph input has a dim named 'batch' (symbolic dims: N, seq_len)" "--dim names the dims there are"
expect 2 "--dim without a value" -- "$BIN" shard "$TMP/symbolic.onnx" -n 1 --dim N -o "$TMP/s3.onnx"
stderr_has "--dim 'N': expected NAME=VALUE" "--dim without a value"

# --batch-size replaces a static batch of 1 (it used to plan batch 1).
expect 0 "--batch-size 80 on a static batch" -- "$BIN" shard "$TMP/free.onnx" -n 1 --batch-size 80 -o "$TMP/f.onnx" --plan "$TMP/f.json"
stdout_has "batch: 80" "the report says batch 80"
stderr_has "the options replace static dims of the model (x[0] 1 -> 80); the shapes of the other tensors are inferred again" "the replaced dim is warned about"
json "$TMP/f.json" 'j["batch_size"] == 80' && ok || bad "plan JSON batch_size 80"
expect 0 "inspect --input-shape x:8,4" -- "$BIN" inspect "$TMP/free.onnx" --input-shape x:8,4
stdout_has "batch: 8 " "inspect shows the batch used"
stdout_has "  y     float32  [8,4]" "inspect: the output inferred again"
# The constant that hard-codes batch 1: one line naming the node, exit 2.
expect 2 "a Reshape that hard-codes batch 1" -- "$BIN" shard "$TMP/fixed.onnx" -n 1 --batch-size 80 -o "$TMP/x.onnx"
[ "$(cat "$TMP/err")" = "autoshard: error: $TMP/fixed.onnx: node 'n1' (Reshape) hard-codes the shape [1,4] (constant 's'), which contradicts its input 'x' [80,4] (320 elements)" ] && ok || bad "the contradiction in one line: $(cat "$TMP/err")"
[ ! -e "$TMP/x.onnx" ] && ok || bad "no output for the contradiction"

# --- Point 1: inspect answers with shard's planner, inputs and outputs first.
expect 0 "inspect" -- "$BIN" inspect "$TMP/symbolic.onnx" --nodes
stdout_has "fewest IPUs: 1 (planned as shard --num-ipus auto plans: strategy auto)" "inspect names the strategy"
stdout_has "inputs:
  x  float32  [1,1,4]" "inspect lists the inputs first"
stdout_has "assumed: N=1, seq_len=1" "inspect names the assumed dims"
grep -qE '^n0 +MatMul +32 FLOPs +88\.89% +64 B +\[1,1,4\] +-$' "$TMP/out" && ok || bad "inspect --nodes: MatMul's row (2 x 4 x 4 = 32 of 36 FLOPs)"
expect 0 "inspect --nodes-csv" -- "$BIN" inspect "$TMP/symbolic.onnx" --nodes-csv "$TMP/nodes.csv"
# MatMul [1,1,4] x [4,4]: 2 x 4 x 4 = 32 FLOPs; Relu: 4 elements, 4 FLOPs.
[ "$(cat "$TMP/nodes.csv")" = "name,op_type,flops,flops_percent,weight_bytes,output_shape,ipu,output_shapes,data_dependent
n0,MatMul,32,88.8889,64,1x1x4,,1x1x4,0
n1,Relu,4,11.1111,0,1x1x4,,1x1x4,0" ] && ok || bad "nodes.csv: $(cat "$TMP/nodes.csv")"
# A device whose tiles hold 16 bytes: nothing fits, inspect exits 3.
printf 'base: "ipu2"\nbytes_per_tile: 16\ngrain_bytes: 4\n' >"$TMP/tiny.textproto"
expect 3 "inspect: nothing fits" -- "$BIN" inspect "$TMP/symbolic.onnx" --device "$TMP/tiny.textproto" --json
json "$TMP/out" 'j.get("min_ipus", 0) == 0 and j["min_ipus_strategy"] == "auto"' && ok || bad "inspect --json: min_ipus 0"

# --- Point 7: an annotated model is evaluated with --keep-placement.
MODEL=$SRC/models/squeezenet1_1.onnx
expect 0 "shard 2 IPUs" -- "$BIN" shard "$MODEL" -n 2 --batch-size 1 -o "$TMP/sq2.onnx" --sharding-config "$TMP/sq2.yaml"
expect 0 "shard an annotated model" -- "$BIN" shard "$TMP/sq2.onnx" -n 4 --batch-size 1 -o "$TMP/sq4.onnx"
stderr_has "the model already carries __ipu_number on 65 of 65 nodes (2 IPUs, 2 pipeline stages): planned again; --keep-placement evaluates it instead" "re-planning an annotated model is warned about"
expect 0 "--keep-placement" -- "$BIN" shard "$TMP/sq2.onnx" -n 4 --batch-size 1 --keep-placement -o "$TMP/kept.onnx" --sharding-config "$TMP/kept.yaml"
stdout_has "IPUs: 2   strategy: keep-placement" "--keep-placement keeps 2 IPUs"
cmp -s "$TMP/sq2.yaml" "$TMP/kept.yaml" && ok || bad "--keep-placement: the same sharding points as the plan it keeps"
expect 2 "--keep-placement without annotations" -- "$BIN" shard "$MODEL" -n 2 --keep-placement -o "$TMP/k.onnx"
stderr_has "--keep-placement: no node has __ipu_number (plan it without --keep-placement)" "--keep-placement on a plain model"
expect 0 "inspect an annotated model" -- "$BIN" inspect "$TMP/sq2.onnx" --batch-size 1
stdout_has "placement in the model: __ipu_number on 65 of 65 nodes (2 IPUs, 2 pipeline stages): fits" "inspect reports the placement"

# --- Point 8: plurals, --jobs 0, FP16, the manifest's path, batch counts.
mkdir -p "$TMP/one" "$TMP/two"
cp "$TMP/symbolic.onnx" "$TMP/one/a.onnx"
expect 0 "a batch of 1 model" -- "$BIN" shard "$TMP/one" -n 1 --out-dir "$TMP/one-out"
stdout_has "1 model, 0 failed, 0 do not fit (outputs written)" "1 model"
cp "$TMP/symbolic.onnx" "$TMP/two/a.onnx"
cp "$TMP/free.onnx" "$TMP/two/b.onnx"
expect 3 "a batch that does not fit" -- "$BIN" shard "$TMP/two" -n 1 --device "$TMP/tiny.textproto" --out-dir "$TMP/two-out" --summary "$TMP/two.json"
stdout_has "2 models, 0 failed, 2 do not fit (no model written for them)" "does not fit is not failed"
json "$TMP/two.json" 'j["does_not_fit"] == 2 and j.get("failed", 0) == 0' && ok || bad "summary JSON: does_not_fit 2, failed 0"
expect 0 "wrote 1 file" -- "$BIN" shard "$TMP/symbolic.onnx" -n 1 -o "$TMP/v.onnx" -v
stderr_has "wrote 1 file " "-v: wrote 1 file"
expect 2 "--jobs 0" -- "$BIN" shard "$TMP/one" -n 1 --out-dir "$TMP/j0" --jobs 0
stderr_has "--jobs must be at least 1, got 0" "--jobs 0 refused"
expect 0 "--precision FP16" -- "$BIN" shard "$TMP/symbolic.onnx" -n 1 --precision FP16 -o "$TMP/h.onnx"
stdout_has "precision: fp16" "FP16 is fp16"
expect 0 "--split-dir" -- "$BIN" shard "$MODEL" -n 2 --batch-size 1 -o "$TMP/sp.onnx" --split-dir "$TMP/sp"
json "$TMP/sp/manifest.json" 'j["model"] == "../sp.onnx"' && ok || bad "manifest model relative to its folder: $(grep '"model"' "$TMP/sp/manifest.json")"

finish
