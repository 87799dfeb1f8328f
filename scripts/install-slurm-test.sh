#!/usr/bin/env bash
# Installs what the Slurm test (tests/slurm/slurm_sweep.sh) needs: Debian 12's slurm-wlm and munge (about 20 s).
# Kept out of scripts/install-deps.sh: the packages bring daemons that only this one test starts (and stops); without
# them the test is skipped, with that reason.
set -euo pipefail
packages=(slurm-wlm munge)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-slurm-test: slurm-wlm and munge already installed"
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-slurm-test: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-slurm-test: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
# The packages' own services are not needed (the test runs its own daemons on its own ports and files): stop them.
$sudo systemctl disable --now slurmctld slurmd munge >/dev/null 2>&1 || true
