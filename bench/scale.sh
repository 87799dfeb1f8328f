#!/usr/bin/env bash
# Scale benchmark (issue 15): one ResNet-50 iteration (workloads/resnet50-v100-b32.textproto, --iterations 1) on
# clusters of 8 V100-SXM2 per node (NVLink inside, 100 Gb/s InfiniBand between; a fat tree of 32 nodes per leaf at
# 16,384 GPUs), for each allreduce algorithm; then, at 1,024 GPUs with the ring (or each of --sweep-algorithms), every
# schedule and every stack; then the ring's message level at 256 GPUs, message by message from every rank's actor (--fidelity message) and step by step
# from one actor (--fidelity steps).
# Prints per run: wall time, CPU time (user + system), peak resident memory, simulated iteration time, the SimGrid
# activities the run completed (transfers + executions + sleeps, the report's simulated_activities) and those per
# second of wall time; last, how many runs of each size the issue's targets name are within them, and which are over
# (1 s at 1,024 GPUs, 30 s and 2,048 MiB at 16,384, the ring's message level in 5 s at 256 GPUs). Not a test: wall
# times depend on the machine (compare ratios within one table).
#
# usage: bash bench/scale.sh [options]            (from the repository root; needs GNU time, /usr/bin/time)
#   --ddlsim PATH          binary (default build/ddlsim)
#   --sizes LIST           GPU counts, comma separated (default 64,256,1024,4096,16384; each a multiple of 8)
#   --algorithms LIST      algorithms (default ring, then tree, dbtree, nccl-tree, nccl, rd, hier:tree, hier:dbtree
#                          each also as X/flow, hd, the other hier:X and ps; hier:X is --algorithm hier
#                          --inter-algorithm X, X/F adds --fidelity F)
#   --no-sizes             skip the size table
#   --no-sweep             skip the schedules/stacks sweep at 1,024 GPUs
#   --sweep-gpus N         GPU count of the sweep (default 1024)
#   --sweep-algorithms L   algorithms of the sweep, as --algorithms (default ring)
#   --sweep-streams-stacks the sweep also runs two streams under every stack (the schedule and stack axes together)
#   --no-message           skip the message-level ring
#   --message-gpus N       GPU count of the message-level ring (default 256)
#   --repeat N             run each configuration N times and print the run of median wall time (default 1; the
#                          simulated results are the same every time, the wall times vary with the machine's load)
#   --huge-pages           run ddlsim with glibc's malloc on transparent huge pages (GLIBC_TUNABLES=
#                          glibc.malloc.hugetlb=1; where the kernel's THP mode is madvise): fewer page faults, the same
#                          results (docs/performance.md)
# Environment: BENCH_LIMIT_S (default 120): a run longer than this is killed and prints "timeout".
set -uo pipefail
ddlsim=build/ddlsim
sizes=64,256,1024,4096,16384
algorithms=ring,tree,tree/flow,dbtree,dbtree/flow,nccl-tree,nccl-tree/flow,nccl,nccl/flow,hd,rd,rd/flow,hier:ring,hier:rd,hier:hd,hier:tree,hier:tree/flow,hier:dbtree,hier:dbtree/flow,hier:ps,ps
do_sizes=1
do_sweep=1
sweep_gpus=1024
sweep_algorithms=ring
sweep_combos=0
do_message=1
message_gpus=256
repeat=1
huge_pages=0
while [ $# -gt 0 ]; do
  case $1 in
  --ddlsim) ddlsim=$2; shift 2 ;;
  --sizes) sizes=$2; shift 2 ;;
  --algorithms) algorithms=$2; shift 2 ;;
  --no-sizes) do_sizes=0; shift ;;
  --no-sweep) do_sweep=0; shift ;;
  --sweep-gpus) sweep_gpus=$2; shift 2 ;;
  --sweep-algorithms) sweep_algorithms=$2; shift 2 ;;
  --sweep-streams-stacks) sweep_combos=1; shift ;;
  --no-message) do_message=0; shift ;;
  --message-gpus) message_gpus=$2; shift 2 ;;
  --repeat) repeat=$2; shift 2 ;;
  --huge-pages) huge_pages=1; shift ;;
  -h | --help) sed -n '2,/^# Environment/p' "$0"; exit 0 ;;
  *) echo "bench/scale.sh: unknown option '$1' (--help lists them)" >&2; exit 2 ;;
  esac
