#!/usr/bin/env python3
"""Checks that `ddlsim run --stack X` on the 10GbE cluster gives each layer's allreduce the time that
`ddlsim collective --stack X` gives the same size on the same ranks (to 1e-6 relative).

usage: check_stack_layers.py DDLSIM BUILD_DIR STACK
"""
import csv
import json
import subprocess
import sys

PLATFORM = "platforms/cluster-10gbe.xml"
WORKLOAD = "tests/data/stack-layers.textproto"
SIZES = {"small": 4096, "medium": 100000, "large": 1000000}


def main():
    ddlsim, build, stack = sys.argv[1:4]
    trace = f"{build}/stack-layers-{stack}.json"
    subprocess.run([ddlsim, "run", "-q", "--platform", PLATFORM, "--workload", WORKLOAD, "--stack", stack,
                    "--iterations", "1", "--schedule", "sequential", "--trace", trace], check=True,
                   stdout=subprocess.DEVNULL)
    events = [e for e in json.load(open(trace))["traceEvents"] if e["ph"] == "X" and e["cat"] == "aggregation"]
    bad = 0
    for layer, size in SIZES.items():
        run_us = max(e["dur"] for e in events if e["name"] == "agg:" + layer)
        table = f"{build}/stack-layers-{stack}-{layer}.csv"
        subprocess.run([ddlsim, "collective", "-q", "--platform", PLATFORM, "--ranks", "4", "--stack", stack,
                        "--sizes", f"{size}B:{size}B", "--csv", table], check=True, stdout=subprocess.DEVNULL)
        collective_us = float(next(csv.DictReader(open(table)))["time_us"])
        ok = abs(run_us - collective_us) <= 1e-6 * collective_us + 1e-5  # the trace prints 1 ps
        print(f"{stack} {layer} ({size} B): run {run_us:.6f} us, collective {collective_us:.6f} us"
              + ("" if ok else "  DIFFERENT"))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
