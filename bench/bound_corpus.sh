#!/usr/bin/env bash
# Issue 19's table: every model under a folder (default ../shared/models) onto
# 2, 4, 8 and 16 IPUs with auto on ipu2 at batch 1: the bottleneck before and
# after the ideal DP and the moves between ideals, the old and the certified
# bound, both gaps, seconds and the reason of every certified gap above 10%
# (bench/bound_table.cc).
# Issue 28: with EXPORT=1 it also plans models the corpus does not hold,
# written into a temporary folder (removed at the end): torchvision detectors
# with an FPN and their post-processing and a ViT-B/16 (bench/
# export_gap_models.py, random weights; needs Debian's python3-torch and
# python3-torchvision), GPT-2 small (bench/make_gpt2_model.py) and the
# Llama-2-70B shapes at sequence 512 in fp16 (../shared/tools/make_llama_graph.py);
# EXPORT_IPUS (default 8,16,32,64,128,256) are their IPU counts.
# Usage: bench/bound_corpus.sh [MODELS_DIR] [IPU_COUNTS] [BOUND_SECONDS]
#        [SEARCH_SECONDS] [EXPORT]  (defaults: ../shared/models 2,4,8,16 10 60 0)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-../shared/models}
IPUS=${2:-2,4,8,16}
BOUND=${3:-10}
SEARCH=${4:-60}
EXPORT=${5:-0}
EXPORT_IPUS=${EXPORT_IPUS:-8,16,32,64,128,256}
scripts/build.sh autoshard_bound_table >/dev/null
# The CLI's outputs (*.sharded.onnx) are not models of the corpus.
mapfile -t models < <(find "$DIR" -name '*.onnx' ! -name '*.sharded.onnx' | sort)
build/autoshard_bound_table --ipus "$IPUS" --bound-seconds "$BOUND" \
  --max-search-seconds "$SEARCH" "${models[@]}"
if [ "$EXPORT" = 1 ]; then
  TMP=$(mktemp -d)
  trap 'rm -rf "$TMP"' EXIT
  /usr/bin/python3 bench/export_gap_models.py "$TMP" >/dev/null 2>"$TMP/export.log"
  /usr/bin/python3 bench/make_gpt2_model.py "$TMP/gpt2_small.onnx" >/dev/null
  /usr/bin/python3 ../shared/tools/make_llama_graph.py "$TMP/llama70b_seq512" \
    80 8192 28672 64 8 32000 512 >/dev/null
  mapfile -t exported < <(find "$TMP" -name '*.onnx' ! -path '*llama*' | sort)
  build/autoshard_bound_table --ipus "$EXPORT_IPUS" --bound-seconds "$BOUND" \
    --max-search-seconds "$SEARCH" "${exported[@]}"
  # In fp16 as bench/pod_bench.sh plans it (in fp32 its 276 GB of weights
  # fit on no count up to 256 IPUs).
  build/autoshard_bound_table --ipus "$EXPORT_IPUS" --bound-seconds "$BOUND" \
    --max-search-seconds "$SEARCH" --precision fp16 "$TMP/llama70b_seq512/model.onnx"
fi
