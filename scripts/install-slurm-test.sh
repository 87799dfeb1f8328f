#!/usr/bin/env bash
# Installs what the Slurm test (tests/slurm/slurm_sweep.sh) needs: Debian 12's slurm-wlm and munge (about 20 s).
# Called by scripts/test.sh; kept out of scripts/install-deps.sh's own list (the quick start needs neither), since the
# packages bring daemons that only this one test starts and stops. The installing is install-deps.sh's, given them.
set -euo pipefail
cd "$(dirname "$0")/.."
fresh=0
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || fresh=1
done
bash scripts/install-deps.sh slurm-wlm munge
# The packages' own services are not needed (the test runs its own daemons on its own ports and files): stop the
# ones this script just installed.
if [ "$fresh" -eq 1 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo systemctl disable --now slurmctld slurmd munge >/dev/null 2>&1 || true
fi
