#!/usr/bin/env bash
# Lists the longest function bodies of the C++ sources (STYLE.md: functions
# short, ~80 lines at most), longest first, as "LINES FILE:LINE NAME":
#   scripts/long_functions.sh [COUNT] [PATH...]   (default 20, the whole tree)
# A definition is what Universal Ctags calls a function; its length runs from
# the tag's line to its end line (ctags' --fields=+e), so a lambda counts in
# the function that holds it.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-20}
shift || true
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=(bench cmd costmodel fuzz graph python sharder tests)
find "${paths[@]}" \( -name '*.cc' -o -name '*.h' \) -print0 |
  xargs -0 ctags -x --language-force=C++ --kinds-C++=f --fields=+e \
    --_xformat='%{end} %{line} %{input} %{name}' 2>/dev/null |
  awk '$1 > 0 { printf "%d %s:%d %s\n", $1 - $2 + 1, $3, $2, $4 }' |
  sort -k1,1nr -k2 | head -n "$count"
