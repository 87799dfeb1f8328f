#!/usr/bin/env bash
# Every schedule side by side: ResNet-50 and GoogleNet on the 16-GPU P40 cluster over 10GbE and over FDR
# InfiniBand; with --large also ResNet-50 on 1,024 V100 (128 DGX-1-like nodes, EDR) with the hierarchical
# allreduce. Prints one line per run: iteration time, exposed communication and scaling efficiency.
# usage: bash examples/schedules/run.sh PATH/TO/ddlsim [--large]   (from the repository root)
set -euo pipefail
ddlsim=${1:?usage: run.sh PATH/TO/ddlsim [--large]}
large=${2:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
schedules=("sequential" "wfbp" "fusion" "buckets" "mgwfbp" "wfbp --update per-layer" "priority --update per-layer")

row() { # label report.json
  python3 - "$2" "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:<58} {r['iteration_time_s']*1e3:12.3f} {r['breakdown']['exposed_communication_s']*1e3:16.3f} "
      f"{r['aggregations_per_iteration']:6d} {r['scaling_efficiency']*100:10.1f} %")
PY
}

printf '%-58s %12s %16s %6s %12s\n' "platform, model, schedule" "iter. (ms)" "exposed (ms)" "aggr." efficiency
for platform in p40-4x4-10gbe p40-4x4-ib56; do
  for model in resnet50-p40-b32 googlenet-p40-b64; do
    for schedule in "${schedules[@]}"; do
      # shellcheck disable=SC2086
      "$ddlsim" run --platform "platforms/$platform.xml" --workload "workloads/$model.textproto" --iterations 3 -q \
        --schedule $schedule --report "$out/r.json" >/dev/null
      row "$platform ${model%%-*} $schedule" "$out/r.json"
    done
  done
done
if [ "$large" = "--large" ]; then
  for schedule in "${schedules[@]}"; do
    # shellcheck disable=SC2086
    "$ddlsim" run --cluster "nodes=128,gpus-per-node=8,gpu=V100-SXM2,intra=nvlink,inter=ib100" \
      --workload workloads/resnet50-v100-b32.textproto --algorithm hier --iterations 1 -q \
      --schedule $schedule --report "$out/r.json" >/dev/null
    row "1024 x V100 EDR hier resnet50 $schedule" "$out/r.json"
  done
fi
