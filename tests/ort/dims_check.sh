#!/usr/bin/env bash
# ctest dims_ort_test: onnxruntime as the oracle of autoshard's dims (issue
# 25, point 1) on the hand-made models of make_shape_models.py and, when
# $AUTOSHARD_CORPUS_DIR is set, a fixed sample of its models
# (dims_check.py's SAMPLE). bench/dims_corpus.sh runs the whole corpus.
# Usage: tests/ort/dims_check.sh AUTOSHARD_BINARY SOURCE_DIR
# Needs node and tests/ort/node_modules (scripts/setup_ort.sh installs them).
set -u
BIN=$1
SRC=$2
HERE="$SRC/tests/ort"
if ! command -v node >/dev/null || [ ! -d "$HERE/node_modules/onnxruntime-node" ]; then
  echo "dims_check: node or onnxruntime-node is missing; run scripts/setup_ort.sh (scripts/test.sh does)" >&2
  exit 1
fi
corpus=()
if [ -n "${AUTOSHARD_CORPUS_DIR:-}" ] && [ -d "$AUTOSHARD_CORPUS_DIR" ]; then
  corpus=(--corpus "$AUTOSHARD_CORPUS_DIR")
fi
exec /usr/bin/python3 "$HERE/dims_check.py" "$BIN" "$SRC" "${corpus[@]}"
