# Shared by the shell tests (source it after `set -u`): a temporary folder
# $TMP removed on exit, pass/fail counters and the checks below. A script
# ends with `finish [NOTE]`, which prints "N passed, M failed" and exits
# non-zero when anything failed.
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect CODE DESCRIPTION -- COMMAND...: runs COMMAND (stdout to $TMP/out,
# stderr to $TMP/err) and checks its exit code.
expect() {
  local want=$1 what=$2
  shift 3
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok; else bad "$what: exit $got, want $want"; head -40 "$TMP/err"; fi
}
# has FILE TEXT DESCRIPTION: FILE contains TEXT.
has() {
  if grep -qF -- "$2" "$1"; then ok; else bad "$3: $(basename "$1") lacks '$2'"; head -40 "$1"; fi
}
# lacks FILE TEXT DESCRIPTION: FILE does not contain TEXT.
lacks() {
  if grep -qF -- "$2" "$1"; then bad "$3: $(basename "$1") has '$2'"; else ok; fi
}
# stderr_has / stdout_has TEXT DESCRIPTION: the last command's stderr/stdout
# contains TEXT.
stderr_has() {
  if grep -qF -- "$1" "$TMP/err"; then ok; else bad "$2: stderr lacks '$1'"; head -40 "$TMP/err"; fi
}
stdout_has() {
  if grep -qF -- "$1" "$TMP/out"; then ok; else bad "$2: stdout lacks '$1'"; head -40 "$TMP/out"; fi
}

# finish [NOTE]: the summary line, and the exit status.
finish() {
  echo "$pass passed, $fail failed${1:+ ($1)}"
  [ "$fail" -eq 0 ]
}
