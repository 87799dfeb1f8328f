#!/usr/bin/env bash
# Benchmark of the schedules: wall time, CPU time, peak memory and simulated iteration time of one ResNet-50
# iteration on 1,024 V100 (128 DGX-1-like nodes, NVLink inside, EDR between), each schedule, ring at flow level,
# and the ratio of each wall time to wfbp's (measured in this run: the machines are noisy, the ratios hold).
# usage: bash bench/schedules.sh [PATH/TO/ddlsim] [NODES]   (from the repository root; GNU time required)
set -uo pipefail
ddlsim=${1:-build/ddlsim}
nodes=${2:-128}
cluster="nodes=$nodes,gpus-per-node=8,gpu=V100-SXM2,intra=nvlink,inter=ib100"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -x /usr/bin/time ] || { echo "bench/schedules.sh: needs GNU time (/usr/bin/time; Debian package 'time')" >&2; exit 1; }

echo "ResNet-50 (workloads/resnet50-v100-b32.textproto), 1 iteration, --cluster \"$cluster\", ring, --fidelity flow"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -m)"
printf '%-30s %10s %10s %12s %15s %12s %10s\n' schedule "wall (s)" "CPU (s)" "peak (MiB)" "iteration (ms)" efficiency "wall/wfbp"
wfbp_wall=""
while read -r label args; do # bench/schedule-variants.txt
  # shellcheck disable=SC2086
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$ddlsim" run --cluster "$cluster" \
    --workload workloads/resnet50-v100-b32.textproto --iterations 1 --algorithm ring --fidelity flow -q \
    --report "$work/r.json" $args >/dev/null 2>"$work/err" || { echo "$label: failed: $(tail -1 "$work/err")"; continue; }
  read -r wall user sys rss <"$work/time"
  [ -z "$wfbp_wall" ] && wfbp_wall=$wall
  python3 - "$work/r.json" "$label" "$wall" "$user" "$sys" "$rss" "$wfbp_wall" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
label, wall, user, sys_, rss, ref = sys.argv[2], *map(float, sys.argv[3:])
print(f"{label:<30} {wall:10.2f} {user + sys_:10.2f} {rss / 1024:12.1f} {r['iteration_time_s'] * 1e3:15.3f} "
      f"{r['scaling_efficiency'] * 100:11.1f} % {wall / ref:10.2f}")
PY
done < <(grep -v '^#' bench/schedule-variants.txt)
