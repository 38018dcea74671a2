#!/usr/bin/env bash
# End-to-end tests of the POD flags (shard --total-ipus, --replica-grouping,
# --shard-over, --batch-size auto) and of `autoshard launch`, whose printed
# shell line runs a fake `poprun` on PATH that checks its arguments.
# Usage: tests/pod_cli_test.sh AUTOSHARD_BINARY SOURCE_DIR
# Writes only to a temporary folder. Prints "N passed, M failed".
set -u
BIN=$1
SRC=$2
MODEL=$SRC/models/squeezenet1_1.onnx
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# shard --total-ipus with a fixed count: 16 / 4 = 4 replicas.
expect 0 "total 16, 4 per replica" -- "$BIN" shard "$MODEL" -n 4 --total-ipus 16 \
  --batch-size 1 -o "$TMP/a.onnx" --plan "$TMP/a.json"
stdout_has "POD: 16 IPUs = 4 replicas x 4 IPUs per replica, micro-batch 1" "POD line"
grep -q '"replicas": 4' "$TMP/a.json" && ok || bad "plan has replicas 4"

# Choose for the POD: IPUs per replica and batch, every combination listed.
expect 0 "auto for a POD16" -- "$BIN" shard "$MODEL" -n auto --total-ipus 16 \
  --batch-size 1,4 --replica-grouping 2,2 --shard-over group -o "$TMP/b.onnx" \
  --plan "$TMP/b.json"
stdout_has "POD tried (IPUs per replica: POD samples/s):" "tried list"
grep -qE '^  batch 1: 1: [0-9.]+.*, 16: ' "$TMP/out" && ok || bad "batch 1 with 1 to 16 IPUs"
grep -qE '^  batch 4: 1: ' "$TMP/out" && ok || bad "batch 4 tried"
stdout_has "(chosen)" "a choice"
stdout_has "replica instance group gather shard" "grouping table"

# A POD candidate that does not fit has no POD throughput (0) a script could
# pick with max_by: on ipu2 with 18,142-byte tiles SqueezeNet needs 2 IPUs (cli_test.sh),
# so the 1-IPU row of a 4-IPU POD does not fit.
printf 'base: "ipu2"\nbytes_per_tile: 18142\n' >"$TMP/small.textproto"
expect 0 "POD with a row that does not fit" -- "$BIN" shard "$MODEL" -n auto --total-ipus 4 \
  --batch-size 1 --device "$TMP/small.textproto" -o "$TMP/s.onnx" --plan "$TMP/s.json"
python3 - "$TMP/s.json" <<'PY' && ok || bad "rows that do not fit carry no POD throughput"
import json, sys
tried = json.load(open(sys.argv[1]))["replication"]["tried"]
one = [t for t in tried if t["ipus_per_replica"] == 1][0]
assert one.get("planned") and not one.get("fits", False), one
assert one.get("pod_throughput_per_s", 0) == 0, one
best = max(tried, key=lambda t: t.get("pod_throughput_per_s", 0))
assert best.get("fits") and best.get("chosen"), best
PY
stdout_has "1: does not fit" "the text row says so"

# The planned micro-batch reaches the runtime: --fix-input-shapes writes the
# planned dims into the output's inputs (SqueezeNet's input is [batch, 3,
# 224, 224]); the report prints PopRT's flags for the same problem.
expect 0 "--fix-input-shapes" -- "$BIN" shard "$MODEL" -n 2 --batch-size 8 --precision fp16 \
  --available-memory-proportion 0.3 --fix-input-shapes -o "$TMP/fixed.onnx"
