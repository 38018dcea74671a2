#!/usr/bin/env bash
# Installs what the onnxruntime check of splits needs (tests/ort/): node and
# npm (Debian packages, when missing) and onnxruntime-node from
# tests/ort/package-lock.json into tests/ort/node_modules (not in git). npm
# runs with --ignore-scripts: the CPU binary ships in the package, nothing is
# downloaded at install time. Idempotent: does nothing when all is in place.
set -euo pipefail
cd "$(dirname "$0")/../tests/ort"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "autoshard setup: installing nodejs npm" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi
# npm ci leaves a copy of the lock file in node_modules: reinstall only when
# the project's lock file changed.
if [ -f node_modules/.package-lock.json ] && [ -d node_modules/onnxruntime-node ] &&
   [ node_modules/.package-lock.json -nt package-lock.json ]; then
  exit 0
fi
echo "autoshard setup: installing onnxruntime-node (tests/ort/node_modules)" >&2
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
