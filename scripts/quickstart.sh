#!/usr/bin/env bash
# Installs what is missing, builds, and runs the default simulation: ResNet-50 on 16 Tesla P40
# (4 nodes x 4 GPUs, PCIe inside a node, 56 Gb/s FDR InfiniBand between), ring allreduce, WFBP.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/ddlsim run --platform platforms/p40-4x4-ib56.xml --workload workloads/resnet50-p40-b32.textproto \
  --algorithm ring --schedule wfbp --report build/quickstart-report.json
