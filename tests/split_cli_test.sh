#!/usr/bin/env bash
# End-to-end tests of `autoshard split` and `shard --split-dir`: the folder's
# content, replacing an earlier split, and bad input (exit 2, one line on
# stderr, nothing left behind).
# Usage: tests/split_cli_test.sh AUTOSHARD_BINARY SOURCE_DIR ONNX_TEXT_TO_MODEL
# Writes only to a temporary folder. Prints "N passed, M failed".
set -u
BIN=$1
SRC=$2
TEXT2MODEL=$3
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# refused DESCRIPTION TEXT DIR -- COMMAND...: exit 2, exactly one stderr line
# containing TEXT, DIR not created, no temporary folder left.
refused() {
  local what=$1 text=$2 dir=$3
  shift 3
  expect 2 "$what" "$@"
  grep -qF -- "$text" "$TMP/err" && ok || { bad "$what: stderr lacks '$text'"; cat "$TMP/err"; }
  [ "$(wc -l <"$TMP/err")" -eq 1 ] && ok || bad "$what: stderr is not one line"
  [ ! -e "$dir" ] && ok || bad "$what: $dir left behind"
  [ -z "$(find "$TMP" -name '.autoshard_tmp*')" ] && ok || bad "$what: temporary files left"
}
# model NAME < TEXT: an ONNX-text model as $TMP/NAME.onnx.
# model NAME [--unshaped-output OUT]... < TEXT (see tests/onnx_text_to_model.cc).
model() {
  local name=$1
  shift
  "$TEXT2MODEL" "$TMP/$name.onnx" "$@" || bad "model $name does not parse"
}
# runs DESCRIPTION MODEL SPLIT_DIR [check_split.js options]: onnxruntime runs
# the chained stages as the model (skipped without onnxruntime-node).
ORT="$SRC/tests/ort"
runs() {
  local what=$1 m=$2 d=$3
  shift 3
  if ! command -v node >/dev/null || [ ! -d "$ORT/node_modules/onnxruntime-node" ]; then
    echo "skipped in onnxruntime ($what): run scripts/setup_ort.sh"
    return
  fi
  node "$ORT/check_split.js" "$m" "$d" "$@" >"$TMP/ort" 2>&1 && ok || { bad "$what: onnxruntime"; cat "$TMP/ort"; }
}

cp "$SRC/models/squeezenet1_1.onnx" "$TMP/sq.onnx"
before=$(sha256sum "$TMP/sq.onnx")

# shard --split-dir, then split on the annotated model: the same stages.
expect 0 "shard --split-dir" -- "$BIN" shard "$TMP/sq.onnx" -n 4 -o "$TMP/sq4.onnx" --split-dir "$TMP/s1"
for s in 0 1 2 3; do [ -f "$TMP/s1/stage_$s.onnx" ] && ok || bad "stage_$s.onnx written"; done
grep -q '"format": "autoshard-split"' "$TMP/s1/manifest.json" && ok || bad "manifest written"
grep -q '"source": "graph_input"' "$TMP/s1/manifest.json" && ok || bad "manifest names the graph input"
# Static dims are JSON numbers, symbolic ones strings (issue 16 point 2).
/usr/bin/python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); sys.exit(0 if m["inputs"][0]["dims"] == ["batch", 3, 224, 224] and m["stages"][0]["num_nodes"] > 0 else 1)' "$TMP/s1/manifest.json" && ok || bad "manifest: dims [\"batch\", 3, 224, 224], counts are numbers"
grep -q '"source": "2:' "$TMP/s1/manifest.json" && ok || bad "manifest names stage 2's outputs"
grep -q "s1 (4 stage models and manifest.json)" "$TMP/out" && ok || bad "report says what was written"
expect 0 "split" -- "$BIN" split "$TMP/sq4.onnx" --out-dir "$TMP/s2"
grep -qE "^stage 3 \(IPU 3\): stage_3.onnx" "$TMP/out" && ok || bad "split prints a line per stage"
for s in 0 1 2 3; do
  cmp -s "$TMP/s1/stage_$s.onnx" "$TMP/s2/stage_$s.onnx" && ok || bad "split reproduces shard's stage_$s.onnx"
done
# Again into the same folder: the earlier split is replaced as a whole.
expect 0 "split over an earlier split" -- "$BIN" split "$TMP/sq4.onnx" --out-dir "$TMP/s2" -q
[ -z "$(cat "$TMP/out")" ] && ok || bad "-q prints nothing"
[ "$(ls "$TMP/s2" | wc -l)" -eq 5 ] && ok || bad "replaced folder holds 4 stages and the manifest"
[ "$(sha256sum "$TMP/sq.onnx")" = "$before" ] && ok || bad "input unchanged"
mkdir "$TMP/empty"
expect 0 "split into an empty folder" -- "$BIN" split "$TMP/sq4.onnx" --out-dir "$TMP/empty" -q

