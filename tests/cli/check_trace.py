#!/usr/bin/env python3
"""Checks a `ddlsim run --trace` file: valid JSON, one complete event per task per rank per iteration,
on every (rank, stream) row the events follow each other without overlapping, and every flow arrow (a message)
has one start ("s") and one finish ("f", "bp": "e") with the same name and category, each at least 1 ns inside an
aggregation slice of its own (rank, row) -- Perfetto keeps nanoseconds and binds a flow event to the slice open at
its time -- the start on the sender, the finish on the receiver its args name.

usage: check_trace.py TRACE.json RANKS ITERATIONS TASKS_PER_ITERATION [--pids P0,P1,...] [--flows N]
  --flows N: the trace must hold exactly N arrows (the messages between kept ranks in kept iterations)
"""
import json
from decimal import Decimal
import sys


def main():
    path, ranks, iterations, tasks = sys.argv[1], *map(int, sys.argv[2:5])
    pids = set(range(ranks))
    options = dict(zip(sys.argv[5::2], sys.argv[6::2]))
    if "--pids" in options:  # a filtered trace: these ranks
        pids = {int(p) for p in options["--pids"].split(",")}
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
    if "--flows" in options:
        status = check_flows(events, rows, int(options["--flows"]))
        if status:
            return status
    counters = [e for e in events if e["ph"] == "C"]
    for e in counters:  # transfers in flight on a link: a whole number >= 0
        if e["args"]["transfers"] < 0:
            print(f"counter {e['name']} at {e['ts']} us: {e['args']['transfers']} transfers in flight")
            return 1
    flows = sum(1 for e in events if e["ph"] == "s")
    print(f"{len(complete)} task events on {len(rows)} rows, no overlap" + (f", {flows} flows" if flows else ""))
    return 0


def check_flows(events, rows, expected):
    """Every flow id has one "s" and one "f", both strictly inside (by >= 1 ns) an aggregation slice of its row."""
    ns = Decimal("0.001")
    aggregations = {}
    for e in events:
        if e["ph"] == "X" and e["cat"] == "aggregation":
            aggregations.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    ends = {}
    for e in events:
        if e["ph"] not in ("s", "f"):
            continue
        if (e["ph"], e["id"]) in ends:
            print(f"flow {e['id']}: two '{e['ph']}' events")
            return 1
        ends[(e["ph"], e["id"])] = e
        if e["ph"] == "f" and e.get("bp") != "e":
            print(f"flow {e['id']}: the finish does not bind to its enclosing slice (\"bp\": \"e\")")
            return 1
        slices = aggregations.get((e["pid"], e["tid"]), [])
        if not any(start + ns <= e["ts"] <= end - ns for start, end in slices):
            print(f"flow {e['id']}: '{e['ph']}' at {e['ts']} us on rank {e['pid']} row {e['tid']} is not 1 ns inside "
                  f"an aggregation slice")
            return 1
    starts = {i for (ph, i) in ends if ph == "s"}
    finishes = {i for (ph, i) in ends if ph == "f"}
    if starts != finishes:
        print(f"flows without a finish: {sorted(starts - finishes)[:5]}, without a start: {sorted(finishes - starts)[:5]}")
        return 1
    for i in starts:
        s, f = ends[("s", i)], ends[("f", i)]
        if (s["name"], s["cat"]) != (f["name"], f["cat"]) or s["args"]["to"] != f["pid"]:
            print(f"flow {i}: start {s} and finish {f} do not match")
            return 1
    if len(starts) != expected:
        print(f"{len(starts)} flows, expected {expected}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
