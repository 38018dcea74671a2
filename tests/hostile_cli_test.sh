#!/usr/bin/env bash
# Hostile and broken input to the CLI (issue 13): models that crashed ONNX's
# shape inference, a crash inside a batch, options that were accepted, outputs
# that aliased inputs, partial failures, a compile command that never ends,
# and resource bounds. Each kind: bad input is exit 2 and names the culprit;
# nothing is overwritten or left behind.
# Usage: tests/hostile_cli_test.sh AUTOSHARD_BINARY SOURCE_DIR ONNX_TEXT_TO_MODEL
# Writes only to a temporary folder. Prints "N passed, M failed".
set -u
BIN=$1
SRC=$2
TEXT2MODEL=$3
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SQ="$SRC/models/squeezenet1_1.onnx"
# model NAME < TEXT: an ONNX-text model as $TMP/NAME.onnx.
model() { "$TEXT2MODEL" "$TMP/$1.onnx" || bad "model $1 does not parse"; }
# nothing_left DESCRIPTION: no temporary or backup file anywhere in $TMP.
nothing_left() {
  [ -z "$(find "$TMP" -name '.autoshard_*')" ] && ok || { bad "$1: temporary files left"; find "$TMP" -name '.autoshard_*'; }
}

# --- Crashes inside ONNX 1.12's shape inference: refused first, naming the node.
model conv0 <<'EOF'
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,8,8] x, float[1,1,3,3] w) => (float y) {
  y = Conv <strides = [0, 1]> (x, w)
}
EOF
expect 2 "Conv strides 0 (was SIGFPE)" -- "$BIN" shard "$TMP/conv0.onnx" -n 1 -o "$TMP/c.onnx"
stderr_has "node 'n0' (Conv): strides has 0" "Conv strides 0 names the node"
expect 2 "inspect, same model" -- "$BIN" inspect "$TMP/conv0.onnx"
model pool0 <<'EOF'
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,8,8] x) => (float y) {
  y = MaxPool <kernel_shape = [2, 2], strides = [1, 0]> (x)
}
EOF
expect 2 "MaxPool strides 0 (was SIGFPE)" -- "$BIN" shard "$TMP/pool0.onnx" -n 1 -o "$TMP/c.onnx"
stderr_has "node 'n0' (MaxPool): strides has 0" "MaxPool names the node"
# A dim of 2^31 crashed RAFT's data propagation (at a Shape node).
model bigdim <<'EOF'
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2147483648] x) => (int64[2] y) {
  y = Shape(x)
}
EOF
expect 2 "a dim of 2^31" -- "$BIN" shard "$TMP/bigdim.onnx" -n 1 -o "$TMP/c.onnx"
stderr_has "tensor 'x' has the dim 2147483648" "the dim is named"
expect 2 "--input-shape 2^31" -- "$BIN" shard "$SQ" -n 1 -o "$TMP/c.onnx" --input-shape data:1,3,2147483648,224
# Declared bytes that overflow int64 (2^31-1 squared elements x 4 bytes).
model overflow <<'EOF'
<ir_version: 8, opset_import: ["" : 13]>
g (float[2147483647,2147483647,4] x) => (float[2147483647,2147483647,4] y) {
  y = Relu(x)
}
EOF
expect 2 "declared bytes overflow" -- "$BIN" shard "$TMP/overflow.onnx" -n 1 -o "$TMP/c.onnx"
stderr_has "more than 2^48 elements" "overflowing shape named"

# --- Deep nesting: If nested 40 deep parses (protobuf's limit of 100 stopped it).
nest() {
  local depth=$1 body='y = Relu(x)'
  for _ in $(seq "$depth"); do
    body="y = If (c) <then_branch = t () => (float[4] y) { $body }, else_branch = e () => (float[4] y) { y = Relu(x) }>"
  done
  printf '<ir_version: 8, opset_import: ["" : 13]>\ng (float[4] x, bool c) => (float[4] y) {\n  %s\n}\n' "$body"
}
nest 40 | model nest40
expect 0 "If nested 40 deep" -- "$BIN" inspect "$TMP/nest40.onnx"
nest 150 | model nest150
expect 2 "If nested 150 deep" -- "$BIN" inspect "$TMP/nest150.onnx"
stderr_has "nests deeper than autoshard reads (100 levels" "too deep is said as such"

