#!/usr/bin/env bash
# Batch mode of `autoshard shard`: several models or folders, --out-dir,
# --jobs, --summary, exit codes, and a failing model never costing another's
# outputs. Models: every .onnx under $AUTOSHARD_CORPUS_DIR when set, else the
# bundled models/ folder.
# Usage: tests/batch_cli_test.sh AUTOSHARD_BINARY SOURCE_DIR
# Writes only to a temporary folder. Prints "N passed, M failed".
set -u
BIN=$1
SRC=$2
CORPUS=${AUTOSHARD_CORPUS_DIR:-$SRC/models}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
now() { date +%s.%N; }

# The models of the corpus, relative to it, without ".onnx".
(cd "$CORPUS" && find . -name '*.onnx' ! -name '*.sharded.onnx' | sed 's|^\./||; s|\.onnx$||' | sort) >"$TMP/names"
count=$(wc -l <"$TMP/names")
[ "$count" -ge 1 ] && ok || bad "no models in $CORPUS"
before=$(cd "$CORPUS" && find . -type f | sort | sha256sum)

# The main job: the corpus folder, a corrupt file and a missing one, 2 at once.
printf 'not a model' >"$TMP/corrupt.onnx"
t0=$(now)
expect 2 "corpus + corrupt + missing, --jobs 2" -- "$BIN" shard "$CORPUS" "$TMP/corrupt.onnx" "$TMP/missing.onnx" \
  --num-ipus 2 --batch-size 1 --out-dir "$TMP/out2" --jobs 2 --summary "$TMP/out2/summary.csv"
t1=$(now)
cp "$TMP/out" "$TMP/table2"
missing=0
while read -r name; do
  for ext in sharded.onnx sharding.yaml plan.json; do
    [ -s "$TMP/out2/$name.$ext" ] || { missing=$((missing + 1)); echo "missing: $name.$ext"; }
  done
done <"$TMP/names"
[ "$missing" -eq 0 ] && ok || bad "every good model has its 3 outputs ($missing missing)"
[ ! -e "$TMP/out2/corrupt.sharded.onnx" ] && [ ! -e "$TMP/out2/missing.sharded.onnx" ] && ok || bad "no output for the bad models"
stderr_has "$TMP/corrupt.onnx: not an ONNX model" "corrupt model reported on stderr"
stderr_has "$TMP/missing.onnx: no such file" "missing model reported on stderr"
stdout_has "$((count + 2)) models, 2 failed" "the table's last line"
# One row per model in the table: the header, the rows, the total.
[ "$(wc -l <"$TMP/out")" -eq $((count + 4)) ] && ok || bad "table rows: $(wc -l <"$TMP/out") lines for $count + 2 models"
grep -qE "^$TMP/missing.onnx +- +- +- +- +- +[0-9.]+ +$TMP/missing.onnx: no such file" "$TMP/out" && ok || bad "the missing model's row"
# The summary: a header and a row per model, the good ones planned onto 2 IPUs
# and written (exit 0, or 3 when the plan does not fit), the assumed dims last.
[ "$(wc -l <"$TMP/out2/summary.csv")" -eq $((count + 3)) ] && ok || bad "summary.csv has $((count + 3)) lines"
head -1 "$TMP/out2/summary.csv" | grep -qx "model,output,nodes,ipus,fits,bottleneck_s,seconds,exit_code,error,assumed,shapes" && ok || bad "summary.csv header"
[ "$(grep -cE ',2,(true,[0-9.e-]*,[0-9.]*,0,,.*|false,[0-9.e-]*,[0-9.]*,3,.*does not fit.*)$' "$TMP/out2/summary.csv")" -eq "$count" ] && ok || bad "every good model's row: 2 IPUs, exit 0 (or 3, does not fit)"
nofit=$(grep -c ',3,' "$TMP/out2/summary.csv")
grep -q "^$TMP/corrupt.onnx,,,,,,[0-9.]*,2,$TMP/corrupt.onnx: not an ONNX model" "$TMP/out2/summary.csv" && ok || bad "corrupt model's row"
grep -q "^$TMP/missing.onnx,,,,,,[0-9.]*,2,$TMP/missing.onnx: no such file" "$TMP/out2/summary.csv" && ok || bad "missing model's row"
[ "$(find "$TMP/out2" -name '.autoshard_tmp*' | wc -l)" -eq 0 ] && ok || bad "no temporary files left"
[ "$(cd "$CORPUS" && find . -type f | sort | sha256sum)" = "$before" ] && ok || bad "the corpus folder is unchanged"

