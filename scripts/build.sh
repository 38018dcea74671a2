#!/usr/bin/env bash
# Installs missing packages and builds autoshard into ./build (warnings are
# errors). Usage: scripts/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUTOSHARD_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
