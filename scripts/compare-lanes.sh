#!/usr/bin/env bash
# Compares, for several in-order streams (--comm-streams), the pipelined trees computed in one program under
# --fidelity auto (TreeStream lanes) with the message level under SimGrid's full update, schedule by schedule, on 72
# one-GPU nodes of a fat tree 1.5:1 oversubscribed (docs/collectives.md, "Two streams and the priority policy in one
# program"). hier:tree and hier:dbtree (hier over the trees, HierStream: docs/collectives.md, "hier over the tree or
# dbtree") run on 72 nodes of two NVSwitch GPUs of the same fat tree. Prints one line per configuration: the fidelity
# auto used, the iterations simulated, and how many report fields differ beyond 1e-9 relative or 100 ns (3: only the
# configuration's own fields, fidelity and --cfg).
#
# Usage: bash scripts/compare-lanes.sh [--ddlsim BIN] [--algorithms "tree dbtree hier:tree"] [--streams "2 3"]
# Needs a built ddlsim and build/tests/compare_reports (bash scripts/build.sh). About 45 s for the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
ddlsim=./build/ddlsim
algorithms="tree dbtree"
streams="2 3"
while [ $# -gt 0 ]; do
  case $1 in
  --ddlsim) ddlsim=$2; shift 2 ;;
  --algorithms) algorithms=$2; shift 2 ;;
  --streams) streams=$2; shift 2 ;;
  *) echo "compare-lanes.sh: unknown argument '$1' (see the usage in its header)" >&2; exit 2 ;;
  esac
done
compare=./build/tests/compare_reports
for f in "$ddlsim" "$compare"; do
  if [ ! -x "$f" ]; then
    echo "compare-lanes.sh: $f not found or not executable (build first: bash scripts/build.sh)" >&2
    exit 2
  fi
done
workload=workloads/resnet50-v100-b32.textproto
cluster=nodes=72,gpus-per-node=1,gpu=V100-PCIe,intra=pcie,inter=10gbe,topology=fat-tree,nodes-per-leaf=8,oversubscription=1.5
hier_cluster=nodes=72,gpus-per-node=2,gpu=V100-SXM2,intra=nvswitch,inter=10gbe,topology=fat-tree,nodes-per-leaf=8,oversubscription=1.5
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
schedules=("--schedule wfbp" "--schedule fusion" "--schedule buckets" "--schedule mgwfbp" "--schedule sequential"
  "--schedule wfbp --update per-layer" "--schedule wfbp --io-prefetch 2")
for algorithm in $algorithms; do
  for schedule in "${schedules[@]}"; do
    for n in $streams; do
      if [[ $algorithm == hier:* ]]; then
        chosen=(--algorithm hier --inter-algorithm "${algorithm#hier:}" --cluster "$hier_cluster")
      else
        chosen=(--algorithm "$algorithm" --cluster "$cluster")
      fi
      read -r -a words <<<"$schedule" # the schedule's words are separate arguments
      args=(--workload "$workload" -q --iterations 3 "${chosen[@]}" --comm-streams "$n" "${words[@]}")
      "$ddlsim" run "${args[@]}" --report "$out/auto.json" >/dev/null
      "$ddlsim" run "${args[@]}" --fidelity message --cfg network/optim:Full --report "$out/full.json" >/dev/null
      used=$(python3 -c "import json, sys; r = json.load(open(sys.argv[1])); \
print(r['config']['aggregation']['fidelity_used'] + ';', r['iterations_simulated'], 'iterations simulated')" \
        "$out/auto.json")
      result=$("$compare" "$out/full.json" "$out/auto.json" 1e-9 1e-7 2>&1 | tail -n 1 | sed 's/ between .*//' || true)
      printf '%-11s %d streams  %-36s | %s | %s\n' "$algorithm" "$n" "$schedule" "$used" "$result"
    done
  done
done