# (The report wraps long lines: joined here.)
tr '\n' ' ' <"$TMP/out" | tr -s ' ' | grep -qF "PopRT flags for the planned problem: --input_shape input=8,3,224,224 --precision fp16 --available_memory_proportion 0.3 " && ok || bad "PopRT flags"
expect 0 "without --fix-input-shapes" -- "$BIN" shard "$MODEL" -n 2 --batch-size 8 -o "$TMP/free.onnx"
dims() { /usr/bin/python3 -c 'import onnx,sys; m=onnx.load(sys.argv[1], load_external_data=False); print([d.dim_value or d.dim_param for d in m.graph.input[0].type.tensor_type.shape.dim])' "$1"; }
[ "$(dims "$TMP/fixed.onnx")" = "[8, 3, 224, 224]" ] && ok || bad "the planned dims in the output: $(dims "$TMP/fixed.onnx")"
[ "$(dims "$TMP/free.onnx")" = "['batch', 3, 224, 224]" ] && ok || bad "the model's dims otherwise: $(dims "$TMP/free.onnx")"

# Bad input: one line, exit 2, nothing written.
expect 2 "not a multiple" -- "$BIN" shard "$MODEL" -n 3 --total-ipus 16 -o "$TMP/c.onnx"
stderr_has "--total-ipus 16 is not a multiple of --num-ipus 3" "not a multiple"
[ ! -e "$TMP/c.onnx" ] && ok || bad "nothing written for a bad total"
expect 2 "grouping does not divide" -- "$BIN" shard "$MODEL" -n 4 --total-ipus 16 \
  --replica-grouping 1,3 -o "$TMP/d.onnx"
stderr_has "the group size 3 does not divide the 4 replicas" "grouping rule"
[ ! -e "$TMP/d.onnx" ] && ok || bad "nothing written for a bad grouping"
expect 2 "stride x size does not divide" -- "$BIN" shard "$MODEL" -n 4 --total-ipus 16 \
  --replica-grouping 4,2 -o "$TMP/d.onnx"
stderr_has "stride x group size = 4 x 2 = 8 does not divide the 4 replicas" "stride rule"
expect 2 "grouping without a POD" -- "$BIN" shard "$MODEL" -n 4 --replica-grouping 1,2 \
  -o "$TMP/d.onnx"
stderr_has "need --total-ipus" "grouping needs --total-ipus"
expect 2 "max-ipus too large" -- "$BIN" shard "$MODEL" -n auto --max-ipus 2048 -o "$TMP/d.onnx"
stderr_has "--max-ipus must be from 1 to 1024" "max-ipus range"

# launch: the fake poprun records its arguments, one per line.
mkdir -p "$TMP/bin"
cat >"$TMP/bin/poprun" <<'EOF'
#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done >"$POPRUN_ARGS"
printf '%s\n' "${POPLAR_ENGINE_OPTIONS-unset}" >"$POPRUN_ARGS.env"
EOF
chmod +x "$TMP/bin/poprun"
expect 0 "launch" -- "$BIN" launch "$TMP/a.json" --hosts pod-a,pod-b --nproc-per-host 2 \
  --partition p16 --vipu-server vipu --env PATH --json "$TMP/launch.json" \
  -- python3 run.py --msg "it's a test"
stdout_has "POD: 16 IPUs = 4 replicas x 4 IPUs per replica; 4 instances (2 hosts x 2 processes), 1 replica each" "launch summary"
stdout_has "      2        2 pod-b 8-11 0" "replica 2 on pod-b, IPUs 8-11"
line=$(sed -n '/^shell:$/{n;p;q}' "$TMP/out")
POPRUN_ARGS=$TMP/args PATH="$TMP/bin:$PATH" sh -c "$line" && ok || bad "the shell line runs"
cat >"$TMP/want" <<'EOF'
--num-instances=4
--num-replicas=4
--ipus-per-replica=4
--host=pod-a,pod-b
--vipu-partition=p16
--vipu-server-host=vipu
--update-partition=no
--vipu-server-timeout=300
--print-topology=yes
--numa-aware=yes
--mpi-local-args=-x PATH
python3
run.py
--msg
it's a test
EOF
diff "$TMP/want" "$TMP/args" >/dev/null && ok || { bad "poprun got the arguments"; diff "$TMP/want" "$TMP/args"; }
grep -q '"--num-replicas=4"' "$TMP/launch.json" && ok || bad "launch JSON has the argv"
grep -q '"replica_table"' "$TMP/launch.json" && ok || bad "launch JSON has the replica table"
# The argv of the JSON is what poprun got.
if python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["argv"][1:]))' \
     "$TMP/launch.json" | diff - "$TMP/want" >/dev/null; then ok; else bad "JSON argv"; fi

