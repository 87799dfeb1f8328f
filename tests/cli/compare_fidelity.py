#!/usr/bin/env python3
"""Compares two `ddlsim collective --csv` tables (message vs flow fidelity) size by size, or two `ddlsim run --report`
JSON reports by their iteration time.

usage: compare_fidelity.py MESSAGE.csv FLOW.csv MIN_REL MAX_REL
       compare_fidelity.py MESSAGE.json FLOW.json MIN_REL MAX_REL
Fails unless MIN_REL <= (flow - message) / message <= MAX_REL for every size (for the iteration); prints the
differences (reports: as one row of 0 B, times in us).
"""
import csv
import json
import sys


def times(path):
    if path.endswith(".json"):
        with open(path) as f:
            return {0: json.load(f)["iteration_time_s"] * 1e6}
    with open(path, newline="") as f:
        return {int(r["bytes"]): float(r["time_us"]) for r in csv.DictReader(f)}


def main():
    message, flow = times(sys.argv[1]), times(sys.argv[2])
    lo, hi = float(sys.argv[3]), float(sys.argv[4])
    if message.keys() != flow.keys():
        print("the two tables have different sizes")
        return 1
    bad = 0
    for size in sorted(message):
        rel = (flow[size] - message[size]) / message[size]
        ok = lo <= rel <= hi
        bad += not ok
        print(f"{size:>12} B  message {message[size]:14.3f} us  flow {flow[size]:14.3f} us  {rel:+.2e}"
              f"{'' if ok else '  OUT OF [%g, %g]' % (lo, hi)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
