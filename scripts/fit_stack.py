#!/usr/bin/env python3
"""Fits a stack profile's free parameters on measured OSU allreduce logs, and predicts other logs.

The structure is fixed by the library's sources, not fitted (docs/stacks.md, docs/calibration-10gbe.md):
  - algorithm: OpenMPI 3.0's fixed decision (coll_tuned_decision_fixed.c): recursive doubling below 10000
    bytes, ring above (up to P x 1 MiB);
  - rendezvous above 64 KiB (OpenMPI's TCP BTL eager limit, btl_tcp_component.c), a round trip of two small
    messages before the data;
  - the wire: the platform's bandwidth and latency (platforms/cluster-10gbe.xml: 9.37 Gb/s, 0 s).
The free parameters are the per-message overhead (split equally between sender and receiver), the per-call
overhead and the per-call per-byte copy; with --all, also the reduction cost per byte and the per-message copy.

The model below is the time ddlsim simulates for that profile on a contention-free platform (one rank per
node, every route one hop): the ctest runs ddlsim itself on the profile this script writes.

usage:
  fit_stack.py --fit N.log [--fit M.log ...] [--predict K.log ...] [--all] [--write PROFILE.textproto]
Logs: OSU output ('SIZE LATENCY_US' or 'N,SIZE LATENCY_US' lines, '#' comments); the process count comes from
'N,' prefixes or from a --ranks-of LOG=N option. Python 3 standard library only.
"""
import argparse
import math
import re
import statistics
import sys

BANDWIDTH = 1.17125e9  # bytes/s per direction, platforms/cluster-10gbe.xml
LATENCY = 0.0  # s, platforms/cluster-10gbe.xml
RD_BELOW = 10000  # OpenMPI 3.0 coll_tuned_decision_fixed.c: intermediate_message
RENDEZVOUS_ABOVE = 64 * 1024  # OpenMPI 3.0 btl_tcp_component.c: btl_eager_limit

# parameter: (name in the profile, unit scale for printing, unit, start value, first step)
PARAMS = [
    ("message_overhead_s", 1e-6, "us", 20e-6, 4e-6),
    ("call_overhead_s", 1e-6, "us", 5e-6, 4e-6),
    ("call_copy_s_per_byte", 1e-9, "ns/B", 0.5e-9, 0.2e-9),
    ("reduce_s_per_byte", 1e-9, "ns/B", 0.0, 0.2e-9),
    ("copy_s_per_byte", 1e-9, "ns/B", 0.0, 0.2e-9),
]


def read_log(path, ranks=None):
    rows = []
    for number, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != 2:
            sys.exit(f"{path}: line {number}: expected 'SIZE LATENCY_US' (got '{line}')")
        size = fields[0]
        if "," in size:
            count, size = size.split(",", 1)
            if ranks is not None and int(count) != ranks:
                sys.exit(f"{path}: line {number}: measured on {count} processes, not {ranks}")
            ranks = int(count)
        rows.append((int(size), float(fields[1]) * 1e-6))
    if ranks is None:
        sys.exit(f"{path}: no process count ('N,SIZE' lines); give --ranks-of {path}=N")
    return ranks, rows


def message_s(size, p):
    """One message of `size` bytes between two ranks: overheads, copy, wire, rendezvous round trip."""
    o = p["message_overhead_s"]
    t = o + p["copy_s_per_byte"] * size + LATENCY + size / BANDWIDTH
    if size > RENDEZVOUS_ABOVE:
        t += 2 * (o + LATENCY)
    return t


