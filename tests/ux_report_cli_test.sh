#!/usr/bin/env bash
# Issue 16, points 4-6, one check per fault kind: the report's key numbers
# and width; errors and help for people who type fast; progress and noise.
# Usage: tests/ux_report_cli_test.sh AUTOSHARD_BINARY SOURCE_DIR. Writes only to a
# temporary folder. Prints "N passed, M failed".
set -u
BIN=$1
SRC=$2
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cp "$SRC/models/squeezenet1_1.onnx" "$TMP/model.onnx"
# widest FILE: the longest line's length.
widest() { awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' "$1"; }

# --- Point 4: the report ---
expect 0 "shard" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 1 -o "$TMP/a.onnx" --plan "$TMP/a.json"
# ipu2: 1472 tiles x 638,976 bytes = 940,572,672 bytes.
stdout_has "IPU capacity: 940.57 MB = 1472 tiles x 638.98 kB" "capacity line"
stdout_has "fits: all 2 IPUs" "count line when all fit"
# Both IPUs work: no "do no work" warning (it is judged on the stage times,
# so it must come after they are set; before, every IPU read as idle).
[ "$(jq '[.warnings[] | select(test("do no work"))] | length' "$TMP/a.json")" = 0 ] && ok || bad "a plan whose IPUs all work warned of idle IPUs"
# throughput = batch / (bottleneck + the profile's fixed step time): the
# report says the fixed part (1 / bottleneck is not the throughput).
grep -qE '^  throughput: 1 sample a step, a step the bottleneck \+ [0-9.]+ [mun]?s fixed' "$TMP/out" && ok || bad "the throughput's fixed step time named"
[ "$(widest "$TMP/out")" -le 100 ] && ok || bad "report wider than 100 columns: $(widest "$TMP/out")"
# The fullest tile as IPU and tile on it; the JSON keeps the global index.
ipu=$(jq '[.ipus[] | {i: .ipu, b: .memory.max_tile_bytes}] | max_by(.b) | .i' "$TMP/a.json")
local_tile=$(jq ".ipus[$ipu].memory.max_tile_on_ipu" "$TMP/a.json")
global_tile=$(jq ".ipus[$ipu].memory.max_tile" "$TMP/a.json")
[ "$global_tile" -eq $((ipu * 1472 + local_tile)) ] && ok || bad "max_tile $global_tile is not $ipu x 1472 + $local_tile"
stdout_has "fullest tile: IPU $ipu tile $local_tile," "fullest tile as IPU and tile"
[ "$(jq '.tiles_per_ipu, .bytes_per_tile' "$TMP/a.json" | tr '\n' ' ')" = "1472 638976 " ] && ok || bad "plan JSON: tiles_per_ipu, bytes_per_tile"
# Cut-tensor bytes: the table's "sent" total is the JSON's sum of cut_tensor_out_bytes.
sent=$(jq '[.ipus[].cut_tensor_out_bytes] | add' "$TMP/a.json")
[ "$sent" -gt 0 ] && ok || bad "a 2-IPU split sends bytes"
stdout_has "cut tensors: $(jq '.cut_tensors | length' "$TMP/a.json") (" "cut tensor line"
# The last line's seconds: planning, then the certified bound's apart (the
# CLI's -v "planned ... in" counts both; a newcomer read them as disagreeing).
bound_s=$(jq '.performance.bound_seconds' "$TMP/a.json")
if awk -v b="$bound_s" 'BEGIN { exit !(b > 0) }'; then
  grep -qE '^sharding points: [0-9]+   planned in [0-9.]+ [mun]?s, the certified bound in [0-9.]+ [mun]?s more$' "$TMP/out" && ok || bad "the last line names the bound's seconds apart from the plan's"
else
  grep -qE '^sharding points: [0-9]+   planned in [0-9.]+ [mun]?s$' "$TMP/out" && ok || bad "the last line: planning seconds"
fi
# auto chose a split other than search's: the search line says so.
if [ "$(jq -r '.candidates[] | select(.chosen) | .strategy' "$TMP/a.json")" != search ]; then
  stdout_has "search (not the split shown: auto chose" "search line names the split it is not"
fi
expect 0 "shard -v" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 1 -o "$TMP/a.onnx" -v
stdout_has "memory by kind (tile-memory model):" "-v: memory by kind"
[ "$(widest "$TMP/out")" -le 100 ] && ok || bad "-v report wider than 100 columns"
# Overflow: batch 4096 on 2 IPUs of ipu1 does not fit anywhere.
expect 3 "overflow" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 4096 --device ipu1 --strategy raw -o "$TMP/b.onnx"
stdout_has "2 of 2 IPUs overflow (0-1)" "count line of overflowing IPUs"
stdout_has "memory (IPU 0 tile 0)" "the compiler-style message names the IPU and tile"
# One unit rule: times with an SI prefix, no "0.000 s".
lacks "$TMP/out" "0.000 s" "a time in fixed seconds"

# --- Point 5: errors and help ---
expect 2 "typo in an option" -- "$BIN" shard "$TMP/model.onnx" --num-ipu 2
[ "$(cat "$TMP/err")" = "autoshard: error: unknown option '--num-ipu' for 'shard'; did you mean --num-ipus? (run 'autoshard help shard')" ] && ok || bad "typo: $(cat "$TMP/err")"
expect 2 "typo in a subcommand" -- "$BIN" shrad "$TMP/model.onnx"
[ "$(cat "$TMP/err")" = "autoshard: error: unknown subcommand 'shrad'; did you mean 'shard'? (run 'autoshard help')" ] && ok || bad "subcommand typo: $(cat "$TMP/err")"
expect 0 "--num_ipus (PopRT's spelling)" -- "$BIN" shard "$TMP/model.onnx" --num_ipus 2 --batch_size=1 -o "$TMP/c.onnx" -q
expect 2 "--input-shape A B, onnxsim's way" -- "$BIN" shard "$TMP/model.onnx" -n 2 --input-shape input:1,3,224,224 nope:1,2 -o "$TMP/d.onnx"
stderr_has "nope" "the second shape is read as a shape"
lacks "$TMP/err" "out-dir" "not as a second model"
expect 0 "help shard" -- "$BIN" help shard
cp "$TMP/out" "$TMP/help_shard"
expect 0 "shard --help" -- "$BIN" shard --help
cmp -s "$TMP/out" "$TMP/help_shard" && ok || bad "'help shard' differs from 'shard --help'"
[ "$(widest "$TMP/out")" -le 80 ] && ok || bad "help wider than 80 columns off a terminal: $(widest "$TMP/out")"
[ "$(grep -c '^Exit codes:' "$TMP/out")" -eq 1 ] && ok || bad "the exit codes once"
req=$(grep -n '^Required:' "$TMP/out" | cut -d: -f1)
opt=$(grep -n '^Options:' "$TMP/out" | cut -d: -f1)
[ -n "$req" ] && [ -n "$opt" ] && [ "$req" -lt "$opt" ] && ok || bad "required options first"
sed -n "/^Required:/,/^$/p" "$TMP/out" | grep -q -- "--num-ipus" && ok || bad "--num-ipus under Required"
for sub in "" shard apply inspect split calibrate launch solve devices; do
  "$BIN" help $sub >"$TMP/h" 2>&1
  grep -qE '(^|[ (])(proto|docs)/' "$TMP/h" && bad "help $sub names a file of the source tree" || ok
done
expect 2 "help of an unknown subcommand" -- "$BIN" help shrad
stderr_has "did you mean 'shard'?" "help suggests"
expect 0 "devices" -- "$BIN" devices
for d in ipu1 ipu2 ipu21 c600; do grep -q "^$d " "$TMP/out" && ok || bad "devices lists $d"; done
expect 0 "devices ipu2" -- "$BIN" devices ipu2
cp "$TMP/out" "$TMP/my.textproto"
expect 0 "the printed profile loads back" -- "$BIN" shard "$TMP/model.onnx" -n 2 --batch-size 1 --device "$TMP/my.textproto" -o "$TMP/e.onnx" --plan "$TMP/e.json" -q
[ "$(jq -r .device "$TMP/e.json")" = custom-ipu2 ] && ok || bad "device name of the copy"
[ "$(jq .performance.bottleneck_s "$TMP/e.json")" = "$(jq .performance.bottleneck_s "$TMP/a.json")" ] && ok || bad "the copy plans as ipu2 does"
expect 2 "devices of an unknown name" -- "$BIN" devices ipu9
stderr_has "'ipu9' is not a built-in device" "devices names the fault"

# --- Point 6: progress and noise ---
# -q: no report and no warnings, but --report json is printed.
expect 0 "shard -q --report json" -- "$BIN" shard "$TMP/model.onnx" -n 2 -o "$TMP/f.onnx" -q --report json
[ "$(jq .num_ipus "$TMP/out")" = 2 ] && ok || bad "-q still prints the JSON"
[ ! -s "$TMP/err" ] && ok || bad "-q printed on stderr: $(cat "$TMP/err")"
expect 0 "inspect -q" -- "$BIN" inspect "$TMP/model.onnx" -q
[ ! -s "$TMP/out" ] && [ ! -s "$TMP/err" ] && ok || bad "inspect -q printed: $(cat "$TMP/out" "$TMP/err" | head -3)"
expect 0 "inspect -q --report json" -- "$BIN" inspect "$TMP/model.onnx" -q --report json
jq -e .model "$TMP/out" >/dev/null && ok || bad "inspect -q still prints the JSON"
# Off a terminal the progress never rewrites a line in place.
expect 0 "search off a terminal" -- "$BIN" shard "$TMP/model.onnx" -n 2 --strategy search -o "$TMP/g.onnx"
grep -q $'\r' "$TMP/err" && bad "a carriage return off a terminal" || ok
# On a terminal (script(1) gives a pty) one line rewritten in place shows
# every long step: loading (bytes), planning, writing (bytes) (issue 27
# point 4); -q shows none.
if command -v script >/dev/null; then
  script -qc "'$BIN' shard '$TMP/model.onnx' -n 2 -o '$TMP/p.onnx'" /dev/null | tr '\r' '\n' >"$TMP/pty"
  has "$TMP/pty" "loading $TMP/model.onnx: " "progress: loading"
  has "$TMP/pty" "of 4.96 MB" "progress: bytes of the file"
  has "$TMP/pty" "planning $TMP/model.onnx: shapes and costs of 65 nodes" "progress: planning"
  has "$TMP/pty" "writing $TMP/p.onnx: 4.96 MB of 4.96 MB" "progress: writing"
  # A POD search (and -n auto) says which count it is planning, each in turn.
  script -qc "'$BIN' shard '$TMP/model.onnx' -n auto --total-ipus 4 -o '$TMP/p.onnx'" /dev/null | tr '\r' '\n' >"$TMP/pty"
  has "$TMP/pty" "planning $TMP/model.onnx: trying 1 IPU" "progress: the POD's first count"
  has "$TMP/pty" "planning $TMP/model.onnx: trying 4 IPUs" "progress: the POD's last count"
  script -qc "'$BIN' shard '$TMP/model.onnx' -n 2 -o '$TMP/p.onnx' -q" /dev/null >"$TMP/pty"
  [ ! -s "$TMP/pty" ] && ok || bad "-q shows no progress: $(cat "$TMP/pty")"
fi
# A warning that two models of a batch share is printed once, counted.
mkdir -p "$TMP/batch"
cp "$TMP/model.onnx" "$TMP/batch/a.onnx"
cp "$TMP/model.onnx" "$TMP/batch/b.onnx"
expect 0 "batch" -- "$BIN" shard "$TMP/batch" -n 2 --out-dir "$TMP/bout"
[ "$(grep -c "has unresolved 'batch'" "$TMP/err")" -eq 1 ] && ok || bad "the shared warning once: $(cat "$TMP/err")"
stderr_has "autoshard: warning: 2 models: input 'input' has unresolved 'batch'" "the warning counted"

finish
