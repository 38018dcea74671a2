#!/usr/bin/env bash
# The README's first command: set up, build, and shard the bundled model
# (SqueezeNet 1.1) onto 4 IPUs. Outputs go to build/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh autoshard
mkdir -p build/demo
build/autoshard shard models/squeezenet1_1.onnx --num-ipus 4 --batch-size 1 \
  -o build/demo/squeezenet1_1.sharded.onnx \
  --sharding-config build/demo/squeezenet1_1.sharding.yaml \
  --plan build/demo/squeezenet1_1.plan.json