# One at a time: the same plans (sharding configs) as two at once.
t2=$(now)
expect "$([ "$nofit" -gt 0 ] && echo 3 || echo 0)" "corpus, --jobs 1" -- "$BIN" shard "$CORPUS" --num-ipus 2 --batch-size 1 --out-dir "$TMP/out1" --jobs 1 \
  --summary "$TMP/out1/summary.json" -q
t3=$(now)
[ ! -s "$TMP/out" ] && ok || bad "-q: nothing on stdout"
# Plans hold timings; the annotated models and configs must be the same.
diff -r -x 'summary.*' -x '*.plan.json' "$TMP/out1" "$TMP/out2" >/dev/null && ok || bad "--jobs 1 and 2 give the same outputs"
[ "$(grep -c '"exit_code": [03]' "$TMP/out1/summary.json")" -eq "$count" ] && ok || bad "summary.json: a row per model"
grep -q "\"failed\": $nofit," "$TMP/out1/summary.json" && ok || bad "summary.json: $nofit failed"
/usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); sys.exit(0 if all(isinstance(r["nodes"], int) for r in s["models"] if r["exit_code"] != 2) else 1)' "$TMP/out1/summary.json" && ok || bad "summary.json: node counts are JSON numbers"
echo "batch over $count models of $CORPUS: --jobs 2 $(awk "BEGIN{print $t1 - $t0}") s (with 2 bad files), --jobs 1 $(awk "BEGIN{print $t3 - $t2}") s"

# Same names in different folders do not collide; a folder and a file of it
# count once.
mkdir -p "$TMP/a" "$TMP/b"
cp "$SRC/models/squeezenet1_1.onnx" "$TMP/a/m.onnx"
cp "$SRC/models/squeezenet1_1.onnx" "$TMP/b/m.onnx"
cp "$SRC/models/squeezenet1_1.onnx" "$TMP/a/other.onnx"
expect 0 "same stem in two folders" -- "$BIN" shard "$TMP/a/m.onnx" "$TMP/b/m.onnx" "$TMP/a" -n 2 --out-dir "$TMP/same" --jobs 2
[ -f "$TMP/same/a/m.sharded.onnx" ] && [ -f "$TMP/same/b/m.sharded.onnx" ] && [ -f "$TMP/same/other.sharded.onnx" ] && ok || bad "a/m, b/m and other: $(cd "$TMP/same" && find . -name '*.onnx')"
stdout_has "3 models, 0 failed" "a file named twice counts once"
# Rows in command-line order, whatever finishes first.
[ "$(sed -n '2,4p' "$TMP/out" | awk '{print $1}' | tr '\n' ' ')" = "$TMP/a/m.onnx $TMP/b/m.onnx $TMP/a/other.onnx " ] && ok || bad "rows in order: $(cat "$TMP/out")"
# --out-dir inside the input folder: earlier outputs are not inputs.
expect 0 "out-dir inside the folder" -- "$BIN" shard "$TMP/a" -n 2 --out-dir "$TMP/a/out"
expect 0 "again" -- "$BIN" shard "$TMP/a" -n 2 --out-dir "$TMP/a/out"
stdout_has "2 models, 0 failed" "outputs are not picked up as models"

# A model whose output cannot be written fails alone; the others keep theirs,
# and it leaves none of its own files.
mkdir -p "$TMP/blocked/a.sharded.onnx"
cp "$SRC/models/squeezenet1_1.onnx" "$TMP/a.onnx"
cp "$SRC/models/squeezenet1_1.onnx" "$TMP/z.onnx"
expect 2 "one output blocked" -- "$BIN" shard "$TMP/a.onnx" "$TMP/z.onnx" -n 2 --out-dir "$TMP/blocked" --jobs 2
stderr_has "autoshard: error: $TMP/a.onnx: $TMP/blocked/a.sharded.onnx: is a folder" "blocked output reported with its model"
[ -f "$TMP/blocked/z.sharded.onnx" ] && [ -f "$TMP/blocked/z.plan.json" ] && [ -f "$TMP/blocked/z.sharding.yaml" ] && ok || bad "the other model's outputs"
[ ! -e "$TMP/blocked/a.plan.json" ] && [ ! -e "$TMP/blocked/a.sharding.yaml" ] && ok || bad "the failed model left files"

