#!/usr/bin/env bash
# Benchmark of the collective simulation: wall time and simulated time per algorithm, fidelity and rank
# count, for one 100 MB tensor and for the 107 gradient tensors of the shipped ResNet-50 workload.
# usage: bash bench/collectives.sh [PATH/TO/ddlsim] [RANKS...]   (from the repository root)
# Platform: a SimGrid <cluster> star, every GPU its own 12.5 GB/s, 0.5 us split-duplex link (uniform).
# Runs longer than the per-run limit (BENCH_LIMIT_S, default 120 s) print "timeout".
set -uo pipefail
ddlsim=${1:-build/ddlsim}
shift || true
ranks=("$@")
[ ${#ranks[@]} -eq 0 ] && ranks=(64 256 1024 4096)
limit=${BENCH_LIMIT_S:-120}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

platform() { # ranks -> path
  local p=$work/cluster-$1.xml
  cat >"$p" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="gpu" suffix="" radical="0-$(($1 - 1))" speed="12Tf" bw="12.5GBps" lat="0.5us" sharing_policy="SPLITDUPLEX">
    <prop id="gpu" value="P40"/>
  </cluster>
</platform>
XML
  echo "$p"
}

# The ResNet-50 workload with every compute time zeroed: an iteration is its 107 allreduces back to back.
sed -E 's/^(  (forward_s|backward_s)|h2d_s|update_s|io_s): .*/\1: 0/' workloads/resnet50-p40-b32.textproto \
  >"$work/resnet50-comm.textproto"
# One 100 MB tensor.
cat >"$work/tensor-100MB.textproto" <<'TP'
schema_version: 1
model: "one-tensor"
batch_size_per_gpu: 1
reference_gpu: "P40"
layers { name: "tensor" gradient_bytes: 100000000 }
TP

printf '%-6s %-8s %6s %-14s %16s %12s\n' algo fidelity ranks workload "simulated (ms)" "wall (s)"
run() { # algorithm fidelity ranks workload-name
  local alg=$1 fid=$2 p=$3 wl=$4
  local start end out
  local fidelity_option=()
  case $alg in ring | hd) fidelity_option=(--fidelity "$fid") ;; esac # the others are always message level
  start=$(date +%s.%N)
  out=$(timeout "$limit" "$ddlsim" run --platform "$(platform "$p")" --workload "$work/$wl.textproto" \
        --algorithm "$alg" "${fidelity_option[@]}" --iterations 1 -q --report "$work/r.json" 2>&1 >/dev/null)
  local rc=$?
  end=$(date +%s.%N)
  if [ $rc -eq 124 ]; then
    printf '%-6s %-8s %6d %-14s %16s %12s\n' "$alg" "$fid" "$p" "$wl" "-" "timeout"
  elif [ $rc -ne 0 ]; then
    printf '%-6s %-8s %6d %-14s %16s %12s  %s\n' "$alg" "$fid" "$p" "$wl" "-" "error" "$out"
  else
    local sim
    sim=$(python3 -c "import json,sys; print('%.3f' % (json.load(open(sys.argv[1]))['iteration_time_s']*1e3))" "$work/r.json")
    printf '%-6s %-8s %6d %-14s %16s %12.2f\n' "$alg" "$fid" "$p" "$wl" "$sim" "$(python3 -c "print($end - $start)")"
  fi
}

for p in "${ranks[@]}"; do
  for wl in tensor-100MB resnet50-comm; do
    run ring flow "$p" "$wl"
    run hd flow "$p" "$wl"
    # Message level where it fits the limit: 2P(P-1) transfers per tensor for the ring.
    if [ "$p" -le 1024 ] && { [ "$wl" = tensor-100MB ] || [ "$p" -le 256 ]; }; then
      run ring message "$p" "$wl"
    fi
    run hd message "$p" "$wl"
    run tree message "$p" "$wl"
    run ps message "$p" "$wl"
  done
done
