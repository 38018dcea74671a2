#!/usr/bin/env bash
# Issue 29 point 4: autoshard's plans for GPT-2 S/M/L/XL with the embedding
# tied to the LM head, against Graphcore's published layers-per-IPU splits
# (graphcore/examples nlp/gpt2/pytorch; in every one IPU 0 holds the
# embedding and its first layers, IPU d the next layers_per_ipu[d], the last
# one also the final LayerNorm, and the LM head returns to IPU 0 as a last
# stage):
#   small   4 IPUs  0 4 4 4            run/pretraining_small.sh (training;
#                                      its inference runs on one IPU)
#   medium  4 IPUs  1 7 8 8            tasks/run_text_generator.sh
#   large   8 IPUs  1 5 5 5 5 5 5 5    tasks/run_text_generator.sh
#   xl      8 IPUs  1 6 6 7 7 7 7 7    run/inference_xlarge.sh
# Columns: each plan's bottleneck (ms per step) and whether it fits;
# autoshard's stages and the IPUs of wte's readers (Gather, LM head).
# Both plans are judged by autoshard's own model: Graphcore's split through
# `apply` with it as a sharding config, autoshard's through `shard`, both
# with --weights variable --precision fp16 (Graphcore runs model.half()),
# batch 1. The claim checked: autoshard's plan is never slower and fits
# wherever Graphcore's fits ("ok" in the last column, else "WORSE").
# Usage: bench/gpt2_graphcore_splits.sh [AUTOSHARD_BINARY] [SEQ] [EXTRA...]
# (defaults: build/autoshard, sequence 128; EXTRA flags go to both runs,
# e.g. --device NAME; ONLY="small xl" runs those rows). The models are
# bench/make_gpt2_model.py --tied --sparse-weights (weights in a sparse
# file: no disk blocks), written under a temporary folder only. Exits 1
# when a row is WORSE.
set -euo pipefail
BIN=${1:-build/autoshard}
SEQ=${2:-128}
shift $(($# > 2 ? 2 : $#))
EXTRA=("$@")
SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3  # Debian's, with python3-onnx and python3-numpy
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# field JSON PATH...: a figure of a plan file ("-" when absent).
field() {
  "$PY" - "$@" <<'EOF'
import json, sys
plan = json.load(open(sys.argv[1]))
for path in sys.argv[2:]:
    v = plan
    for key in path.split("."):
        v = v[int(key)] if isinstance(v, list) else v.get(key) if isinstance(v, dict) else None
        if v is None:
            break
    print("-" if v is None else v, end=" ")
print()
EOF
}

# yaml SPLIT...: Graphcore's split as a PopRT sharding config.
yaml() {
  local k=$# done=0 d=0 last
  for n in "$@"; do
    done=$((done + n))
    if [ $d -eq $((k - 1)) ]; then last=/ln_f/Add_1
    elif [ $done -eq 0 ]; then last=/embed/Add
    else last=/h.$((done - 1))/Add_1
    fi
    printf -- '- {node: %s, device: %d, stage: %d}\n' "$last" $d $d
    d=$((d + 1))
  done
  printf -- '- {node: /lm_head/Reshape_1, device: 0, stage: %d}\n' "$k"
}

printf '%-7s %4s %-16s | %9s %-5s | %9s %-5s %6s %8s %7s | %s\n' \
  model IPUs graphcore gc_ms fits auto_ms fits stages wte_ipus speedup \
  verdict
worse=0
# row NAME LAYERS D_MODEL HEADS SPLIT...
row() {
  local name=$1 layers=$2 d=$3 heads=$4
  case " ${ONLY:-$name} " in *" $name "*) ;; *) return 0 ;; esac
  shift 4
  local k=$#
  "$PY" "$SRC/bench/make_gpt2_model.py" --tied --sparse-weights "$TMP/$name.onnx" \
    "$layers" "$d" "$heads" 50257 1024 "$SEQ"
  yaml "$@" >"$TMP/$name.yaml"
  local flags=(--weights variable --precision fp16 --batch-size 1 -q "${EXTRA[@]}")
  "$BIN" apply "$TMP/$name.onnx" --sharding-config "$TMP/$name.yaml" \
    -o "$TMP/gc.onnx" --plan "$TMP/$name.gc.json" "${flags[@]}" >/dev/null
  "$BIN" shard "$TMP/$name.onnx" --num-ipus "$k" -o "$TMP/as.onnx" \
    --plan "$TMP/$name.as.json" "${flags[@]}" >/dev/null
  local gc_s gc_fit as_s as_fit stages
  read -r gc_s gc_fit <<<"$(field "$TMP/$name.gc.json" performance.bottleneck_s fits)"
  read -r as_s as_fit stages <<<"$(field "$TMP/$name.as.json" performance.bottleneck_s fits \
    stages.num_stages)"
  # The IPUs of wte's two readers in autoshard's plan.
  local wte
  wte=$("$PY" - "$TMP/$name.as.json" <<'EOF'
import json, sys
ipu = {n["node"]: n.get("ipu", 0) for n in json.load(open(sys.argv[1]))["nodes"]}
print(f'{ipu["/wte/Gather"]},{ipu["/lm_head/Gemm"]}')
EOF
)
  local verdict=ok
  if "$PY" -c "import sys; sys.exit(0 if float('$as_s') <= float('$gc_s') * (1 + 1e-9) else 1)"; then :
  else verdict=WORSE; fi
  if [ "$gc_fit" = True ] && [ "$as_fit" != True ]; then verdict=WORSE; fi
  # --weights variable: the embedding's two readers must share an IPU.
  if [ "${wte%,*}" != "${wte#*,}" ]; then verdict=WORSE; fi
  [ $verdict = ok ] || worse=1
  printf '%-7s %4d %-16s | %9.4f %-5s | %9.4f %-5s %6s %8s %6.3fx | %s\n' \
    "$name" "$k" "$(echo "$@" | tr ' ' ,)" "$("$PY" -c "print($gc_s * 1e3)")" \
    "$gc_fit" "$("$PY" -c "print($as_s * 1e3)")" "$as_fit" "${stages/-/$k}" \
    "$wte" "$("$PY" -c "print($gc_s / $as_s)")" "$verdict"
}
row small 12 768 12 0 4 4 4
row medium 24 1024 16 1 7 8 8
row large 36 1280 20 1 5 5 5 5 5 5 5
row xl 48 1600 25 1 6 6 7 7 7 7 7
exit $worse
