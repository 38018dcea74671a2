#!/usr/bin/env bash
# scripts/check_layers.sh refuses what it is for (issue 26 point 4): an
# include of an old path (the folders before solver/, writers/, pod/ and
# base/ were made) and an include that runs up a layer; it accepts a tree
# whose includes run down. Each case is a throw-away git tree in a
# temporary folder holding the script and one or two files.
#   tests/check_layers_test.sh SOURCE_DIR
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

# tree NAME FILE=INCLUDE...: a git tree with each FILE holding one include.
tree() {
  local dir=$work/$1
  shift
  mkdir -p "$dir/scripts"
  cp "$src/scripts/check_layers.sh" "$dir/scripts/"
  git -C "$dir" init -q
  local spec file header
  for spec in "$@"; do
    file=${spec%%=*}
    header=${spec#*=}
    mkdir -p "$dir/$(dirname "$file")"
    echo "#include \"$header\"" >"$dir/$file"
  done
  echo "$dir"
}

# expect NAME RC PATTERN FILE=INCLUDE...
expect() {
  local name=$1 want_rc=$2 pattern=$3
  shift 3
  local dir out rc=0
  dir=$(tree "$name" "$@")
  out=$(bash "$dir/scripts/check_layers.sh" "$dir" 2>&1) || rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! grep -qF -- "$pattern" <<<"$out"; then
    echo "FAIL $name: rc $rc (want $want_rc), output:"
    echo "$out"
    fail=1
  else
    echo "ok   $name"
  fi
}

# Old paths, in code and in a client (tests/ is not layer-checked, but an
# old path is refused there too).
expect old_strategies 1 "old path sharder/strategies/registry.h (now solver/strategies/registry.h)" \
  cmd/a.cc=sharder/strategies/registry.h
expect old_outputs 1 "old path sharder/outputs/emit.h (now writers/emit.h)" \
  tests/a_test.cc=sharder/outputs/emit.h
expect old_split 1 "(now writers/split/split.h)" python/m.cc=sharder/split/split.h
expect old_node_bound 1 "(now costmodel/node_bound.h)" sharder/x.cc=sharder/pod/node_bound.h
expect old_pod 1 "(now pod/launch.h)" cmd/x.cc=sharder/pod/launch.h
expect old_base 1 "(now base/status_macros.h)" graph/x.cc=graph/status_macros.h
expect old_planner 1 "(now sharder/plan_prepared.h)" cmd/x.cc=sharder/planner.h
# Up a layer: the solver may not include a writer, base may not include
# graph/.
expect up_solver 1 "solver/strategies -> writers/emit.h" \
  solver/strategies/x.cc=writers/emit.h
expect up_base 1 "base -> graph/graph.h" base/x.h=graph/graph.h
# Down is fine, and so is the documented exception.
expect down 0 "" cmd/x.cc=writers/emit.h writers/y.cc=solver/bound/certify.h \
  solver/bound/z.cc=solver/strategies/strategy.h pod/w.cc=costmodel/problem.h \
  writers/v.cc=sharder/autoshard.h graph/u.cc=base/plural.h
exit "$fail"
