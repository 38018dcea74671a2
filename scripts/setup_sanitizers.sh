#!/usr/bin/env bash
# Installs what the sanitizer and fuzzing builds need (scripts/sanitize.sh,
# scripts/fuzz.sh; .ci/run runs both): Debian 12's clang 14 and its runtime
# libraries (ASan, UBSan, TSan, libFuzzer). Idempotent: installs only what is
# missing. Run as root or with sudo available.
set -euo pipefail
PACKAGES=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "autoshard setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
