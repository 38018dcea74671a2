#!/usr/bin/env bash
# Splits models with `autoshard shard --split-dir` for 2, 4 and 8 IPUs (the
# default strategy), and for 8 IPUs with --strategy raw too (it can leave an
# IPU only constants: writers/split/split.h, Note [A stage of constants]), and
# checks in onnxruntime (check_split.js) that the chained stages give the
# original model's outputs on the same random inputs. First it runs
# check_split_test.js (the comparison itself).
# Usage: tests/ort/split_check.sh AUTOSHARD_BINARY SOURCE_DIR [MODEL.onnx...]
# Models: the arguments, else SOURCE_DIR/models/squeezenet1_1.onnx and, when
# $AUTOSHARD_CORPUS_DIR is set, every .onnx below it. Per-model options and
# the models onnxruntime-node cannot check (with the reason) are in
# tests/ort/models.tsv. Prints a table (model, IPUs, stages, per output its
# shape and max abs difference, result) and the seconds taken; exits non-zero when a
# split does not match, or a model fails that models.tsv does not list.
# Needs node and tests/ort/node_modules (scripts/setup_ort.sh installs them).
set -u
BIN=$1
SRC=$2
shift 2
HERE="$SRC/tests/ort"
if ! command -v node >/dev/null || [ ! -d "$HERE/node_modules/onnxruntime-node" ]; then
  echo "split_check: node or onnxruntime-node is missing; run scripts/setup_ort.sh (scripts/test.sh does)" >&2
  exit 1
fi
if ! node "$HERE/check_split_test.js"; then
  echo "split_check: check_split_test.js failed" >&2
  exit 1
fi
models=("$@")
corpus=${AUTOSHARD_CORPUS_DIR:-}
if [ ${#models[@]} -eq 0 ]; then
  models=("$SRC/models/squeezenet1_1.onnx")
  if [ -n "$corpus" ] && [ -d "$corpus" ]; then
    while IFS= read -r m; do models+=("$m"); done < <(find "$corpus" -name '*.onnx' | sort)
  fi
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
start=$SECONDS
failed=0

# The models.tsv line of model key $1 (file name without .onnx, or
# folder/name for a model in a folder of the corpus).
options_of() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$HERE/models.tsv"; }
expectation_of() { awk -F'\t' -v k="$1" '$1 == k { print $3 }' "$HERE/models.tsv"; }

echo "| model | IPUs | stages | max abs difference per output | result |"
echo "|---|---|---|---|---|"
for model in "${models[@]}"; do
  key=$(basename "$model" .onnx)
  dir=$(dirname "$model")
  if [ -n "$corpus" ] && [ "$(cd "$dir" && pwd)" != "$(cd "$corpus" && pwd)" ] &&
     [[ "$(cd "$dir" && pwd)" == "$(cd "$corpus" && pwd)"/* ]]; then
    key="$(basename "$dir")/$key"
  fi
  # A model in its own folder of the corpus (external data) is copied, so the
  # outputs can hard-link its data wherever TMP is.
  if [[ "$key" == */* ]]; then
    mkdir -p "$TMP/copy/$key"
    cp -r "$dir"/. "$TMP/copy/$key/"
    model="$TMP/copy/$key/$(basename "$model")"
  fi
  read -r -a opts <<<"$(options_of "$key")"
  expect=$(expectation_of "$key")
  # Split for 2, 4 and 8 IPUs, and 8 with the raw strategy ("8raw");
  # onnxruntime runs the model once for all.
  dirs=()
  for k in 2 4 8 8raw; do
    work="$TMP/$(echo "$key" | tr '/' '_').$k"
    mkdir -p "$work"
    strategy=()
    [[ "$k" == *raw ]] && strategy=(--strategy raw)
    "$BIN" shard "$model" -n "${k%raw}" "${strategy[@]}" --batch-size 1 -o "$work/annotated.onnx" \
      --split-dir "$work/split" -q 2>"$work/shard.err"
    rc=$?
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]; then
      dirs+=("$work/split")
    elif grep -q "every IPU needs" "$work/shard.err"; then
      echo "| $key | ${k/raw/ raw} | - | - | not split: fewer nodes than IPUs |"
    else
      echo "| $key | ${k/raw/ raw} | - | - | FAIL: shard exit $rc: $(head -c 300 "$work/shard.err" | tr '\n|' ' /') |"
      failed=$((failed + 1))
    fi
  done
  [ ${#dirs[@]} -eq 0 ] && continue
  node "$HERE/check_split.js" "$model" "${dirs[@]}" --json "${opts[@]}" >"$TMP/check.json" 2>"$TMP/check.err"
  rc=$?
  node -e '
    const fs = require("fs");
    const [file, key, rc, expect, ...dirs] = process.argv.slice(1);
    const results = fs.readFileSync(file, "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    for (const dir of dirs) {
      const k = dir.replace(/.*\.([0-9]+)(raw)?\/split$/, (_, n, raw) => raw ? `${n} raw` : n);
      const r = results.find((x) => x.split === dir) ||
                { ok: false, stages: "-", outputs: [], stage_error: `check_split.js exit ${rc}, no result` };
      const fmt = (v) => v === null ? "-" : v === 0 ? "0" : Number(v).toPrecision(2);
      const diffs = r.outputs.map((o) => `${o.name}${o.dims ? ` [${o.dims.join(",")}]` : ""}: ${fmt(o.max_abs)}` +
                                         `${o.note && o.ok ? ` (${o.note})` : ""}`).join("; ") || "-";
      let result = r.ok ? "pass" : `FAIL: ${r.original_error ? "onnxruntime cannot run the model: " + r.original_error
                                         : r.stage_error || r.outputs.filter((o) => !o.ok).map((o) => `${o.name}: ${o.note}`).join("; ")}`;
      if (!r.ok && expect) result = `${expect} (${r.original_error || r.stage_error || "mismatch"})`;
      console.log(`| ${key} | ${k} | ${r.stages} | ${diffs} | ${result.replace(/\|/g, "/").slice(0, 400)} |`);
    }
  ' "$TMP/check.json" "$key" "$rc" "$expect" "${dirs[@]}"
  if [ "$rc" -ne 0 ] && [ -z "$expect" ]; then failed=$((failed + ${#dirs[@]})); fi
done
echo
echo "split_check: ${#models[@]} models, $failed failures, $((SECONDS - start)) s"
[ "$failed" -eq 0 ]
