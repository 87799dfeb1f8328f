#!/usr/bin/env python3
"""Checks a `ddlsim run --trace` file: valid JSON, one complete event per task per rank per iteration,
and on every (rank, stream) row the events follow each other without overlapping.

usage: check_trace.py TRACE.json RANKS ITERATIONS TASKS_PER_ITERATION [--pids P0,P1,...]
"""
import json
from decimal import Decimal
import sys


def main():
    path, ranks, iterations, tasks = sys.argv[1], *map(int, sys.argv[2:5])
    pids = set(range(ranks))
    if len(sys.argv) > 6 and sys.argv[5] == "--pids":  # a filtered trace: these ranks
        pids = {int(p) for p in sys.argv[6].split(",")}
    # Decimal: the times are printed in whole picoseconds, so a slice that ends where the next one starts must
    # give exactly equal sums (no tolerance: Perfetto reads a 1 ps overlap as nesting).
    events = json.load(open(path), parse_float=Decimal)["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    expected = ranks * iterations * tasks
    if len(complete) != expected:
        print(f"{len(complete)} task events, expected {expected}")
        return 1
    names = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"
             and not e["args"]["name"].startswith("links")}
    if names != pids:
        print(f"process names for ranks {sorted(names)}, expected {sorted(pids)}")
        return 1
    rows = {}
    for e in complete:
        rows.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
    for row, spans in rows.items():
        spans.sort()
        for (s0, e0, n0), (s1, e1, n1) in zip(spans, spans[1:]):
            if s1 < e0:
                print(f"rank {row[0]} stream {row[1]}: '{n1}' starts at {s1} us before '{n0}' ends at {e0} us")
                return 1
    counters = [e for e in events if e["ph"] == "C"]
    for e in counters:  # transfers in flight on a link: a whole number >= 0
        if e["args"]["transfers"] < 0:
            print(f"counter {e['name']} at {e['ts']} us: {e['args']['transfers']} transfers in flight")
            return 1
    print(f"{len(complete)} task events on {len(rows)} rows, no overlap")
    return 0


if __name__ == "__main__":
    sys.exit(main())
