#!/usr/bin/env bash
# Installs what is missing (the Slurm test's slurm-wlm and munge included), builds, and runs the whole test suite
# through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/install-slurm-test.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
