#!/usr/bin/env bash
# README.md's examples work as written: every ```sh block runs (in order, with
# bash -e, from a scratch folder laid out like the repository's root: build/
# linked to BUILD_DIR, models/ and tests/install_client/ copied), and every
# ```python block with $AUTOSHARD_PYTHON (default /usr/bin/python3) and
# PYTHONPATH=BUILD_DIR/python, unless the line before it says
# "<!-- not run by tests/readme_test.sh: REASON -->";
# every ```cmake and ```cpp block must appear, line by line, in a file of
# tests/install_client/ (which tests/install_test.sh builds); every ```output
# block is what the sh block before it printed: each of its non-empty lines
# appears in that block's output (stdout and stderr), so a figure the README
# shows cannot drift; a block of any other kind is an error, so no example
# escapes the test.
# Usage: tests/readme_test.sh BUILD_DIR SOURCE_DIR. Prints "N passed, M failed".
set -u
BUILD=$(cd "$1" && pwd)
SRC=$2
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Split README.md into blocks: $TMP/blocks/NNN.<lang>[.skip], starting line.
mkdir -p "$TMP/blocks"
awk -v dir="$TMP/blocks" '
  !inside && /^```[a-z]*$/ {
    inside = 1; n++; lang = substr($0, 4); if (lang == "") lang = "none";
    file = sprintf("%s/%03d.%s%s", dir, n, lang, skip ? ".skip" : "");
    printf "" > file; start[n] = NR; print NR > (file ".line"); next
  }
  inside && /^```$/ { inside = 0; close(file); next }
  inside { print > file; next }
  NF { skip = ($0 ~ /^<!-- not run by tests\/readme_test.sh: /) }
' "$SRC/README.md"

rm -f "$TMP/last_output"
mkdir -p "$TMP/root/tests"
ln -s "$BUILD" "$TMP/root/build"
ln -s "$SRC/scripts" "$TMP/root/scripts"
# The shared tools beside the repository (the Llama-shaped graph's maker):
# a block that uses them, and the output after it, is skipped without them.
[ -d "$SRC/../shared/tools" ] && ln -s "$(cd "$SRC/../shared" && pwd)" "$TMP/shared"
cp -r "$SRC/models" "$TMP/root/models"
cp -r "$SRC/tests/install_client" "$TMP/root/tests/install_client"
# One line per non-empty line, whitespace trimmed, for "appears in" checks.
squeeze() { sed 's/^[[:space:]]*//; s/[[:space:]]*$//' "$1" | grep -v '^$' | tr '\n' '\001'; }
ran=0
for block in "$TMP"/blocks/*; do
  case "$block" in *.line) continue ;; esac
  name=$(basename "$block")
  line=$(cat "$block.line")
  case "$name" in
    *.sh.skip | *.python.skip | *.output.skip) ok ;;
    *.sh | *.python)
      if grep -q '\.\./shared/tools' "$block" && [ ! -e "$TMP/shared" ]; then
        echo "skipped README.md:$line: no ../shared/tools"
        rm -f "$TMP/last_output"
        ok
        continue
      fi
      run=(bash -eo pipefail)
      [ "${name##*.}" = python ] && run=(env PYTHONPATH="$BUILD/python" "${AUTOSHARD_PYTHON:-/usr/bin/python3}")
      if (cd "$TMP/root" && "${run[@]}" "$block") >"$TMP/log" 2>&1; then
        cp "$TMP/log" "$TMP/last_output"
        ok
        ran=$((ran + 1))
      else
        bad "README.md:$line: the example fails"
        sed 's/^/    /' "$block"
        tail -20 "$TMP/log"
      fi
      ;;
    *.cmake | *.cpp)
      text=$(squeeze "$block")
      found=0
      for f in "$SRC"/tests/install_client/*; do
        [[ "$(squeeze "$f")" == *"$text"* ]] && found=1
      done
      [ "$found" -eq 1 ] && ok || bad "README.md:$line: this ${name#*.} block is not in tests/install_client/"
      ;;
    *.output)
      if [ ! -f "$TMP/last_output" ] && [ ! -e "$TMP/shared" ]; then ok; continue; fi
      missing=0
      while IFS= read -r want; do
        want=$(printf '%s' "$want" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
        [ -z "$want" ] && continue
        if ! grep -qF -- "$want" "$TMP/last_output" 2>/dev/null; then
          missing=1
          bad "README.md:$line: the block above did not print: $want"
        fi
      done <"$block"
      [ "$missing" -eq 0 ] && ok
      ;;
    *) bad "README.md:$line: a \`\`\` block without sh, python, cmake, cpp or output (or a not-run note)" ;;
  esac
done
# The examples did run: the one-model, batch and library blocks at least.
[ "$ran" -ge 3 ] && ok || bad "only $ran sh blocks ran"
[ -f "$TMP/root/out/batch/summary.csv" ] && ok || bad "the batch example wrote its summary"
[ -x "$TMP/root/out/client/autoshard_client" ] && ok || bad "the library example built its client"
[ -f "$TMP/root/out/py_stages/manifest.json" ] && ok || bad "the Python example split its model"
finish "$ran examples run"