# A hand-annotated model with an If whose branch reads a tensor of stage 0.
model hand <<'EOT'
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x, bool c) => (float[2] y) {
  t = Relu <__ipu_number = 0, __pipeline_stage = 0> (x)
  y = If <__ipu_number = 1, __pipeline_stage = 1,
    then_branch = g1 () => (float[2] o1) { o1 = Add(t, t) },
    else_branch = g2 () => (float[2] o2) { o2 = Neg(t) }> (c)
}
EOT
expect 0 "split a hand-annotated If" -- "$BIN" split "$TMP/hand.onnx" --out-dir "$TMP/hand_split"
grep -q '"source": "0:t"' "$TMP/hand_split/manifest.json" && ok || bad "the If's outer read of t comes from stage 0"

# A stage of constants only (writers/split/split.h, Note [A stage of constants]):
# stage 1 keeps them and sends k to stage 2, so it has an output and runs.
model consts <<'EOT'
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  a = Relu <__ipu_number = 0, __pipeline_stage = 0> (x)
  s = Constant <value = int64[1] {2}, __ipu_number = 1, __pipeline_stage = 1> ()
  k = ConstantOfShape <value = float[1] {2.0}, __ipu_number = 1, __pipeline_stage = 1> (s)
  y = Add <__ipu_number = 2, __pipeline_stage = 2> (a, k)
}
EOT
expect 0 "split a stage of constants" -- "$BIN" split "$TMP/consts.onnx" --out-dir "$TMP/consts_split"
grep -qF "stage 1 (IPU 1): stage_1.onnx  2 nodes (0 copied constants), inputs 0 (0 graph, 0 cut), outputs 1" "$TMP/out" &&
  ok || { bad "the stage of constants keeps them and outputs k"; cat "$TMP/out"; }
grep -q '"source": "1:k"' "$TMP/consts_split/manifest.json" && ok || bad "stage 2 reads k from stage 1"
runs "a stage of constants" "$TMP/consts.onnx" "$TMP/consts_split"
# A graph output of run-time rank (declared without a shape) that stage 1
# reads: stage 0 outputs it, and its data and shape for stage 1.
model ranked --unshaped-output t <<'EOT'
<ir_version: 8, opset_import: ["" : 14]>
g (float[2,3] x, bool c) => (float t, float y) {
  t = If <__ipu_number = 0, __pipeline_stage = 0,
    then_branch = g1 () => (float[2,3] o1) { o1 = Identity(x) },
    else_branch = g2 () => (float[6] o2) {
      s = Constant <value = int64[1] {6}> ()
      o2 = Reshape(x, s)
    }> (c)
  y = ReduceSum <__ipu_number = 1, __pipeline_stage = 1, keepdims = 0> (t)
}
EOT
expect 0 "split a flattened cut tensor that is a graph output" -- "$BIN" split "$TMP/ranked.onnx" --out-dir "$TMP/ranked_split"
grep -q '"source": "0:t__autoshard_data"' "$TMP/ranked_split/manifest.json" && ok || bad "stage 1 reads t's data"
grep -q '"source": "0:t"' "$TMP/ranked_split/manifest.json" && ok || bad "t comes out of stage 0"
runs "a flattened graph output, rank 2" "$TMP/ranked.onnx" "$TMP/ranked_split" --value c=1
runs "a flattened graph output, rank 1" "$TMP/ranked.onnx" "$TMP/ranked_split" --value c=0

# Bad input.
refused "missing model" "$TMP/nope.onnx: no such file" "$TMP/o1" -- \
  "$BIN" split "$TMP/nope.onnx" --out-dir "$TMP/o1"
refused "not annotated" "not an annotated model" "$TMP/o2" -- \
  "$BIN" split "$TMP/sq.onnx" --out-dir "$TMP/o2"
# Two nodes, a = Relu(x) and y = Neg(a), annotated by hand with ATTRS_A and
# ATTRS_Y: split refuses them with MESSAGE.
refused_pair() {  # NAME DESCRIPTION MESSAGE ATTRS_A ATTRS_Y
  model "$1" <<EOT
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  a = Relu <$4> (x)
  y = Neg <$5> (a)
}
EOT
  refused "$2" "$3" "$TMP/$1_out" -- "$BIN" split "$TMP/$1.onnx" --out-dir "$TMP/$1_out"
}
refused_pair half "missing attribute" "node 'n1' (Neg) has no __pipeline_stage attribute" \
  "__ipu_number = 0, __pipeline_stage = 0" "__ipu_number = 1"