# Exit codes: does not fit (3) alone; with a bad model, bad input (2) wins.
printf 'base: "ipu2"\nbytes_per_tile: 15000\n' >"$TMP/tiny.textproto"
expect 3 "nothing fits" -- "$BIN" shard "$TMP/a.onnx" "$TMP/z.onnx" -n 2 --device "$TMP/tiny.textproto" --out-dir "$TMP/tiny"
[ ! -e "$TMP/tiny/a.sharded.onnx" ] && [ ! -e "$TMP/tiny/z.sharded.onnx" ] && ok || bad "no model written when nothing fits"
[ -f "$TMP/tiny/a.plan.json" ] && ok || bad "the plan is written when nothing fits"
stdout_has "2 do not fit (no model written for them)" "the summary says no model was written"
grep -qE "^$TMP/a.onnx +65 +2 +no .*does not fit" "$TMP/out" && ok || bad "row says it does not fit: $(cat "$TMP/out")"
expect 2 "does not fit and corrupt" -- "$BIN" shard "$TMP/a.onnx" "$TMP/corrupt.onnx" -n 2 --device "$TMP/tiny.textproto" --out-dir "$TMP/tiny2"

# JSON on stdout for piping.
expect 0 "--report json" -- "$BIN" shard "$TMP/a.onnx" "$TMP/z.onnx" -n 2 --out-dir "$TMP/json" --report json
[ "$(grep -c '"model":' "$TMP/out")" -eq 2 ] && ok || bad "--report json: 2 rows"
head -c1 "$TMP/out" | grep -q '{' && ok || bad "--report json: stdout is JSON only"
# No --batch-size: each row names the dim it assumed (issue 16 point 3).
[ "$(grep -c '"assumed": "batch=1"' "$TMP/out")" -eq 2 ] && ok || bad "--report json: both rows assumed batch=1"
# -v adds to stderr only: stdout stays one JSON document (the rows).
expect 0 "--report json -v" -- "$BIN" shard "$TMP/a.onnx" "$TMP/z.onnx" -n 2 --out-dir "$TMP/json-v" --report json -v
[ "$(grep -c '^{' "$TMP/out")" -eq 1 ] && ok || bad "--report json -v: one JSON document on stdout"
[ "$(grep -c '"model":' "$TMP/out")" -eq 2 ] && ok || bad "--report json -v: 2 rows"
# Names that differ only in their extension get distinct outputs.
cp "$TMP/a.onnx" "$TMP/twin.onnx" && cp "$TMP/a.onnx" "$TMP/twin.bak"
expect 0 "same stem, other extension" -- timeout 120 "$BIN" shard "$TMP/twin.onnx" "$TMP/twin.bak" -n 2 --out-dir "$TMP/twins" -q
[ -f "$TMP/twins/twin_onnx.sharded.onnx" ] && [ -f "$TMP/twins/twin_bak.sharded.onnx" ] && ok || bad "twin outputs: $(ls "$TMP/twins")"
# An ignored SIGHUP (nohup) stays ignored.
(trap '' HUP; "$BIN" shard "$TMP/a.onnx" "$TMP/z.onnx" -n 2 --out-dir "$TMP/nohup" -q & pid=$!; sleep 0.2; kill -HUP $pid 2>/dev/null; wait $pid) && ok || bad "batch under an ignored SIGHUP"