# --- A crash in one model of a batch is that model's row; the others go on.
# With a 128 kB stack, shape inference overflows it on the 99-deep model
# (SIGSEGV, which no check of autoshard's foresees) and not on squeezenet.
# Sanitized builds use far more stack per frame, so they skip this.
mkdir -p "$TMP/batch"
cp "$SQ" "$TMP/batch/a.onnx"
nest 99 | "$TEXT2MODEL" "$TMP/batch/b_deep.onnx"
cp "$SQ" "$TMP/batch/c.onnx"
if [ -z "${AUTOSHARD_SANITIZED:-}" ]; then
  (ulimit -s 128 && "$BIN" shard "$TMP/batch" -n 1 --out-dir "$TMP/bout" --summary "$TMP/bout/s.csv" --jobs 2) >"$TMP/out" 2>"$TMP/err"
  code=$?
  [ "$code" -eq 1 ] && ok || bad "batch with a crash: exit $code, want 1"
  has "$TMP/bout/s.csv" "b_deep.onnx,,,,,," "the crashed model has a row without figures"
  has "$TMP/bout/s.csv" ",1,$TMP/batch/b_deep.onnx: crashed (SIGSEGV) while sharding it" "its row says it crashed, exit 1"
  [ "$(grep -c ',0,,batch=1,assumed$' "$TMP/bout/s.csv")" -eq 2 ] && ok || { bad "the models before and after it succeeded"; cat "$TMP/bout/s.csv"; }
  [ -f "$TMP/bout/a.sharded.onnx" ] && [ -f "$TMP/bout/c.sharded.onnx" ] && ok || bad "the others' outputs written"
  [ ! -e "$TMP/bout/b_deep.sharded.onnx" ] && ok || bad "the crashed model wrote nothing"
  stdout_has "3 models, 1 failed" "the summary line counts it"
fi
# The same in every build, sanitized too: the first compile command of the
# batch kills the process sharding its model ($PPID: autoshard, started
# again with the batch's own arguments, not a bare fork of the
# multithreaded parent, which hung under ASan). That model's row says so
# (exit 1); the other's compile command fails, so it does not fit (exit 3).
mkdir -p "$TMP/kbatch"
cp "$SQ" "$TMP/kbatch/a.onnx"
cp "$SQ" "$TMP/kbatch/b.onnx"
kill_first="mkdir '$TMP/killed_once' 2>/dev/null && { tr '\\0' ' ' </proc/\$PPID/cmdline >'$TMP/child_cmdline'; tr '\\0' '\\n' </proc/\$PPID/environ >'$TMP/child_environ'; ls /proc/\$\$/fd >'$TMP/compile_fds'; kill -KILL \$PPID; }; exit 1 # {model}"
expect 1 "batch where one model's process is killed" -- "$BIN" shard "$TMP/kbatch" -n 2 --out-dir "$TMP/kout" \
  --summary "$TMP/kout/s.csv" --jobs 2 --strategy search --max-candidates 2 --compile-cmd "$kill_first"
[ "$(grep -c ',1,.*: crashed (SIGKILL) while sharding it' "$TMP/kout/s.csv")" -eq 1 ] && ok || { bad "one row says it was killed"; cat "$TMP/kout/s.csv"; }
[ "$(grep -c ',65,2,false,.*,3,' "$TMP/kout/s.csv")" -eq 1 ] && ok || { bad "the other model went on (exit 3)"; cat "$TMP/kout/s.csv"; }
# It does not fit: its plan is written, its model not (--write-anyway).
[ "$(ls "$TMP/kout"/*.plan.json | wc -l)" -eq 1 ] && ok || bad "only the other model wrote its plan"
[ -z "$(ls "$TMP/kout"/*.sharded.onnx 2>/dev/null)" ] && ok || bad "no model written for a plan that does not fit"
case "$(cat "$TMP/child_cmdline")" in
  "$BIN shard $TMP/kbatch -n 2 --out-dir $TMP/kout "*) ok ;;
  *) bad "the model ran in autoshard started again: $(cat "$TMP/child_cmdline")" ;;
