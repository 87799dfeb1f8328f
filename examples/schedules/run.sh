#!/usr/bin/env bash
# Compares the sequential and WFBP schedules of ResNet-50 on 4, 8 and 16 P40 GPUs.
# usage: bash examples/schedules/run.sh PATH/TO/ddlsim   (from the repository root)
set -euo pipefail
ddlsim=${1:?usage: run.sh PATH/TO/ddlsim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-5s %-11s %16s %22s %12s\n' GPUs schedule "iteration (ms)" "exposed comm. (ms)" efficiency
for gpus in 4 8 16; do
  for schedule in sequential wfbp; do
    "$ddlsim" run --platform platforms/p40-4x4-ib56.xml --workload workloads/resnet50-p40-b32.textproto \
      --ranks "$gpus" --schedule "$schedule" --iterations 2 -q --report "$out/r.json" >/dev/null
    python3 - "$out/r.json" "$gpus" "$schedule" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:<5} {sys.argv[3]:<11} {r['iteration_time_s']*1e3:16.3f} "
      f"{r['breakdown']['exposed_communication_s']*1e3:22.3f} {r['scaling_efficiency']*100:11.1f} %")
PY
  done
done
