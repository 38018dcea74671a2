#!/usr/bin/env bash
# Installs what the HTML page's browser test needs (tests/html/): Debian's
# chromium (headless) and nodejs (the checker), when missing. Graphviz comes
# with scripts/setup.sh. Idempotent; scripts/test.sh runs it.
set -euo pipefail
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v node >/dev/null || missing+=(nodejs)
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "autoshard setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
