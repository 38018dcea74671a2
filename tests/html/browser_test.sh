#!/usr/bin/env bash
# The --html page in a real browser, and --graph with and without Graphviz.
# Usage: tests/html/browser_test.sh AUTOSHARD_BINARY SOURCE_DIR
# For the bundled model (shard on 4 IPUs, apply, a split that revisits IPU 0,
# inspect) and, when $AUTOSHARD_CORPUS_DIR holds it,
# tv_ssdlite320_mobilenet_v3_large.onnx
# (about 3,000 nodes): headless Chromium opens the page
# (scripts/render_page.sh) and tests/html/check_page.js checks that no script
# error was logged, every chart is there with one row per IPU and bars in
# proportion, every figure shown equals the plan JSON's, the graph has one
# cluster per IPU (and, for the large model, at most 150 boxes), the page
# is self-contained and small, and the screenshot is not blank. Needs
# chromium, node and Graphviz (scripts/setup_browser.sh, scripts/setup.sh).
set -u
BIN=$1
SRC=$2
. "$SRC/tests/lib.sh"
for tool in chromium node dot; do
  if ! command -v $tool >/dev/null; then
    echo "browser_test: $tool is missing; run scripts/setup.sh and scripts/setup_browser.sh (scripts/test.sh does)" >&2
    exit 1
  fi
done
MODEL=$SRC/models/squeezenet1_1.onnx

# check_page NAME KIND JSON [OPTIONS...]: renders $TMP/NAME.html and checks it.
check_page() {
  local name=$1 kind=$2 json=$3
  shift 3
  if ! "$SRC/scripts/render_page.sh" "$TMP/$name.html" "$TMP/$name"; then
    bad "$name: the browser did not render the page"
    return
  fi
  if node "$SRC/tests/html/check_page.js" --kind "$kind" --page "$TMP/$name.html" \
      --dom "$TMP/$name.dom.html" --log "$TMP/$name.log" --json "$json" \
      --png "$TMP/$name.png" "$@" >"$TMP/$name.check"; then
    ok
  else
    bad "$name: page checks"
    grep -v '^ok' "$TMP/$name.check"
  fi
  echo "$name: $(wc -c <"$TMP/$name.html") bytes, $(grep -c '^ok' "$TMP/$name.check") checks passed"
}

# shard, apply and inspect pages of the bundled model.
expect 0 "shard --html --graph" -- "$BIN" shard "$MODEL" --num-ipus 4 --batch-size 1 \
  -o "$TMP/sq.onnx" --plan "$TMP/sq.plan.json" --sharding-config "$TMP/sq.yaml" \
  --html "$TMP/sq.html" --graph "$TMP/sq.svg"
stdout_has "wrote $TMP/sq.html" "shard lists the page"
has "$TMP/sq.svg" 'class="cluster"' "the graph is Graphviz's SVG"
check_page sq plan "$TMP/sq.plan.json" --graph yes
expect 0 "apply --html" -- "$BIN" apply "$MODEL" --batch-size 1 --sharding-config "$TMP/sq.yaml" \
  -o "$TMP/ap.onnx" --plan "$TMP/ap.plan.json" --html "$TMP/ap.html"
check_page ap plan "$TMP/ap.plan.json" --graph yes
# A hand split whose stage 2 returns to IPU 0 (issue 29; the last point moved
# to device 0): 4 stages on 3 IPUs, the timeline draws each stage's boxes on
# its IPU's row.
sed '$ s/device: [0-9]*/device: 0/' "$TMP/sq.yaml" >"$TMP/rv.yaml"
expect 0 "apply a revisiting split --html" -- "$BIN" apply "$MODEL" --batch-size 1 \
  --sharding-config "$TMP/rv.yaml" -o "$TMP/rv.onnx" --plan "$TMP/rv.plan.json" --html "$TMP/rv.html"
