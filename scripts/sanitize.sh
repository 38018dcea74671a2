#!/usr/bin/env bash
# The test suite under sanitizers, with clang: every unit and CLI test with
# ASan+UBSan (build-asan/, shared with scripts/fuzz.sh), then the
# concurrency tests (LibraryTest: eight plans on eight threads; CompileOracle
# and CompileJudge: candidates on four threads, the latter written by the
# library's WriteOutputs) with TSan (build-tsan/, their own binary only).
# Left to scripts/test.sh: the install, README, onnxruntime and corpus tests
# (they build or run other programs) and the Python module's (python3 is not
# sanitized). Reports in third-party libraries are suppressed by name in
# scripts/sanitizer_suppressions/ (each says why).
# Usage: scripts/sanitize.sh [asan|tsan]...  (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache when the machine has it (a fresh Debian 12 machine may not).
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
supp=$PWD/scripts/sanitizer_suppressions
kinds=("$@")
[ ${#kinds[@]} -eq 0 ] && kinds=(asan tsan)
for kind in "${kinds[@]}"; do
  start=$(date +%s)
  case $kind in
    asan)
      # autoshard_bound_table: bound_table_cli_test runs it.
      scripts/sanitize_build.sh autoshard autoshard_tests fake_compiler onnx_text_to_model \
        autoshard_bound_table
      echo "== asan: built in $(( $(date +%s) - start )) s"
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
        LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp \
        AUTOSHARD_SANITIZED=1 ctest --test-dir build-asan --output-on-failure -j"$(nproc)" \
        -E 'install_test|readme_test|split_ort_test|corpus_test|python_test'
      ;;
    tsan)
      scripts/setup.sh
      scripts/setup_sanitizers.sh
      cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
        -DAUTOSHARD_SANITIZE=thread -DAUTOSHARD_WERROR=ON >/dev/null
      cmake --build build-tsan -j"$(nproc)" --target autoshard_concurrency_tests
      echo "== tsan: built in $(( $(date +%s) - start )) s"
      TSAN_OPTIONS=halt_on_error=1:suppressions=$supp/tsan.supp build-tsan/autoshard_concurrency_tests
      ;;
    *) echo "usage: scripts/sanitize.sh [asan|tsan]..." >&2; exit 2 ;;
  esac
  echo "== $kind: $(( $(date +%s) - start )) s"
done
