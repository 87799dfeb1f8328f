#!/usr/bin/env bash
# Installs the Debian 12 packages ddlsim needs to build and test, when they are missing; extra packages given as
# arguments are installed too (scripts/fuzz.sh passes clang).
set -euo pipefail
packages=(cmake make g++ pkg-config libsimgrid-dev libxml2-dev libboost-program-options-dev libprotobuf-dev protobuf-compiler catch2 python3 time
          clang-format python3-matplotlib chromium "$@") # python3-matplotlib: ddlsim plot and its tests; chromium: the
                                                        # headless check of ddlsim report --html
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
