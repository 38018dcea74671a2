#!/usr/bin/env bash
# Issue 19's table: every model under a folder (default ../shared/models) onto
# 2, 4, 8 and 16 IPUs with auto on ipu2 at batch 1: the bottleneck before and
# after the ideal DP and the moves between ideals, the old and the certified
# bound, both gaps, seconds and the reason of every certified gap above 10%
# (bench/bound_table.cc).
# Usage: bench/bound_corpus.sh [MODELS_DIR] [IPU_COUNTS] [BOUND_SECONDS]
#        [SEARCH_SECONDS]   (defaults: ../shared/models 2,4,8,16 10 60)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-../shared/models}
IPUS=${2:-2,4,8,16}
BOUND=${3:-10}
SEARCH=${4:-60}
scripts/build.sh autoshard_bound_table >/dev/null
# The CLI's outputs (*.sharded.onnx) are not models of the corpus.
mapfile -t models < <(find "$DIR" -name '*.onnx' ! -name '*.sharded.onnx' | sort)
build/autoshard_bound_table --ipus "$IPUS" --bound-seconds "$BOUND" \
  --max-search-seconds "$SEARCH" "${models[@]}"
