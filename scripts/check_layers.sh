#!/usr/bin/env bash
# Lists every #include that runs back up a layer (docs/architecture.md,
# "Layers") as "FILE:LINE: FOLDER -> HEADER", and every #include of a path
# the old layout had as "FILE:LINE: old path HEADER (now NEW)"; exits 1 when
# there is either (tests/check_layers_test.sh checks both refusals):
#   scripts/check_layers.sh [ROOT]   (default: this checkout)
# The layers, top to bottom: cmd -> sharder (the pipeline and API) ->
# sharder/oracle -> writers -> writers/split -> solver/bound ->
# solver/strategies -> pod -> costmodel -> graph -> base -> proto. A file may
# include its own folder and the folders below it; the few documented exceptions are listed in
# `allowed` below (each also in docs/architecture.md's table). The clients
# (bench/, fuzz/, python/, tests/) sit on top and are not checked; a test
# beside the code is checked like the code, except for its tests/ helpers.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# FOLDER -> rank; a higher rank may include a lower one.
rank_of() {
  case "$1" in
    cmd) echo 90 ;;
    sharder) echo 80 ;;
    sharder/oracle) echo 70 ;;
    writers) echo 60 ;;
    writers/split) echo 50 ;;
    solver/bound) echo 40 ;;
    solver/strategies) echo 30 ;;
    pod) echo 20 ;;
    costmodel) echo 10 ;;
    graph) echo 5 ;;
    base) echo 3 ;;
    proto) echo 1 ;;
    *) echo "" ;;
  esac
}

# The layer a file or header belongs to: its sub-folder of sharder/, solver/
# or writers/, else its top folder.
layer_of() {
  local path=$1
  case "$path" in
    sharder/*/* | solver/*/* | writers/*/*) echo "${path%%/*}/$(echo "$path" | cut -d/ -f2)" ;;
    *) echo "${path%%/*}" ;;
  esac
}

# "FOLDER -> HEADER" pairs that run up on purpose.
allowed=(
  # The public API's types (Plan, Options), below every writer. (The oracle
  # needs neither: planning hands it its candidate writer.)
  "writers -> sharder/autoshard.h"
  "writers -> sharder/options.h"
  # The manifest's JSON numbers, a leaf.
  "writers/split -> writers/json_numbers.h"
)

is_allowed() {
  local pair=$1 a
  for a in "${allowed[@]}"; do [ "$a" = "$pair" ] && return 0; done
  return 1
}

# Where the files of the old layout went (issue 26 point 4): an include of
# an old path is refused everywhere, clients included, with its new home.
new_home_of() {
  case "$1" in
    sharder/strategies/* | sharder/bound/*) echo "solver/${1#sharder/}" ;;
    sharder/outputs/*) echo "writers/${1#sharder/outputs/}" ;;
    sharder/split/*) echo "writers/${1#sharder/}" ;;
    sharder/pod/node_bound.h) echo "costmodel/node_bound.h" ;;
    sharder/pod/*) echo "${1#sharder/}" ;;
    sharder/plan.h) echo "sharder/ipu_summaries.h" ;;
    sharder/planner.h) echo "sharder/plan_prepared.h" ;;
    sharder/pod_planner.h) echo "sharder/plan_pod.h" ;;
    graph/status_macros.h | graph/saturating.h | graph/plural.h | graph/step_counts.h | graph/output_guard.h)
      echo "base/${1#graph/}" ;;
    *) echo "" ;;
  esac
}

found=0
while IFS=: read -r file line header; do
  home=$(new_home_of "$header")
  [ -n "$home" ] || continue
  echo "$file:$line: old path $header (now $home)"
  found=1
done < <(git ls-files -co --exclude-standard |
  grep -E '\.(cc|h|cpp)$' | grep -v -E '^(build|tests/ort/node_modules)/' |
  xargs -r grep -n '^#include "' /dev/null |
  sed -E 's/^([^:]*):([0-9]+):#include "([^"]*)".*/\1:\2:\3/')

while IFS= read -r file; do
  from=$(layer_of "$file")
  from_rank=$(rank_of "$from")
  [ -n "$from_rank" ] || continue
  while IFS=: read -r line header; do
    to=$(layer_of "$header")
    to_rank=$(rank_of "$to")
    [ -n "$to_rank" ] || continue  # tests/ helpers, libraries
    [ "$to" = "$from" ] && continue
    [ "$to_rank" -lt "$from_rank" ] && continue
    is_allowed "$from -> $header" && continue
    echo "$file:$line: $from -> $header"
    found=1
  done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]*)".*/\1:\2/')
done < <(git ls-files -co --exclude-standard -- cmd sharder writers solver pod costmodel graph base proto |
  grep -E '\.(cc|h)$')
if [ "$found" -ne 0 ]; then
  echo "check_layers: includes that run up a layer or name an old path (docs/architecture.md)" >&2
fi
exit "$found"
