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
EOF
chmod +x "$TMP/bin/poprun"
expect 0 "launch" -- "$BIN" launch "$TMP/a.json" --hosts pod-a,pod-b --nproc-per-host 2 \
  --partition p16 --vipu-server vipu --env PATH --json "$TMP/launch.json" \
  -- python3 run.py --msg "it's a test"
stdout_has "POD: 16 IPUs = 4 replicas x 4 IPUs per replica; 4 instances (2 hosts x 2 processes), 1 replicas each" "launch summary"
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
--vipu-server-timeout=120
--print-topology=yes
--numa-aware=yes
--mpi-local-args=-x AUTOSHARD_NUM_INSTANCES=4 -x AUTOSHARD_ENDPOINTS=pod-a:8090,pod-b:8090 -x PATH
--instance-mpi-local-args=0:-x AUTOSHARD_INSTANCE_ID=0 -x AUTOSHARD_CURRENT_ENDPOINT=pod-a:8090 -x AUTOSHARD_RANK_IN_HOST=0
--instance-mpi-local-args=1:-x AUTOSHARD_INSTANCE_ID=1 -x AUTOSHARD_CURRENT_ENDPOINT=pod-a:8090 -x AUTOSHARD_RANK_IN_HOST=1
--instance-mpi-local-args=2:-x AUTOSHARD_INSTANCE_ID=2 -x AUTOSHARD_CURRENT_ENDPOINT=pod-b:8090 -x AUTOSHARD_RANK_IN_HOST=0
--instance-mpi-local-args=3:-x AUTOSHARD_INSTANCE_ID=3 -x AUTOSHARD_CURRENT_ENDPOINT=pod-b:8090 -x AUTOSHARD_RANK_IN_HOST=1
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

# The launcher's checks: each one line, exit 2, no launch file.
expect 2 "replicas % processes" -- "$BIN" launch "$TMP/a.json" --hosts a,b,c \
  --partition p --json "$TMP/l2.json"
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
  --json "$TMP/a.json"
stderr_has "is the plan" "refuses to overwrite the plan"

finish
