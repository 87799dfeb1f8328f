#!/usr/bin/env bash
# The framework presets (docs/frameworks.md) on the seed study's cluster: 4 nodes of 4 Tesla P40 over 56 Gb/s
# InfiniBand (platforms/p40-4x4-ib56.xml). AlexNet (batch 1024 per GPU), GoogleNet (64) and ResNet-50 (32) with
# every preset on 1, 4, 8 and 16 GPUs: throughput and scaling efficiency; then, at 16 GPUs, backward time versus
# communication time per iteration (the study's own way to explain the losses). The parameter-server presets get
# one server per node in use, on that node's CPU (--servers N: MXNet's tools/launch.py starts as many servers as
# workers, one worker per machine). Nothing is fitted: every option is the preset's.
# usage: bash examples/frameworks-p40-cluster/run.sh PATH/TO/ddlsim   (from the repository root)
set -euo pipefail
ddlsim=${1:?usage: run.sh PATH/TO/ddlsim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
frameworks=(caffe-mpi cntk mxnet tensorflow horovod pytorch-ddp)
models=(alexnet-p40-b1024 googlenet-p40-b64 resnet50-p40-b32)

run() { # model framework gpus -> $out/MODEL-FRAMEWORK-GPUS.json
  local servers=()
  case $2 in mxnet | tensorflow) servers=(--servers $((($3 + 3) / 4))) ;; esac
  "$ddlsim" run --platform platforms/p40-4x4-ib56.xml --workload "workloads/$1.textproto" --framework "$2" \
    --ranks "$3" "${servers[@]}" --iterations 3 -q --report "$out/$1-$2-$3.json" >/dev/null
}

for model in "${models[@]}"; do
  for framework in "${frameworks[@]}"; do
    for gpus in 4 8 16; do
      run "$model" "$framework" "$gpus"
    done
  done
done

python3 - "$out" "${models[*]}" "${frameworks[*]}" <<'PY'
import json, sys
out, models, frameworks = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
r = lambda m, f, g: json.load(open(f"{out}/{m}-{f}-{g}.json"))
print("throughput (samples/s) and scaling efficiency; 1 GPU: the single-GPU baseline of the 4-GPU run")
print(f"{'model':<10} {'framework':<12} {'1 GPU':>8} {'4 GPUs':>16} {'8 GPUs':>16} {'16 GPUs':>16}")
for m in models:
    for f in frameworks:
        cells = [f"{r(m, f, 4)['single_gpu_throughput_samples_per_s']:8.1f}"]
        for g in (4, 8, 16):
            x = r(m, f, g)
            cells.append(f"{x['throughput_samples_per_s']:8.1f} {x['scaling_efficiency'] * 100:5.1f} %")
        print(f"{m.split('-')[0]:<10} {f:<12} " + " ".join(f"{c:>16}" if i else c for i, c in enumerate(cells)))
print()
print("16 GPUs, per iteration (ms): backward, communication (all aggregations, start to end), the part of it")
print("not hidden behind computation, and the iteration")
print(f"{'model':<10} {'framework':<12} {'backward':>10} {'comm.':>10} {'exposed':>10} {'iteration':>10}")
for m in models:
    for f in frameworks:
        x = r(m, f, 16)
        b = x["breakdown"]
        print(f"{m.split('-')[0]:<10} {f:<12} {b['backward_s'] * 1e3:10.1f} {b['communication_s'] * 1e3:10.1f} "
              f"{b['exposed_communication_s'] * 1e3:10.1f} {x['iteration_time_s'] * 1e3:10.1f}")
PY
