#!/usr/bin/env bash
# End-to-end tests of the autoshard CLI: outputs, exit codes and bad input.
# Usage: tests/cli_test.sh AUTOSHARD_BINARY SOURCE_DIR
# Writes only to a temporary folder. Prints "N passed, M failed".
set -u
BIN=$1
SRC=$2
MODEL=$SRC/models/squeezenet1_1.onnx
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect CODE DESCRIPTION -- COMMAND...: runs COMMAND, checks the exit code.
expect() {
  local want=$1 what=$2
  shift 3
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok; else bad "$what: exit $got, want $want"; cat "$TMP/err"; fi
}
# stderr_has TEXT DESCRIPTION: the last command's stderr contains TEXT.
stderr_has() {
  if grep -qF -- "$1" "$TMP/err"; then ok; else bad "$2: stderr lacks '$1'"; cat "$TMP/err"; fi
}

cp "$MODEL" "$TMP/model.onnx"
before=$(sha256sum "$TMP/model.onnx")

# The main job: 4 IPUs, all outputs.
expect 0 "shard 4 IPUs" -- "$BIN" shard "$TMP/model.onnx" --num-ipus 4 \
  --sharding-config "$TMP/s.yaml" --plan "$TMP/plan.json"
[ -f "$TMP/model.sharded.onnx" ] && ok || bad "default output name"
[ -s "$TMP/s.yaml" ] && ok || bad "sharding config written"
grep -q '"num_ipus": 4' "$TMP/plan.json" && ok || bad "plan JSON has num_ipus 4"
grep -qE '^3 +[0-9]+' "$TMP/out" && ok || bad "report has a row for IPU 3"
[ "$(sha256sum "$TMP/model.onnx")" = "$before" ] && ok || bad "input unchanged"

# apply with the written config reproduces the plan's placements.
expect 0 "apply" -- "$BIN" apply "$TMP/model.onnx" --sharding-config "$TMP/s.yaml" \
  -o "$TMP/applied.onnx" --plan "$TMP/plan2.json"
if diff <(grep -A3 '"node":' "$TMP/plan.json" | grep -v sharding) \
        <(grep -A3 '"node":' "$TMP/plan2.json" | grep -v sharding) >/dev/null; then
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
expect 2 "one IPU" -- "$BIN" shard "$TMP/model.onnx" --num-ipus 1 -o "$TMP/o4.onnx"
stderr_has "at least 2" "one IPU"
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
leftovers=$(find "$TMP" -name '.*tmp*' | wc -l)
[ "$leftovers" -eq 0 ] && ok || bad "no temporary files left"

# External data: the output elsewhere keeps valid references (hard link).
mkdir -p "$TMP/ext" "$TMP/extout"
if [ -n "${AUTOSHARD_CORPUS_DIR:-}" ] && [ -d "$AUTOSHARD_CORPUS_DIR/extdata_mobilenet_v2" ]; then
  cp "$AUTOSHARD_CORPUS_DIR/extdata_mobilenet_v2/"* "$TMP/ext/"
  expect 0 "external data" -- "$BIN" shard "$TMP/ext/model.onnx" --num-ipus 2 -o "$TMP/extout/m.onnx"
  [ "$TMP/ext/model.onnx.data" -ef "$TMP/extout/model.onnx.data" ] && ok || bad "data hard-linked"
  rm "$TMP/ext/model.onnx.data"
  expect 2 "missing external data" -- "$BIN" shard "$TMP/ext/model.onnx" --num-ipus 2 -o "$TMP/ext/o8.onnx"
  stderr_has "is missing" "missing external data"
fi

expect 0 "help" -- "$BIN" shard --help
grep -q "Examples" "$TMP/out" && ok || bad "--help shows examples"
expect 0 "version" -- "$BIN" --version

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