esac
grep -q '^AUTOSHARD_BATCH_CHILD=' "$TMP/child_environ" && ok || bad "the child was started (exec), not forked: its environment names its model"
! grep -qx 3 "$TMP/compile_fds" && ok || bad "a compile command does not hold the answer pipe (fd 3) open"

# --- Accepted when it should not be (each exit 2, naming the option).
expect 2 "--available-memory-proportion -1" -- "$BIN" shard "$SQ" -n 2 -o "$TMP/c.onnx" --available-memory-proportion -1
stderr_has "--available-memory-proportion must be in (0, 1], got -1" "-1 is refused"
expect 2 "--jobs 0, one model" -- "$BIN" shard "$SQ" -n 2 -o "$TMP/c.onnx" --jobs 0
stderr_has "--jobs must be at least 1, got 0" "--jobs 0 named"
expect 2 "--jobs -3, one model" -- "$BIN" shard "$SQ" -n 2 -o "$TMP/c.onnx" --jobs -3
expect 2 "unknown subcommand" -- "$BIN" evil
stderr_has "unknown subcommand 'evil'" "the subcommand is named"
expect 2 "a search time too small to start" -- "$BIN" shard "$SQ" -n 2 -o "$TMP/c.onnx" --strategy search --max-search-seconds 1e-300
stderr_has "raise --max-search-seconds" "says what to change"
[ ! -e "$TMP/c.onnx" ] && ok || bad "refused runs write nothing"

# --- Partial failure leaves nothing behind.
mkdir -p "$TMP/empty"
expect 2 "a batch over an empty folder" -- "$BIN" shard "$TMP/empty" -n 2 --out-dir "$TMP/eout"
[ ! -e "$TMP/eout" ] && ok || bad "the --out-dir made for an empty batch is removed"
expect 2 "one missing model with --out-dir" -- "$BIN" shard "$TMP/missing.onnx" -n 2 --out-dir "$TMP/mout/deeper"
[ ! -e "$TMP/mout" ] && ok || bad "the folders made for a failed model are removed"
# SIGXFSZ is ignored: a write past `ulimit -f` fails, is reported, cleaned up.
mkdir -p "$TMP/fsz"
(ulimit -f 64 && "$BIN" shard "$SQ" -n 2 -o "$TMP/fsz/big.onnx") >"$TMP/out" 2>"$TMP/err"
code=$?
[ "$code" -eq 1 ] && ok || bad "write past the size limit: exit $code, want 1"
stderr_has "write failed" "the write error is reported"
[ -z "$(ls -A "$TMP/fsz")" ] && ok || { bad "nothing left after EFBIG"; ls -A "$TMP/fsz"; }
# The same over earlier outputs: the first write fails before its rename, so
# each path still is its earlier file; no .autoshard_backup_* link is left
# beside them (rename(2) between two links of one file does nothing).
expect 0 "earlier outputs" -- "$BIN" shard "$SQ" -n 2 -o "$TMP/fsz/o.onnx" --plan "$TMP/fsz/p.json"
earlier=$(cat "$TMP/fsz/o.onnx" "$TMP/fsz/p.json" | sha256sum)
(ulimit -f 64 && "$BIN" shard "$SQ" -n 4 -o "$TMP/fsz/o.onnx" --plan "$TMP/fsz/p.json") >"$TMP/out" 2>"$TMP/err"
code=$?
[ "$code" -eq 1 ] && ok || bad "write over earlier outputs past the size limit: exit $code, want 1"
[ "$(cat "$TMP/fsz/o.onnx" "$TMP/fsz/p.json" | sha256sum)" = "$earlier" ] && ok || bad "earlier outputs as they were"
[ "$(ls -A "$TMP/fsz" | tr '\n' ' ')" = "o.onnx p.json " ] && ok || { bad "no backup left after EFBIG"; ls -A "$TMP/fsz"; }