refused_pair backwards "IPU order going backwards" "reads 'a' from node 'n0' (Relu) on the later stage 1" \
  "__ipu_number = 1, __pipeline_stage = 1" "__ipu_number = 0, __pipeline_stage = 0"
refused_pair shared "two IPUs on a stage" "pipeline stage 0 is on two IPUs" \
  "__ipu_number = 0, __pipeline_stage = 0" "__ipu_number = 1, __pipeline_stage = 0"
refused_pair gap "a stage without nodes" "no node is on pipeline stage 1" \
  "__ipu_number = 0, __pipeline_stage = 0" "__ipu_number = 2, __pipeline_stage = 2"
refused_pair typed "attribute of the wrong type" "__ipu_number is not an INT attribute" \
  "__ipu_number = 0.5, __pipeline_stage = 0" "__ipu_number = 0, __pipeline_stage = 0"
refused "out-dir is the model" "is an input" "$TMP/sq4.onnx.never" -- \
  "$BIN" split "$TMP/sq4.onnx" --out-dir "$TMP/sq4.onnx"
[ -f "$TMP/sq4.onnx" ] && ok || bad "model kept when named as out-dir"
mkdir "$TMP/in_dir"
cp "$TMP/sq4.onnx" "$TMP/in_dir/m.onnx"
refused "out-dir holds the model" "contains an input" "$TMP/in_dir/never" -- \
  "$BIN" split "$TMP/in_dir/m.onnx" --out-dir "$TMP/in_dir"
refused "out-dir holds the model (an earlier split)" "contains an input" "$TMP/never" -- \
  "$BIN" split "$TMP/s2/stage_0.onnx" --out-dir "$TMP/s2"
[ "$(ls "$TMP/s2" | wc -l)" -eq 5 ] && ok || bad "earlier split kept when it holds the input"
mkdir "$TMP/notes"
echo "keep me" >"$TMP/notes/notes.txt"
refused "out-dir with other files" "neither empty nor an earlier split" "$TMP/notes/never" -- \
  "$BIN" split "$TMP/sq4.onnx" --out-dir "$TMP/notes"
grep -q "keep me" "$TMP/notes/notes.txt" && ok || bad "other files kept"
refused "out-dir in a missing folder" "does not exist" "$TMP/no/such" -- \
  "$BIN" split "$TMP/sq4.onnx" --out-dir "$TMP/no/such"
mkdir "$TMP/s3"
refused "shard: -o inside the split folder" "contains an input or output" "$TMP/s3/x.onnx" -- \
  "$BIN" shard "$TMP/sq.onnx" -n 2 -o "$TMP/s3/x.onnx" --split-dir "$TMP/s3"
refused "shard: split folder is the model" "is an input" "$TMP/never2" -- \
  "$BIN" shard "$TMP/sq.onnx" -n 2 -o "$TMP/o8.onnx" --split-dir "$TMP/sq.onnx"
[ ! -e "$TMP/o8.onnx" ] && ok || bad "no annotated model left when the split folder is refused"
expect 2 "split without --out-dir" -- "$BIN" split "$TMP/sq4.onnx"
[ "$(sha256sum "$TMP/sq.onnx")" = "$before" ] && ok || bad "input unchanged after refusals"

# External data: stages refer to the data file, hard-linked (or cloned) into
# the folder.
if [ -n "${AUTOSHARD_CORPUS_DIR:-}" ] && [ -d "$AUTOSHARD_CORPUS_DIR/extdata_mobilenet_v2" ]; then
  mkdir -p "$TMP/ext"
  cp "$AUTOSHARD_CORPUS_DIR/extdata_mobilenet_v2/"* "$TMP/ext/"
  expect 0 "external data" -- "$BIN" shard "$TMP/ext/model.onnx" -n 2 -o "$TMP/ext/a.onnx" --split-dir "$TMP/ext_split" -q
  { [ "$TMP/ext/model.onnx.data" -ef "$TMP/ext_split/model.onnx.data" ] || cmp -s "$TMP/ext/model.onnx.data" "$TMP/ext_split/model.onnx.data"; } && ok || bad "data shared into the split"
  grep -q '"model.onnx.data"' "$TMP/ext_split/manifest.json" && ok || bad "manifest lists the data file"
fi

expect 0 "help" -- "$BIN" split --help
grep -q "Examples" "$TMP/out" && ok || bad "split --help shows examples"

finish
