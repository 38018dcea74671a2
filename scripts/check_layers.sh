#!/usr/bin/env bash
# Lists every #include that runs back up a layer (docs/architecture.md,
# "Layers") as "FILE:LINE: FOLDER -> HEADER", and exits 1 when there is one:
#   scripts/check_layers.sh [ROOT]   (default: this checkout)
# The layers, top to bottom: cmd -> sharder -> costmodel -> graph -> proto,
# and inside sharder/ the pipeline (sharder/ itself) -> oracle -> outputs ->
# split -> bound -> strategies -> pod. A file may include its own folder and
# the folders below it; the few documented exceptions are listed in
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
    sharder/outputs) echo 60 ;;
    sharder/split) echo 50 ;;
    sharder/bound) echo 40 ;;
    sharder/strategies) echo 30 ;;
    sharder/pod) echo 20 ;;
    costmodel) echo 10 ;;
    graph) echo 5 ;;
    proto) echo 1 ;;
    *) echo "" ;;
  esac
}

# The layer a file or header belongs to: its sharder/ sub-folder, else its
# top folder.
layer_of() {
  local path=$1
  case "$path" in
    sharder/*/*) echo "${path%%/*}/$(echo "$path" | cut -d/ -f2)" ;;
    *) echo "${path%%/*}" ;;
  esac
}

# "FOLDER -> HEADER" pairs that run up on purpose.
allowed=(
  # The public API's types (Plan, Options), below every writer. (The oracle
  # needs neither: planning hands it its candidate writer.)
  "sharder/outputs -> sharder/autoshard.h"
  "sharder/outputs -> sharder/options.h"
  # The manifest's JSON numbers, a leaf.
  "sharder/split -> sharder/outputs/json_numbers.h"
)

is_allowed() {
  local pair=$1 a
  for a in "${allowed[@]}"; do [ "$a" = "$pair" ] && return 0; done
  return 1
}

found=0
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
done < <(git ls-files -co --exclude-standard -- cmd sharder costmodel graph proto |
  grep -E '\.(cc|h)$')
if [ "$found" -ne 0 ]; then
  echo "check_layers: includes that run up a layer (docs/architecture.md)" >&2
fi
exit "$found"