# --- Data loss and aliasing, with a model whose weights are external (w.bin).
mkdir -p "$TMP/ext" "$TMP/out1"
ext_model() {
  "$TEXT2MODEL" "$TMP/ext/m.onnx" --external "w=$1" <<'EOF'
<ir_version: 8, opset_import: ["" : 13]>
g (float[4,4] x) => (float[4,4] y) <float[4,4] w = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}> {
  a = MatMul(x, w)
  y = Relu(a)
}
EOF
}
if ext_model w.bin 2>"$TMP/err"; then
  weights=$(sha256sum <"$TMP/ext/w.bin")
  expect 2 "--plan named like the data link about to be made" -- "$BIN" shard "$TMP/ext/m.onnx" -n 1 -o "$TMP/out1/o.onnx" --plan "$TMP/out1/w.bin"
  stderr_has "is where the model's external data file 'w.bin' is linked" "the clash is named"
  [ -z "$(ls -A "$TMP/out1")" ] && ok || { bad "refused before any work"; ls -A "$TMP/out1"; }
  [ "$(sha256sum <"$TMP/ext/w.bin")" = "$weights" ] && ok || bad "weights untouched"
  # A symlinked folder leading to the model's own folder: the plan would
  # land on w.bin itself.
  ln -s "$TMP/ext" "$TMP/extlink"
  expect 2 "--plan through a symlink onto the data file" -- "$BIN" shard "$TMP/ext/m.onnx" -n 1 -o "$TMP/out1/o.onnx" --plan "$TMP/extlink/w.bin"
  stderr_has "is an input" "the input is named"
  # A hard link to the data file as --sharding-config.
  ln "$TMP/ext/w.bin" "$TMP/out1/hard.yaml"
  expect 2 "--sharding-config hard-linked to the data file" -- "$BIN" shard "$TMP/ext/m.onnx" -n 1 -o "$TMP/out1/o.onnx" --sharding-config "$TMP/out1/hard.yaml"
  stderr_has "is an input" "the hard link is an input"
  rm "$TMP/out1/hard.yaml"
  # A split whose data file would land on the split's manifest.
  ext_model manifest.json
  expect 0 "earlier outputs" -- "$BIN" shard "$TMP/ext/m.onnx" -n 1 -o "$TMP/ext/o.onnx" --plan "$TMP/ext/p.json"
  earlier=$(cat "$TMP/ext/o.onnx" "$TMP/ext/p.json" | sha256sum)
  expect 2 "a split whose data file is named manifest.json" -- "$BIN" shard "$TMP/ext/m.onnx" -n 1 -o "$TMP/ext/o.onnx" --plan "$TMP/ext/p.json" --split-dir "$TMP/split"
  stderr_has "has the name of a file the split folder holds" "the clash is named"
  [ "$(cat "$TMP/ext/o.onnx" "$TMP/ext/p.json" | sha256sum)" = "$earlier" ] && ok || bad "earlier outputs exactly as they were"
  [ ! -e "$TMP/split" ] && ok || bad "no split folder left"
else
  bad "the external-data model: $(cat "$TMP/err")"
fi
nothing_left "aliasing"

# --- A step that fails after the first rename (the --html page, past
# `ulimit -f` 8 kB, is written after the model and plan and before the split
# moves into place) leaves every earlier output byte-for-byte as it was.
if ext_model w.bin 2>"$TMP/err"; then
  late=(ext/o.onnx ext/p.json late/manifest.json late/stage_0.onnx)
  expect 0 "earlier outputs, 1 IPU" -- "$BIN" shard "$TMP/ext/m.onnx" -n 1 -o "$TMP/ext/o.onnx" --plan "$TMP/ext/p.json" --split-dir "$TMP/late"
  earlier=$(cd "$TMP" && sha256sum "${late[@]}")
  (ulimit -f 8 && "$BIN" shard "$TMP/ext/m.onnx" -n 2 -o "$TMP/ext/o.onnx" --plan "$TMP/ext/p.json" --split-dir "$TMP/late" --html "$TMP/ext/page.html") >"$TMP/out" 2>"$TMP/err"
  code=$?
  [ "$code" -eq 1 ] && ok || bad "the --html write past the size limit: exit $code, want 1"
  stderr_has "write failed" "the write error is reported"
  [ "$(cd "$TMP" && sha256sum "${late[@]}")" = "$earlier" ] && ok || bad "a late failure: earlier outputs exactly as they were"
  [ ! -e "$TMP/late/stage_1.onnx" ] && [ ! -e "$TMP/ext/page.html" ] && ok || bad "a late failure: no new output left"
  nothing_left "a late failure"
  # The same run without the limit writes other bytes (2 IPUs), so the
  # comparison above can fail.
  expect 0 "the same run, no limit" -- "$BIN" shard "$TMP/ext/m.onnx" -n 2 -o "$TMP/ext/o.onnx" --plan "$TMP/ext/p.json" --split-dir "$TMP/late" --html "$TMP/ext/page.html"
  [ "$(cd "$TMP" && sha256sum "${late[@]}")" != "$earlier" ] && ok || bad "2 IPUs write other outputs"