stdout_has "4 stages on 3 IPUs" "the hand split revisits IPU 0"
has "$TMP/rv.html" ">IPU 0 (stages 0, 2)</text>" "the timeline's IPU 0 row runs stages 0 and 2"
check_page rv plan "$TMP/rv.plan.json" --graph yes
expect 0 "inspect --html" -- "$BIN" inspect "$MODEL" --batch-size 1 --html "$TMP/in.html"
expect 0 "inspect --json" -- "$BIN" inspect "$MODEL" --batch-size 1 --json
cp "$TMP/out" "$TMP/in.json"
check_page in inspect "$TMP/in.json"

# --graph FILE.dot, bad names, and no Graphviz on PATH.
expect 0 "--graph .dot" -- "$BIN" shard "$MODEL" --num-ipus 2 -o "$TMP/d.onnx" --graph "$TMP/d.dot" -q
has "$TMP/d.dot" "subgraph cluster_ipu1" "the DOT file has a cluster per IPU"
has "$TMP/d.dot" "to IPU 1: " "the DOT file shows a cut tensor as stubs"
expect 0 "--graph .png" -- "$BIN" shard "$MODEL" --num-ipus 2 -o "$TMP/p.onnx" --graph "$TMP/p.png" -q
[ "$(head -c 8 "$TMP/p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && ok || bad "--graph .png writes a PNG file"
expect 0 "--graph .pdf" -- "$BIN" shard "$MODEL" --num-ipus 2 -o "$TMP/f.onnx" --graph "$TMP/f.pdf" -q
[ "$(head -c 5 "$TMP/f.pdf")" = "%PDF-" ] && ok || bad "--graph .pdf writes a PDF file"
expect 2 "--graph .gif" -- "$BIN" shard "$MODEL" --num-ipus 2 -o "$TMP/e.onnx" --graph "$TMP/e.gif"
stderr_has "must end with .svg, .png, .pdf or .dot" "a bad --graph name is refused"
[ ! -e "$TMP/e.onnx" ] && ok || bad "a refused --graph leaves no output"
expect 2 "--html names the model" -- "$BIN" inspect "$MODEL" --html "$MODEL"
stderr_has "is an input" "--html never overwrites the model"
expect 2 "--html with several models" -- "$BIN" shard "$MODEL" "$MODEL" --num-ipus 2 \
  --out-dir "$TMP/batch" --html "$TMP/b.html"
stderr_has "take one model" "--html needs one model"
nodot=$TMP/nodot
mkdir -p "$nodot"
expect 2 "--graph .svg without dot" -- env PATH="$nodot" "$BIN" shard "$MODEL" --num-ipus 2 \
  -o "$TMP/n.onnx" --graph "$TMP/n.svg"
stderr_has "apt-get install graphviz" "without dot, .svg says how to install it"
[ ! -e "$TMP/n.onnx" ] && ok || bad "a failed --graph .svg leaves no output"
expect 0 "--graph .dot and --html without dot" -- env PATH="$nodot" "$BIN" shard "$MODEL" \
  --num-ipus 2 -o "$TMP/n.onnx" --graph "$TMP/n.dot" --html "$TMP/n.html" -q
has "$TMP/n.dot" "digraph autoshard" ".dot needs no Graphviz"
has "$TMP/n.html" "apt-get install graphviz" "the page says why it has no graph"

# The large corpus model stays readable and small.
ssd=${AUTOSHARD_CORPUS_DIR:-}/tv_ssdlite320_mobilenet_v3_large.onnx
note="no corpus model"
if [ -n "${AUTOSHARD_CORPUS_DIR:-}" ] && [ -f "$ssd" ]; then
  expect 0 "ssdlite --html --graph" -- "$BIN" shard "$ssd" --num-ipus 4 --batch-size 1 \
    --strategy optimal -o "$TMP/ss.onnx" --plan "$TMP/ss.plan.json" \
    --html "$TMP/ss.html" --graph "$TMP/ss.svg" -q
  check_page ss plan "$TMP/ss.plan.json" --graph yes --max-boxes 150 --max-bytes 3000000
  note="with $(basename "$ssd")"
fi
finish "$note"
