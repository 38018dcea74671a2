#!/usr/bin/env bash
# Installs missing packages and builds autoshard into ./build (warnings are
# errors). Usage: scripts/build.sh [TARGET...]  (default: everything)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUTOSHARD_WERROR=ON >/dev/null
if [ $# -gt 0 ]; then
  for target in "$@"; do cmake --build build -j"$(nproc)" --target "$target"; done
else
  cmake --build build -j"$(nproc)"
fi
