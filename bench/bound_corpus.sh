#!/usr/bin/env bash
# Issue 19's and 28's table: every model under a folder (default
# ../shared/models) onto each IPU count with auto on ipu2 at batch 1: the
# bottleneck before and after the ideal DP and the moves between ideals, the
# old and the certified bound, both gaps, seconds and the reason of every
# certified gap above 10% (bench/bound_table.cc); then issue 28's verdict
# over every row (bench/gap_summary.py: median and worst per IPU count, rows
# over 10 s, plans slower than a before table).
# With EXPORT=1 it also plans models the corpus does not hold: torchvision
# detectors with an FPN and their post-processing (Faster/Mask/Keypoint
# R-CNN, RetinaNet, FCOS), segmenters (DeepLabV3, LR-ASPP), a ViT-B/16, a
# Swin-T and a ConvNeXt-T (bench/export_gap_models.py, random weights; needs
# Debian's python3-torch and python3-torchvision), GPT-2 small (bench/make_gpt2_model.py) and the
# Llama-2-70B shapes at sequence 512 in fp16 (../shared/tools/make_llama_graph.py),
# at the same IPU counts (EXPORT_IPUS to change them).
# Environment: OUT (a folder to keep the tables in, one file per model set:
# corpus.md, exported.md, llama.md; default a temporary folder, removed),
# BEFORE (a folder of earlier tables: gap_summary.py --before), GAP_MODELS
# (a folder holding the exported models already, to skip exporting).
# Usage: bench/bound_corpus.sh [MODELS_DIR] [IPU_COUNTS] [BOUND_SECONDS]
#        [SEARCH_SECONDS] [EXPORT]
#        (defaults: ../shared/models 2,4,8,16,32,64,128,256 10 20 0)
# Exit code: gap_summary.py's (0 when issue 28's target is met, 1 when not).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-../shared/models}
IPUS=${2:-2,4,8,16,32,64,128,256}
BOUND=${3:-10}
SEARCH=${4:-20}
EXPORT=${5:-0}
EXPORT_IPUS=${EXPORT_IPUS:-$IPUS}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
OUT=${OUT:-$TMP}
mkdir -p "$OUT"
scripts/build.sh autoshard_bound_table >/dev/null
table() { build/autoshard_bound_table --bound-seconds "$BOUND" --max-search-seconds "$SEARCH" "$@"; }
# The CLI's outputs (*.sharded.onnx) are not models of the corpus.
mapfile -t models < <(find "$DIR" -name '*.onnx' ! -name '*.sharded.onnx' | sort)
# A model the table cannot load or plan gets failure rows (the tool then
# exits 1): the verdict below counts them, so go on.
table --ipus "$IPUS" "${models[@]}" | tee "$OUT/corpus.md" || true
if [ "$EXPORT" = 1 ]; then
  GAP=${GAP_MODELS:-}
  if [ -z "$GAP" ]; then
    GAP=$TMP/models
    mkdir -p "$GAP"
    /usr/bin/python3 bench/export_gap_models.py "$GAP" >/dev/null 2>"$TMP/export.log"
    /usr/bin/python3 bench/make_gpt2_model.py "$GAP/gpt2_small.onnx" >/dev/null
    /usr/bin/python3 ../shared/tools/make_llama_graph.py "$GAP/llama70b_s512" \
      80 8192 28672 64 8 32000 512 >/dev/null
  fi
  mapfile -t exported < <(find "$GAP" -name '*.onnx' ! -path '*llama*' | sort)
  table --ipus "$EXPORT_IPUS" "${exported[@]}" | tee "$OUT/exported.md" || true
  # In fp16 as bench/pod_bench.sh plans it (in fp32 its 276 GB of weights
  # fit on no count up to 256 IPUs).
  table --ipus "$EXPORT_IPUS" --precision fp16 "$GAP/llama70b_s512/model.onnx" | tee "$OUT/llama.md" || true
fi
echo
before=()
if [ -n "${BEFORE:-}" ]; then
  mapfile -t before < <(find "$BEFORE" -name '*.md' | sort)
  before=(--before "${before[@]}" --)
fi
/usr/bin/python3 bench/gap_summary.py "${before[@]}" "$OUT"/*.md
