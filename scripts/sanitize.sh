#!/usr/bin/env bash
# The test suite under sanitizers, with clang: every unit and CLI test with
# ASan+UBSan (build-asan/), then the concurrency test (LibraryTest: eight
# plans on eight threads) with TSan (build-tsan/). The install, README and
# onnxruntime tests are left to scripts/test.sh (they build or run other
# programs, not autoshard's code). Usage: scripts/sanitize.sh [asan|tsan]...
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup_sanitizers.sh
export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
kinds=("$@")
[ ${#kinds[@]} -eq 0 ] && kinds=(asan tsan)
for kind in "${kinds[@]}"; do
  start=$(date +%s)
  case $kind in
    asan)
      cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
        -DAUTOSHARD_SANITIZE=address,undefined -DAUTOSHARD_WERROR=ON >/dev/null
      cmake --build build-asan -j"$(nproc)" --target autoshard autoshard_tests fake_compiler onnx_text_to_model
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        AUTOSHARD_SANITIZED=1 ctest --test-dir build-asan --output-on-failure -j"$(nproc)" \
        -E 'install_test|readme_test|split_ort_test|corpus_test'
      ;;
    tsan)
      cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
        -DAUTOSHARD_SANITIZE=thread -DAUTOSHARD_WERROR=ON >/dev/null
      cmake --build build-tsan -j"$(nproc)" --target autoshard_tests
      TSAN_OPTIONS=halt_on_error=1 build-tsan/autoshard_tests --gtest_filter='LibraryTest.*'
      ;;
    *) echo "usage: scripts/sanitize.sh [asan|tsan]..." >&2; exit 2 ;;
  esac
  echo "== $kind: $(( $(date +%s) - start )) s"
done