# Any --env value (JSON with spaces and quotes) reaches poprun's environment
# through the printed shell line; --poprun-arg and --mpi-global-args pass
# through, a --poprun-arg --flag=VALUE replacing autoshard's default.
json_value='{"autoReport.all": "true", "it'"'"'s": 1}'
expect 0 "launch with a JSON env value" -- "$BIN" launch "$TMP/a.json" --hosts pod-a \
  --partition p16 --env "POPLAR_ENGINE_OPTIONS=$json_value" \
  --poprun-arg=--num-ilds=2 --poprun-arg=--update-partition=yes \
  --mpi-global-args '--tag-output --allow-run-as-root' -- python3 run.py
line=$(sed -n '/^shell:$/{n;p;q}' "$TMP/out")
POPRUN_ARGS=$TMP/args2 PATH="$TMP/bin:$PATH" sh -c "$line" && ok || bad "the env shell line runs"
[ "$(cat "$TMP/args2.env")" = "$json_value" ] && ok || bad "POPLAR_ENGINE_OPTIONS arrived as given: $(cat "$TMP/args2.env")"
has "$TMP/args2" "--mpi-local-args=-x POPLAR_ENGINE_OPTIONS" "-x NAME for the env value"
has "$TMP/args2" "--num-ilds=2" "--poprun-arg passed"
has "$TMP/args2" "--update-partition=yes" "--poprun-arg replaces a default"
lacks "$TMP/args2" "--update-partition=no" "the replaced default is gone"
has "$TMP/args2" "--mpi-global-args=--tag-output --allow-run-as-root" "--mpi-global-args passed"
lacks "$TMP/args2" "8090" "no PaddlePaddle endpoints"
stdout_has "1 host x 1 process), 4 replicas each" "plural forms"

# A program is required; a plan that does not fit is refused (exit 3)
# unless --force.
expect 2 "no program" -- "$BIN" launch "$TMP/a.json" --hosts pod-a --partition p16
stderr_has "no program: give the program each instance runs after --" "no program"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["fits"]=False; p["no_fit_reason"]="the weights need more"; json.dump(p, open(sys.argv[2], "w"))' \
  "$TMP/a.json" "$TMP/nofit.json"
expect 3 "a plan that does not fit" -- "$BIN" launch "$TMP/nofit.json" --hosts pod-a --partition p16 -- run
stderr_has "the plan does not fit" "refused"
stderr_has "the weights need more (--force prints its launch anyway; exit code 3)" "the reason and --force"
expect 0 "--force" -- "$BIN" launch "$TMP/nofit.json" --hosts pod-a --partition p16 --force -- run
stdout_has "poprun --num-instances=1" "--force prints the launch"

# The launcher's checks: each one line, exit 2, no launch file.
expect 2 "replicas % processes" -- "$BIN" launch "$TMP/a.json" --hosts a,b,c \
  --partition p --json "$TMP/l2.json" -- run
stderr_has "the 4 replicas are not a multiple of the 3 processes" "replicas % processes"
[ ! -e "$TMP/l2.json" ] && ok || bad "no launch file on error"
expect 2 "empty host" -- "$BIN" launch "$TMP/a.json" --hosts a,,b --partition p
stderr_has "host 2 is empty" "empty host name"
expect 2 "host like an option" -- "$BIN" launch "$TMP/a.json" --hosts a,--x --partition p
stderr_has "is not a name" "host like an option"
expect 2 "not a plan" -- "$BIN" launch "$MODEL" --hosts a --partition p
stderr_has "not a plan" "not a plan"
expect 2 "missing plan" -- "$BIN" launch "$TMP/none.json" --hosts a --partition p
expect 2 "json over the plan" -- "$BIN" launch "$TMP/a.json" --hosts a,b --partition p \
  --json "$TMP/a.json" -- run
stderr_has "is the plan" "refuses to overwrite the plan"

finish