else
  bad "the external-data model: $(cat "$TMP/err")"
fi

# --- A compile command that never returns.
mkdir -p "$TMP/tmpdir"
expect 3 "--compile-timeout" -- env TMPDIR="$TMP/tmpdir" "$BIN" shard "$SQ" -n 2 -o "$TMP/ct.onnx" --strategy search --compile-cmd 'sleep 1000 # {model}' --compile-timeout 0.5 --max-candidates 2
grep -q "timed out after 0.5 s (--compile-timeout)" "$TMP/err" "$TMP/out" && ok || { bad "the timeout is reported"; cat "$TMP/err"; }
[ -z "$(ls -A "$TMP/tmpdir")" ] && ok || bad "no candidate folder left after a timeout"
expect 2 "--compile-timeout 0" -- "$BIN" shard "$SQ" -n 2 -o "$TMP/ct.onnx" --strategy search --compile-cmd true --compile-timeout 0
# kill (SIGTERM) while a compile runs: the compile's group is killed and the
# candidate folder removed before autoshard ends.
env TMPDIR="$TMP/tmpdir" "$BIN" shard "$SQ" -n 2 -o "$TMP/ct.onnx" --strategy search \
  --compile-cmd "echo \$\$ > '$TMP/compile.pid'; sleep 1000 # {model}" >/dev/null 2>"$TMP/kill.err" &
pid=$!
for _ in $(seq 100); do [ -s "$TMP/compile.pid" ] && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"
code=$?
[ "$code" -eq 143 ] && ok || bad "killed autoshard ends by SIGTERM (exit $code, want 143)"
[ -z "$(ls -A "$TMP/tmpdir")" ] && ok || bad "no candidate folder left after kill"
# One line says what was left as it was.
has "$TMP/kill.err" "autoshard: interrupted (SIGTERM): nothing written, every file as it was" "the interrupt line"
[ "$(grep -c 'autoshard' "$TMP/kill.err")" -eq 1 ] && ok || { bad "one line on an interrupt"; cat "$TMP/kill.err"; }
[ ! -e "$TMP/ct.onnx" ] && ok || bad "no model after an interrupt"
if [ -s "$TMP/compile.pid" ]; then
  kill -0 "$(cat "$TMP/compile.pid")" 2>/dev/null && bad "the compile outlived autoshard" || ok
else
  bad "the compile command never started"
fi

# A truncated manifest.json in --split-dir (its text ends inside a key)
# aborted autoshard with std::out_of_range; it is a folder that holds
# something else: refused, exit 2.
mkdir -p "$TMP/trunc_split"
printf '{"format' >"$TMP/trunc_split/manifest.json"
expect 2 "a truncated manifest.json in --split-dir" -- "$BIN" shard "$SQ" -n 2 -o "$TMP/trunc.onnx" --split-dir "$TMP/trunc_split"
grep -q "neither empty nor an earlier split" "$TMP/err" && ok || { bad "the truncated manifest is refused"; cat "$TMP/err"; }
# The same kind: a manifest.json ending inside a string value aborted
# (exit 134), one with an array under a key the manifest does not have spun
# forever (timeout: 124).
for text in '{"format": "ab' '{"foo": [1]}'; do
  rm -rf "$TMP/odd_split"; mkdir -p "$TMP/odd_split"
  printf '%s' "$text" >"$TMP/odd_split/manifest.json"
  expect 2 "manifest.json $text in --split-dir" -- timeout 60 "$BIN" shard "$SQ" -n 2 -o "$TMP/odd.onnx" --split-dir "$TMP/odd_split"
  grep -q "neither empty nor an earlier split" "$TMP/err" && ok || { bad "manifest $text refused"; cat "$TMP/err"; }
