#!/usr/bin/env bash
# onnxruntime as the oracle of autoshard's dims over a whole corpus (issue 25,
# point 1): every model as declared and at --batch-size 1, 2 and 8, and the
# hand-made models of tests/ort/make_shape_models.py, compared node output by
# node output (tests/ort/dims_check.py). Writes the table to
# docs/dims_oracle.md (the figures the docs quote) and prints it.
#   bench/dims_corpus.sh BINARY [MODELS_DIR]   (default /work/shared/models)
# Needs node and tests/ort/node_modules (scripts/setup_ort.sh). Minutes.
set -euo pipefail
bin=$(realpath "$1")
models_dir=${2:-/work/shared/models}
repo=$(cd "$(dirname "$0")/.." && pwd)
table=$(mktemp)
trap 'rm -f "$table"' EXIT
status=0
/usr/bin/python3 "$repo/tests/ort/dims_check.py" "$bin" "$repo" --corpus "$models_dir" --all \
  --table "$table" || status=$?
{
  echo "# autoshard's dims against onnxruntime's"
  echo
  echo "Made by \`bench/dims_corpus.sh\` (tests/ort/dims_check.py): each corpus model"
  echo "as declared and at \`--batch-size\` 1, 2 and 8, and the hand-made models of"
  echo "\`tests/ort/make_shape_models.py\`, run in onnxruntime with every node output"
  echo "exposed; each output's dims compared with those \`inspect --nodes-csv\` costs."
  echo "Outputs at data-dependent nodes (NonZero, NonMaxSuppression... and after) are"
  echo "counted apart, not compared. A refusal agrees when both refuse."
  echo
  cat "$table"
} >"$repo/docs/dims_oracle.md.tmp"
mv "$repo/docs/dims_oracle.md.tmp" "$repo/docs/dims_oracle.md"
cat "$repo/docs/dims_oracle.md"
exit $status
