#!/usr/bin/env bash
# Installs what autoshard needs to build and test, from Debian 12 packages.
# Non-interactive and idempotent: installs only what is missing. Run as root
# or with sudo available.
set -euo pipefail

PACKAGES=(
  cmake g++ make pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler
  libabsl-dev libcli11-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3-dev python3-pytest python3-onnx
  graphviz
  coinor-libcbc-dev coinor-libclp-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "autoshard setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