done

# --- The streaming reader and writer (issue 27, Note [Weights stay in the
# file]): a model whose 128 kB weight stays in the file, and broken copies
# of it. Each is refused naming the file and the byte, exit 2, nothing
# written, the input unchanged.
mkdir -p "$TMP/stream"
/usr/bin/python3 - "$TMP/stream" <<'PY'
import sys, numpy as np, onnx
from onnx import helper as h, numpy_helper, TensorProto as T
d = sys.argv[1]
w = numpy_helper.from_array(np.arange(128 * 256, dtype=np.float32).reshape(128, 256), "w")
g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                 [h.make_tensor_value_info("x", T.FLOAT, [1, 128])],
                 [h.make_tensor_value_info("y", T.FLOAT, [1, 256])], [w])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
good = m.SerializeToString()
open(d + "/m.onnx", "wb").write(good)
open(d + "/cut.onnx", "wb").write(good[:len(good) // 2])        # ends inside w's data
gfield = good[good.index(b"\x3a"):]                               # graph is the last field
open(d + "/twice.onnx", "wb").write(good + gfield)              # the graph field twice
# graph { initializer { name: "w" raw_data: length 1000, 3 bytes } }
t = b"\x42\x01w\x4a\xe8\x07abc"
gr = b"\x2a" + bytes([len(t)]) + t
open(d + "/past.onnx", "wb").write(b"\x08\x08\x3a" + bytes([len(gr)]) + gr)
open(d + "/tag.onnx", "wb").write(good[:1])                      # ends inside a field
PY
stream_before=$(sha256sum "$TMP/stream/"*.onnx)
mkdir -p "$TMP/stream/out"
expect 0 "a model whose weight stays in the file" -- "$BIN" shard "$TMP/stream/m.onnx" -n 1 -o "$TMP/stream/out/o.onnx"
/usr/bin/python3 -c 'import onnx, onnx.numpy_helper, sys; m = onnx.load(sys.argv[1]); onnx.checker.check_model(m); w = onnx.numpy_helper.to_array(m.graph.initializer[0]); sys.exit(0 if w[127, 255] == 128 * 256 - 1 and w.shape == (128, 256) and m.graph.node[0].attribute[0].name == "__ipu_number" else 1)' "$TMP/stream/out/o.onnx" && ok || bad "the streamed output holds the weight and the annotations, and passes the checker"
for c in "cut:past the end (" "twice:a second graph field at byte " "past:a length prefix of 1000 bytes past the end (3 left) at byte 9" "tag:cut off by the end at byte 0"; do
  name=${c%%:*}
  expect 2 "$name.onnx refused" -- "$BIN" shard "$TMP/stream/$name.onnx" -n 1 -o "$TMP/stream/out/$name.out.onnx"
  stderr_has "$TMP/stream/$name.onnx: not an ONNX model (" "$name.onnx: the file named"
  stderr_has "${c#*:}" "$name.onnx: the reason and the byte"
  [ ! -e "$TMP/stream/out/$name.out.onnx" ] && ok || bad "$name.onnx: nothing written"
done
[ "$(sha256sum "$TMP/stream/"*.onnx)" = "$stream_before" ] && ok || bad "the inputs are unchanged"
# A full disk while the weights are copied: refused naming the output and the
# byte, nothing left, the input unchanged.
(ulimit -f 64 && "$BIN" shard "$TMP/stream/m.onnx" -n 1 -o "$TMP/stream/out/full.onnx") >"$TMP/out" 2>"$TMP/err"
code=$?
[ "$code" -eq 1 ] && ok || bad "a full disk while copying weights: exit $code, want 1"
stderr_has "$TMP/stream/out/full.onnx: write failed at byte " "the full disk names the output and the byte"
[ "$(ls -A "$TMP/stream/out")" = "o.onnx" ] && ok || { bad "nothing left after a full disk"; ls -A "$TMP/stream/out"; }
[ "$(sha256sum "$TMP/stream/"*.onnx)" = "$stream_before" ] && ok || bad "the input unchanged after a full disk"
nothing_left "streaming"

finish
