#!/usr/bin/env bash
# How the CLI talks: --help of every subcommand (examples, exit codes),
# --version, results on stdout and warnings on stderr, --quiet, --verbose,
# --report json. Usage: tests/usage_cli_test.sh AUTOSHARD_BINARY SOURCE_DIR
# VERSION. Writes only to a temporary folder. Prints "N passed, M failed".
set -u
BIN=$1
SRC=$2
VERSION=$3
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cp "$SRC/models/squeezenet1_1.onnx" "$TMP/model.onnx"

# --help: the top level lists the subcommands; each has examples and the
# exit codes, and the README states the same exit codes.
expect 0 "--help" -- "$BIN" --help
has "$TMP/out" "Exit codes: 0 ok" "--help"
exit_line=$(grep '^Exit codes:' "$TMP/out")
subcommands=$(sed -n '/^Subcommands:/,/^$/p' "$TMP/out" | awk 'NR > 1 && /^  [a-z]/ && $1 != "help" {print $1}')
[ "$(echo "$subcommands" | wc -w)" -ge 3 ] && ok || bad "--help lists the subcommands: $subcommands"
for sub in $subcommands; do
  expect 0 "$sub --help" -- "$BIN" "$sub" --help
  has "$TMP/out" "Examples:" "$sub --help"
  has "$TMP/out" "$exit_line" "$sub --help"
done
has "$SRC/README.md" "$exit_line" "README states --help's exit codes"
# split makes no plan: its exit codes have no 3 (nor several models).
expect 0 "split --help" -- "$BIN" split --help
lacks "$TMP/out" "3 the plan does not fit" "split --help: no exit code 3"
expect 0 "shard --help" -- "$BIN" shard --help
has "$TMP/out" "3 the plan does not fit" "shard --help: exit code 3"
expect 0 "--version" -- "$BIN" --version
[ "$(cat "$TMP/out")" = "autoshard $VERSION" ] && ok || bad "--version says '$(cat "$TMP/out")', want 'autoshard $VERSION'"
expect 2 "no subcommand" -- "$BIN"

# Results on stdout, warnings on stderr (SqueezeNet's batch dim is symbolic
# without --batch-size: a warning).
expect 0 "shard" -- "$BIN" shard "$TMP/model.onnx" -n 2 -o "$TMP/a.onnx"
has "$TMP/out" "bottleneck" "the report on stdout"
has "$TMP/out" "wrote $TMP/a.onnx" "written files on stdout"
has "$TMP/err" "autoshard: warning: input 'input' has unresolved 'batch'" "warnings on stderr"
lacks "$TMP/out" "warning" "no warnings on stdout"

# --quiet: nothing at all when all is well; errors still show.
expect 0 "-q" -- "$BIN" shard "$TMP/model.onnx" -n 2 -o "$TMP/b.onnx" -q
[ ! -s "$TMP/out" ] && [ ! -s "$TMP/err" ] && ok || bad "-q prints nothing"
expect 2 "-q with an error" -- "$BIN" shard "$TMP/nope.onnx" -n 2 -q
has "$TMP/err" "nope.onnx: no such file" "-q still prints errors"
expect 0 "inspect -q" -- "$BIN" inspect "$TMP/model.onnx" -q
[ ! -s "$TMP/err" ] && ok || bad "inspect -q: no warnings"
expect 2 "-q and -v" -- "$BIN" shard "$TMP/model.onnx" -n 2 -q -v

# --verbose: each step's time on stderr.
expect 0 "-v" -- "$BIN" shard "$TMP/model.onnx" -n 2 -o "$TMP/c.onnx" --batch-size 1 -v
has "$TMP/err" "autoshard: loaded $TMP/model.onnx (65 nodes) in" "-v: load"
has "$TMP/err" "autoshard: planned (auto, 2 IPUs) in" "-v: plan"
has "$TMP/err" "autoshard: wrote 1 file in" "-v: write"
expect 0 "inspect -v" -- "$BIN" inspect "$TMP/model.onnx" --batch-size 1 -v
has "$TMP/err" "autoshard: inspected in" "inspect -v"

# --report json: the plan without its per-node placements, alone on stdout.
expect 0 "--report json" -- "$BIN" shard "$TMP/model.onnx" -n 2 -o "$TMP/d.onnx" --report json
[ "$(head -c1 "$TMP/out")" = "{" ] && [ "$(tr -d '[:space:]' <"$TMP/out" | tail -c1)" = "}" ] && ok || bad "--report json: one JSON object"
has "$TMP/out" '"num_ipus": 2' "--report json"
has "$TMP/out" '"bottleneck_s"' "--report json"
has "$TMP/out" '"sharding_points"' "--report json"
has "$TMP/out" '"nodes": []' "--report json leaves out the placements"
has "$TMP/err" "autoshard: warning:" "--report json: warnings on stderr"
printf 'base: "ipu2"\nbytes_per_tile: 15000\n' >"$TMP/tiny.textproto"
expect 3 "--report json, does not fit" -- "$BIN" shard "$TMP/model.onnx" -n 2 -o "$TMP/e.onnx" --report json \
  --device "$TMP/tiny.textproto"
has "$TMP/out" '"fits": false' "--report json says it does not fit"
has "$TMP/err" "does not fit" "--report json: the error on stderr"
expect 0 "inspect --report json" -- "$BIN" inspect "$TMP/model.onnx" --report json
cp "$TMP/out" "$TMP/inspect1"
expect 0 "inspect --json" -- "$BIN" inspect "$TMP/model.onnx" --json
cmp -s "$TMP/out" "$TMP/inspect1" && ok || bad "inspect: --report json is --json"
expect 2 "--report xml" -- "$BIN" shard "$TMP/model.onnx" -n 2 --report xml

# --out-dir with one model: the batch names, the single-model report.
expect 0 "one model, --out-dir" -- "$BIN" shard "$TMP/model.onnx" -n 2 --out-dir "$TMP/o"
[ -f "$TMP/o/model.sharded.onnx" ] && [ -f "$TMP/o/model.sharding.yaml" ] && [ -f "$TMP/o/model.plan.json" ] && ok || bad "--out-dir names"
has "$TMP/out" "bottleneck" "one model, --out-dir: the report"

# Options::Validate (sharder/options.cc) names the CLI flag of each value it
# refuses: every flag named in its messages is one that `shard --help` lists
# as an option (twelve today: --num-ipus, --max-ipus, --strategy, ...).
validate_flags=$(sed -n '/Options::Validate/,/^}/p' "$SRC/sharder/options.cc" |
  grep -o -- '--[a-z][a-z-]*' | sort -u)
[ "$(echo "$validate_flags" | wc -w)" -ge 10 ] && ok || bad "Options::Validate names flags: $validate_flags"
expect 0 "shard --help" -- "$BIN" shard --help
for flag in $validate_flags; do
  grep -Eq -- "^  (-[a-z],)?$flag( |\$)" "$TMP/out" && ok ||
    bad "Options::Validate names $flag, which shard --help does not list"
done

finish
