#!/usr/bin/env bash
# Where the wall time of one ResNet-50 iteration goes (docs/performance.md): runs ddlsim under `perf record` for each
# algorithm on 1,024 V100 (128 nodes of 8, NVLink inside, 100 Gb/s InfiniBand between) and prints the share of the
# samples in each part of SimGrid and of ddlsim, from the symbol names (`perf report --no-children`).
# usage: bash bench/profile.sh [PATH/TO/ddlsim] [ALGORITHM...]   (default: build/ddlsim ring hd dbtree hier)
# Needs perf (Debian linux-perf) and kernel.perf_event_paranoid <= 2. Not a test: shares depend on the machine.
set -uo pipefail
ddlsim=${1:-build/ddlsim}
shift || true
algorithms=("$@")
[ ${#algorithms[@]} -eq 0 ] && algorithms=(ring hd dbtree hier)
nodes=${PROFILE_NODES:-128}
command -v perf >/dev/null || { echo "bench/profile.sh: needs perf (Debian package linux-perf)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "ResNet-50, --iterations 1, --cluster nodes=$nodes,gpus-per-node=8,gpu=V100-SXM2,intra=nvlink,inter=ib100;" \
  "perf record -F 250 -g; share of samples (%)"
for alg in "${algorithms[@]}"; do
  perf record -q -F 250 -g -o "$work/$alg.data" -- "$ddlsim" run --workload workloads/resnet50-v100-b32.textproto \
    --iterations 1 -q --algorithm "$alg" \
    --cluster "nodes=$nodes,gpus-per-node=8,gpu=V100-SXM2,intra=nvlink,inter=ib100" >/dev/null 2>"$work/err" ||
    { echo "$alg: failed: $(tail -1 "$work/err")"; continue; }
  perf report -i "$work/$alg.data" --no-children --stdio -g none --percent-limit 0 2>/dev/null >"$work/$alg.txt"
  python3 - "$alg" "$work/$alg.txt" <<'PY'
import re, sys
# First match wins: the order matters (ddlsim's own symbols before the generic SimGrid patterns).
parts = [
    ("ddlsim link log", r"LinkLog|pair<double, int>|pair<double, double>"),
    ("ddlsim streams+records", r"ddlsim::engine::"),
    ("ddlsim collectives", r"ddlsim::collectives::"),
    ("lmm solver", r"kernel::lmm::|next_occurring_event|update_actions_state|NetworkCm02|share_resources"),
    ("context switch", r"raw_swapcontext|SwappedContext|RawContext|swap_into|ActorImpl::yield|run_all_actors"
                       r"|ContextFactory|ActorImpl::resume|::suspend"),
    ("refcounts", r"intrusive_ptr"),
    ("malloc/free", r"malloc|cfree|_int_free|unlink_chunk|operator new|operator delete|^free$|tcache"),
    ("dynamic_cast", r"dynamic_cast|class_type_info"),
    ("simcalls+activities", r"simgrid::"),
]
share = {name: 0.0 for name, _ in parts}
other = 0.0
for line in open(sys.argv[2]):
    m = re.match(r"\s+([\d.]+)%\s+\S+\s+(\S+)\s+\[[.k]\]\s+(.*)", line)
    if not m:
        continue
    pct, sym = float(m.group(1)), m.group(3).strip()
    for name, rx in parts:
        if re.search(rx, sym):
            share[name] += pct
            break
    else:
        other += pct  # libc/libstdc++ helpers, the kernel, SimGrid addresses without a symbol
print(f"{sys.argv[1]:<8} " + "  ".join(f"{n} {v:4.1f}" for n, v in share.items()) + f"  other {other:4.1f}")
PY
done