# Usage errors: one line, exit 2, nothing written.
# Without --out-dir a batch plans and prints its rows, writing nothing
# (issue 27 point 1).
mkdir "$TMP/nowrite" && cp "$TMP/a.onnx" "$TMP/z.onnx" "$TMP/nowrite/"
expect 0 "several models without --out-dir" -- "$BIN" shard "$TMP/nowrite/a.onnx" "$TMP/nowrite/z.onnx" -n 2
[ "$(ls "$TMP/nowrite" | tr '\n' ' ')" = "a.onnx z.onnx " ] && ok || bad "a batch without --out-dir wrote: $(ls "$TMP/nowrite")"
stdout_has "2 models, 0 failed, 0 do not fit (no --out-dir)" "the batch's last line says nothing was written"
expect 0 "a folder without --out-dir" -- "$BIN" shard "$TMP/nowrite" -n 2 --report json
[ "$(ls "$TMP/nowrite" | tr '\n' ' ')" = "a.onnx z.onnx " ] && ok || bad "a folder without --out-dir wrote: $(ls "$TMP/nowrite")"
expect 2 "--plan with several models" -- "$BIN" shard "$TMP/a.onnx" "$TMP/z.onnx" -n 2 --plan "$TMP/p.json"
stderr_has "write their files into --out-dir DIR" "--plan with several models"
expect 2 "-o with several models" -- "$BIN" shard "$TMP/a.onnx" "$TMP/z.onnx" -n 2 -o "$TMP/x.onnx"
expect 2 "-o with --out-dir" -- "$BIN" shard "$TMP/a.onnx" -n 2 -o "$TMP/x.onnx" --out-dir "$TMP/u1"
expect 2 "--summary of another kind" -- "$BIN" shard "$TMP/a.onnx" "$TMP/z.onnx" -n 2 --out-dir "$TMP/u2" --summary "$TMP/u2/s.txt"
stderr_has "name a .json or a .csv file" "--summary of another kind"
expect 2 "--summary in a missing folder" -- "$BIN" shard "$TMP/a.onnx" "$TMP/z.onnx" -n 2 --out-dir "$TMP/u6" --summary "$TMP/nowhere/s.csv"
stderr_has "does not exist" "--summary in a missing folder"
[ ! -e "$TMP/u6/a.sharded.onnx" ] && ok || bad "--summary checked before any work"
printf 'not a model' >"$TMP/model.json"
expect 2 "--summary is an input" -- "$BIN" shard "$TMP/a.onnx" "$TMP/model.json" -n 2 --out-dir "$TMP/u7" --summary "$TMP/model.json"
stderr_has "is an input" "--summary is an input"
# An output that is another model's input fails that model only.
cp "$SRC/models/squeezenet1_1.onnx" "$TMP/a/a.onnx"
ln -f "$TMP/a/other.onnx" "$TMP/a/a.sharded.onnx"
expect 2 "an output is an input" -- "$BIN" shard "$TMP/a/a.onnx" "$TMP/a/other.onnx" "$TMP/a/a.sharded.onnx" -n 2 --out-dir "$TMP/a"
stderr_has "$TMP/a/a.sharded.onnx: is an input" "an output is an input"
stdout_has "3 models, 1 failed" "an output is an input fails one model"
cmp -s "$TMP/a/other.onnx" "$SRC/models/squeezenet1_1.onnx" && ok || bad "the input is intact"
rm "$TMP/a/a.onnx" "$TMP/a/a.sharded.onnx" "$TMP/a/other.sharded.onnx" "$TMP/a/"*.yaml "$TMP/a/"*.json
# --summary without --out-dir: the rows, and no model file (issue 27).
expect 0 "--summary without --out-dir" -- "$BIN" shard "$TMP/a.onnx" -n 2 --summary "$TMP/s.csv"
[ "$(wc -l <"$TMP/s.csv")" -eq 2 ] && [ ! -e "$TMP/a.sharded.onnx" ] && ok || bad "--summary without --out-dir: the rows only"
expect 2 "--jobs 0" -- "$BIN" shard "$TMP/a.onnx" "$TMP/z.onnx" -n 2 --out-dir "$TMP/u3" --jobs 0
expect 2 "a bad option is one error" -- "$BIN" shard "$TMP/a.onnx" "$TMP/z.onnx" -n 0 --out-dir "$TMP/u4"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && ok || bad "a bad option is one line: $(cat "$TMP/err")"
mkdir -p "$TMP/empty"
expect 2 "a folder without models" -- "$BIN" shard "$TMP/empty" "$TMP/a.onnx" -n 2 --out-dir "$TMP/u5"
stderr_has "no .onnx model below this folder" "a folder without models"
[ -f "$TMP/u5/a.sharded.onnx" ] && ok || bad "the other model still sharded"
for d in u1 u2 u4; do
  [ -z "$(find "$TMP/$d" -type f 2>/dev/null)" ] && ok || bad "nothing written for $d"
done

# A termination signal waits for the write in progress: every model has all
# three outputs or none, and no temporary file is left.
mkdir -p "$TMP/many"
for i in $(seq -w 1 40); do ln "$TMP/a.onnx" "$TMP/many/m$i.onnx"; done
"$BIN" shard "$TMP/many" -n 2 --out-dir "$TMP/killed" --jobs 2 >/dev/null 2>&1 &
pid=$!
sleep 0.4
kill -TERM "$pid" 2>/dev/null
wait "$pid"
code=$?
[ "$code" -eq 143 ] || [ "$code" -eq 0 ] && ok || bad "killed batch: exit $code, want 143 (or 0 when done first)"
halves=0
for m in "$TMP"/killed/*.sharded.onnx; do
  [ -e "$m" ] || continue
  s=${m%.sharded.onnx}
  [ -f "$s.plan.json" ] && [ -f "$s.sharding.yaml" ] || halves=$((halves + 1))
done
[ "$halves" -eq 0 ] && ok || bad "$halves models with only some outputs after a kill"
[ "$(find "$TMP/killed" -name '.autoshard_tmp*' | wc -l)" -eq 0 ] && ok || bad "temporary files left after a kill"
echo "killed after 0.4 s (exit $code): $(find "$TMP/killed" -name '*.sharded.onnx' | wc -l) of 40 models done"

finish