done
limit=${BENCH_LIMIT_S:-120}
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "bench/scale.sh: --repeat must be a positive integer (got '$repeat')" >&2; exit 2; }
workload=workloads/resnet50-v100-b32.textproto
[ -x /usr/bin/time ] || { echo "bench/scale.sh: needs GNU time (/usr/bin/time; Debian package 'time')" >&2; exit 1; }
[ -x "$ddlsim" ] || { echo "bench/scale.sh: no ddlsim binary at '$ddlsim' (--ddlsim PATH)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cluster_of() { # gpus -> --cluster value
  local gpus=$1 nodes=$(($1 / 8))
  local spec="nodes=$nodes,gpus-per-node=8,gpu=V100-SXM2,intra=nvlink,inter=ib100"
  [ "$gpus" -ge 16384 ] && spec="$spec,topology=fat-tree,nodes-per-leaf=32"
  echo "$spec"
}

echo "ResNet-50 ($workload), --iterations 1, nodes of 8 V100-SXM2 (intra=nvlink, inter=ib100; 16,384 GPUs:"
echo "topology=fat-tree,nodes-per-leaf=32); per-run limit ${limit} s; each row the run of median wall time of ${repeat}"
echo "machine: $(nproc) cores ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sm)"
echo "ddlsim: $("$ddlsim" --version 2>/dev/null | head -1)"
if [ $huge_pages -eq 1 ]; then
  export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.hugetlb=1"
  thp=$(sed -n 's/.*\[\([a-z]*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
  echo "huge pages: GLIBC_TUNABLES=$GLIBC_TUNABLES (the kernel's transparent huge pages: ${thp:-unknown})"
fi

header() { printf '%-26s %6s %9s %9s %10s %15s %12s %12s\n' "$1" GPUs "wall (s)" "CPU (s)" "peak (MiB)" "iteration (ms)" activities "activities/s"; }

run() { # label gpus ddlsim-args...
  local label=$1 gpus=$2
  shift 2
  : >"$work/times"
  local k rc
  for ((k = 0; k < repeat; k++)); do
    timeout "$limit" /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$ddlsim" run --cluster "$(cluster_of "$gpus")" \
      --workload "$workload" --iterations 1 -q --report "$work/r.json" "$@" >/dev/null 2>"$work/err"
    rc=$?
    if [ $rc -eq 124 ]; then
      printf '%-26s %6d %9s\n' "$label" "$gpus" timeout
      printf '%s\t%s\t%s\ttimeout\t\n' "$kind" "$context$label" "$gpus" >>"$work/rows"
      return
    elif [ $rc -ne 0 ]; then
      printf '%-26s %6d %9s  %s\n' "$label" "$gpus" error "$(grep -v '^Command exited' "$work/err" | tail -1)"
      return
    fi
    cat "$work/time" >>"$work/times"
  done
  sort -n -k1,1 "$work/times" | sed -n "$(((repeat + 1) / 2))p" >"$work/time" # the run of median wall time
  python3 - "$work/r.json" "$label" "$gpus" $(cat "$work/time") <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
label, gpus = sys.argv[2], int(sys.argv[3])
wall, user, sys_, rss = map(float, sys.argv[4:8])
acts = int(r.get("simulated_activities", 0))
rate = f"{acts / wall:12.3g}" if wall > 0 else f"{'-':>12}"
print(f"{label:<26} {gpus:6d} {wall:9.2f} {user + sys_:9.2f} {rss / 1024:10.1f} {r['iteration_time_s'] * 1e3:15.3f} "
      f"{acts:12d} {rate}")
PY
  local wall rss
  read -r wall _ _ rss <"$work/time" # (GNU time: seconds with two decimals, KiB)
  printf '%s\t%s\t%s\t%s\t%s\n' "$kind" "$context$label" "$gpus" "$wall" "$rss" >>"$work/rows"
}

algorithm_args() { # X, hier:X, X/F or hier:X/F -> ddlsim arguments, one per line
  local name=${1%/*}
  case $name in
  hier:*) printf '%s\n' --algorithm hier --inter-algorithm "${name#hier:}" ;;
  *) printf '%s\n' --algorithm "$name" ;;
  esac
  [ "$name" != "$1" ] && printf '%s\n' --fidelity "${1##*/}"
}

kind=run context= # what run() records for the summary: the targets' kind of row, and the algorithm of a sweep's rows
: >"$work/rows"

if [ $do_sizes -eq 1 ]; then
  echo
  header algorithm
  IFS=, read -ra size_list <<<"$sizes"
  IFS=, read -ra algorithm_list <<<"$algorithms"
  for gpus in "${size_list[@]}"; do
    for alg in "${algorithm_list[@]}"; do
      mapfile -t args < <(algorithm_args "$alg")
      run "$alg" "$gpus" "${args[@]}"
    done
  done
fi

if [ $do_sweep -eq 1 ]; then
  IFS=, read -ra sweep_list <<<"$sweep_algorithms"
  for alg in "${sweep_list[@]}"; do
    mapfile -t args < <(algorithm_args "$alg")
    echo
    echo "Schedules and stacks at $sweep_gpus GPUs, $alg"
    header "schedule / stack"
    context="$alg: "
    while read -r label variant; do
      # shellcheck disable=SC2086
      run "$label" "$sweep_gpus" "${args[@]}" $variant
    done < <(grep -v '^#' bench/schedule-variants.txt)
    for stack in stacks/*.textproto; do
      name=$(basename "$stack" .textproto)
      run "stack $name" "$sweep_gpus" "${args[@]}" --stack "$name"
    done
    if [ $sweep_combos -eq 1 ]; then
      for stack in stacks/*.textproto; do
        name=$(basename "$stack" .textproto)
        run "2-streams, $name" "$sweep_gpus" "${args[@]}" --comm-streams 2 --stack "$name"
      done
    fi
  done
fi

context=
if [ $do_message -eq 1 ]; then
  kind=message
  echo
  echo "The ring's message level at $message_gpus GPUs: every rank's actor (message), one actor step by step (steps)"
  header "ring fidelity"
  run "ring, message" "$message_gpus" --algorithm ring --fidelity message
  run "ring, steps" "$message_gpus" --algorithm ring --fidelity steps
fi

# The runs against issue 15's targets: one iteration within 1 s at 1,024 GPUs, within 30 s and 2,048 MiB at 16,384, the
# ring's message level within 5 s at 256 GPUs (other sizes have none); a run that timed out is over them.
echo
python3 - "$work/rows" <<'PY'
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
limits = {("run", 1024): (1.0, None), ("run", 16384): (30.0, 2048.0), ("message", 256): (5.0, None)}
print("Against issue 15's targets (1 s at 1,024 GPUs; 30 s and 2,048 MiB at 16,384; the ring's message level in 5 s at "
      "256 GPUs; none at other sizes):")
counted = False
for (kind, gpus), (wall_limit, mem_limit) in limits.items():
    mine = [r for r in rows if r[0] == kind and int(r[2]) == gpus]
    if not mine:
        continue
    counted = True
    over = []
    for _, label, _, wall, rss in mine:
        if wall == "timeout":
            over.append(f"{label} (timeout)")
        elif float(wall) > wall_limit or (mem_limit is not None and float(rss) / 1024 > mem_limit):
            over.append(f"{label} ({float(wall):.2f} s, {float(rss) / 1024:.1f} MiB)")
    what = "the ring's message level" if kind == "message" else "runs"
    line = f"  {gpus:,} GPUs, {what}: {len(mine) - len(over)} of {len(mine)} within"
    print(line + ("" if not over else "; over: " + "; ".join(over)))
if not counted:
    print("  no run at a size they name")
PY