def allreduce_s(size, ranks, p):
    if ranks & (ranks - 1):
        sys.exit("this model handles power-of-two process counts only")
    t = p["call_overhead_s"] + p["call_copy_s_per_byte"] * size
    if ranks == 1:
        return t
    if size < RD_BELOW:  # recursive doubling: log2 P exchanges of the whole vector, each reduced
        return t + int(math.log2(ranks)) * (message_s(size, p) + p["reduce_s_per_byte"] * size)
    chunk = -(-size // ranks)  # ring: 2(P-1) steps of M/P, the first P-1 reduced
    return t + 2 * (ranks - 1) * message_s(chunk, p) + (ranks - 1) * p["reduce_s_per_byte"] * chunk


def errors(log, p):
    ranks, rows = log
    return [(allreduce_s(m, ranks, p) - t) / t for m, t in rows]


def median_abs(errs):
    return statistics.median(abs(e) for e in errs)


def fit(logs, free):
    """Coordinate descent on the mean |log(simulated / measured)| over all logs, from fixed starting values."""
    p = {name: (start if name in free else 0.0) for name, _, _, start, _ in PARAMS}
    steps = {name: step for name, _, _, _, step in PARAMS}

    def cost(q):
        return sum(sum(abs(math.log(allreduce_s(m, r, q) / t)) for m, t in rows) / len(rows) for r, rows in logs)

    for name in free:  # every fitted per-byte cost starts where the default one does
        if name.endswith("per_byte") and p[name] == 0:
            p[name] = PARAMS[2][3]
    best = cost(p)
    while max(steps[n] / PARAMS[i][1] for i, n in enumerate(free)) > 1e-4:
        improved = False
        for name in free:
            for sign in (1, -1):
                q = dict(p)
                q[name] = max(0.0, q[name] + sign * steps[name])
                c = cost(q)
                if c < best - 1e-15:
                    best, p, improved = c, q, True
        if not improved:
            for name in free:
                steps[name] /= 2
    return p


def table(logs, p, every):
    out = []
    header = "| size (B) |" + "".join(f" {r} nodes measured (us) | simulated (us) | error |" for r, _ in logs)
    out.append(header)
    out.append("|---:|" + "---:|---:|---:|" * len(logs))
    sizes = [m for m, _ in logs[0][1]]
    for k, m in enumerate(sizes):
        if m not in every and k % 16 != 0:
            continue
        line = f"| {m} |"
        for r, rows in logs:
            t = rows[k][1]
            s = allreduce_s(m, r, p)
            line += f" {t * 1e6:.2f} | {s * 1e6:.2f} | {100 * (s - t) / t:+.1f} % |"
        out.append(line)
    return "\n".join(out)


def profile_text(p, name, fitted_on):
    half = p["message_overhead_s"] / 2
    return f"""# {name}: OpenMPI over TCP on 10 GbE, fitted by scripts/fit_stack.py on {fitted_on}
# (docs/calibration-10gbe.md; sources of the fixed structure in docs/stacks.md).
schema_version: 1
name: "{name}"
description: "OpenMPI 3.0 tuned allreduce over the TCP BTL (10 GbE); overheads fitted on OSU logs"
send_overhead_s: {half:.6g}   # fitted: half of the per-message overhead
recv_overhead_s: {half:.6g}   # fitted: the other half
copy_s_per_byte: {p["copy_s_per_byte"]:.6g}
call_overhead_s: {p["call_overhead_s"]:.6g}   # fitted
call_copy_s_per_byte: {p["call_copy_s_per_byte"]:.6g}   # fitted: the copy of the send buffer into the receive buffer
rendezvous_above_bytes: {RENDEZVOUS_ABOVE}   # OpenMPI 3.0 opal/mca/btl/tcp/btl_tcp_component.c: btl_eager_limit
algorithm {{ max_ranks: 0 algorithm: "rd<={RD_BELOW - 1}B,ring" }}   # OpenMPI 3.0 coll_tuned_decision_fixed.c
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fit", action="append", required=True, help="OSU log to fit on (repeatable)")
    ap.add_argument("--predict", action="append", default=[], help="OSU log to predict (repeatable)")
    ap.add_argument("--ranks-of", action="append", default=[], help="LOG=N for logs without 'N,' prefixes")
    ap.add_argument("--all", action="store_true", help="also fit the reduction cost and the per-message copy")
    ap.add_argument("--per-byte", choices=["call_copy_s_per_byte", "reduce_s_per_byte", "copy_s_per_byte"],
                    default="call_copy_s_per_byte",
                    help="without --all: the one per-byte cost that is fitted (the others stay 0); one node count "
                    "cannot tell them apart (docs/calibration-10gbe.md)")
    ap.add_argument("--write", help="write the fitted profile here")
    ap.add_argument("--name", default="openmpi-tcp")
    ap.add_argument("--fail-above", type=float, help="exit 1 if a predicted log's median error exceeds this")
    a = ap.parse_args()
    ranks_of = {}
    for item in a.ranks_of:
        path, _, n = item.partition("=")
        ranks_of[path] = int(n)
    fit_logs = [read_log(f, ranks_of.get(f)) for f in a.fit]
    predict_logs = [read_log(f, ranks_of.get(f)) for f in a.predict]
    free = [name for name, *_ in PARAMS] if a.all else ["message_overhead_s", "call_overhead_s", a.per_byte]
    p = fit(fit_logs, free)
    print("fitted on " + ", ".join(f"{f} ({r} processes)" for f, (r, _) in zip(a.fit, fit_logs)) + ":")
    for name, scale, unit, *_ in PARAMS:
        print(f"  {name:22s} {p[name] / scale:9.3f} {unit}" + ("" if name in free else "   (fixed)"))
    every = {4, 64, 1024, 4096, 8192, 12288, 16384, 32768, 65536, 131072, 262144, 524288, 786432, 1048576}
    logs = fit_logs + predict_logs
    print()
    print(table(logs, p, every))
    print()
    worst = 0.0
    for f, log in zip(a.fit + a.predict, logs):
        errs = errors(log, p)
        role = "fitted" if f in a.fit else "predicted"
        med = median_abs(errs)
        print(f"{role:9s} {f}: median |simulated - measured| / measured: {100 * med:.2f} % over {len(errs)} sizes "
              f"(max {100 * max(abs(e) for e in errs):.1f} %)")
        if f not in a.fit:
            worst = max(worst, med)
    if a.write:
        with open(a.write, "w") as out:
            out.write(profile_text(p, a.name, " and ".join(a.fit)))
    if a.fail_above is not None and worst > a.fail_above:
        print(f"prediction error {worst:.4f} exceeds --fail-above {a.fail_above}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
