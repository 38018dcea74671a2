#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang, ASan and UBSan in
# build-asan/ (scripts/sanitize_build.sh, shared with scripts/sanitize.sh),
# then runs each for FUZZ_SECONDS (default 60) from its seeds
# (fuzz/corpus/TARGET, and fuzz/seeds/model/*.txt converted for the model
# targets) with its dictionary (fuzz/dict/). First it replays every earlier
# finding, tests/fuzz_regressions/TARGET/*. Fails on a crash, a sanitizer
# report, a timeout (10 s per input) or 2 GB of memory; the input is left in
# build-asan/findings/TARGET/ (add it to tests/fuzz_regressions/ with the
# fix). FUZZ_SECONDS=0 replays the findings and runs each seed once, without
# fuzzing: deterministic, as CI runs it. Usage: scripts/fuzz.sh [TARGET...]
# (default: all six)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_model fuzz_shapes fuzz_model_stream fuzz_sharding_config fuzz_device fuzz_compiler_output)
scripts/sanitize_build.sh "${targets[@]}" fuzz_text_to_model
# Seed models from ONNX text, for the two model targets.
seeds=build-asan/seeds/model
mkdir -p "$seeds"
for t in fuzz/seeds/model/*.txt; do
  build-asan/fuzz/fuzz_text_to_model "$seeds/$(basename "$t" .txt).onnx" <"$t"
done
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=0
for t in "${targets[@]}"; do
  case $t in
    fuzz_model | fuzz_shapes) dict=fuzz/dict/onnx.dict; from=("$seeds") ;;
    fuzz_model_stream) dict=fuzz/dict/onnx.dict; from=("$seeds" fuzz/corpus/$t) ;;
    fuzz_sharding_config) dict=fuzz/dict/yaml.dict; from=(fuzz/corpus/$t) ;;
    fuzz_device) dict=fuzz/dict/device.dict; from=(fuzz/corpus/$t) ;;
    *) dict=fuzz/dict/compiler.dict; from=(fuzz/corpus/$t) ;;
  esac
  findings=build-asan/findings/$t
  corpus=build-asan/corpus/$t
  mkdir -p "$findings" "$corpus"
  if [ -d "tests/fuzz_regressions/$t" ] && [ -n "$(ls -A "tests/fuzz_regressions/$t")" ]; then
    echo "== $t: replaying tests/fuzz_regressions/$t"
    timeout --signal=KILL 120 build-asan/fuzz/"$t" -rss_limit_mb=2048 -timeout=10 "tests/fuzz_regressions/$t"/* || failed=1
  fi
  if [ "$seconds" -eq 0 ]; then
    # FUZZ_SECONDS=0: no fuzzing, only every seed run once (-runs=0 runs the
    # corpus folders' inputs and stops), so the result is the same each time.
    echo "== $t: running its seeds once (FUZZ_SECONDS=0)"
    timeout --signal=KILL 300 build-asan/fuzz/"$t" -runs=0 -rss_limit_mb=2048 -timeout=10 \
      "${from[@]}" 2>"build-asan/$t.log" || { failed=1; echo "FAIL: $t on a seed (build-asan/$t.log)"; }
    continue
  fi
  echo "== $t: fuzzing for $seconds s"
  start=$(date +%s)
  # timeout: libFuzzer's own -timeout report can deadlock in ASan's
  # allocator when the input loops allocating (it did on yaml-cpp's LoadAll).
  if ! timeout --signal=KILL $((seconds + 60)) build-asan/fuzz/"$t" -max_total_time="$seconds" -dict="$dict" -rss_limit_mb=2048 \
      -timeout=10 -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" \
      "$corpus" "${from[@]}" 2>"build-asan/$t.log"; then
    failed=1
    echo "FAIL: $t found a crash (build-asan/$t.log, input in $findings/):"
    grep -E "ERROR|SUMMARY|runtime error|==[0-9]+==" "build-asan/$t.log" | head -20
  fi
  echo "$t: $(( $(date +%s) - start )) s, $(grep -E '^stat::number_of_executed_units' "build-asan/$t.log" | awk '{print $2}') runs, corpus $(ls "$corpus" | wc -l) inputs"
done
exit $failed
