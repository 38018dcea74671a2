#!/usr/bin/env bash
# Issue 5's table: every model under a folder (default ../shared/models) onto
# 2, 4 and 8 IPUs with raw, search, optimal and auto on ipu2 at batch 1. Per
# row: the lower bound on the bottleneck, each strategy's bottleneck divided
# by it ("*": does not fit), which split auto chose, the order optimal sliced,
# and the planning seconds; then auto's median and worst gap.
# Usage: bench/strategies_corpus.sh [MODELS_DIR] [IPU_COUNTS]   e.g. 2,4,8
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-../shared/models}
IPUS=${2:-2,4,8}
scripts/build.sh autoshard_strategy_table >/dev/null
mapfile -t models < <(find "$DIR" -name '*.onnx' | sort)
build/autoshard_strategy_table --ipus "$IPUS" "${models[@]}"
