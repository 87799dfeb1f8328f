#!/usr/bin/env python3
"""Compares two `ddlsim collective --csv` tables (message vs flow fidelity) size by size.

usage: compare_fidelity.py MESSAGE.csv FLOW.csv MIN_REL MAX_REL
Fails unless MIN_REL <= (flow - message) / message <= MAX_REL for every size; prints the differences.
"""
import csv
import sys


def times(path):
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
