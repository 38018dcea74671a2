#!/usr/bin/env bash
# The README's second command: set up, build, and run every test (unit tests,
# CLI tests, the Python module's tests with Debian's pytest, the bundled model
# and its split checked in onnxruntime, the HTML page in headless Chromium;
# plus every model under $AUTOSHARD_CORPUS_DIR when it is set).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
scripts/setup_ort.sh
scripts/setup_browser.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
