#!/usr/bin/env python3
"""mgwfbp is never slower than wfbp nor than one bucket (every gradient in one aggregation), for every shipped
workload on every shipped platform at a small rank count. usage: mgwfbp_matrix.py DDLSIM [RANKS]"""
import glob
import json
import os
import subprocess
import sys
import tempfile

ddlsim = sys.argv[1]
ranks = sys.argv[2] if len(sys.argv) > 2 else "4"
SCHEDULES = {
    "wfbp": ["--schedule", "wfbp"],
    "one bucket": ["--schedule", "buckets", "--bucket-bytes", "1TiB", "--first-bucket-bytes", "1TiB"],
    "mgwfbp": ["--schedule", "mgwfbp"],
}
failures, runs = [], 0
with tempfile.TemporaryDirectory() as tmp:
    report = os.path.join(tmp, "r.json")
    for platform in sorted(glob.glob("platforms/*.xml")):
        for workload in sorted(glob.glob("workloads/*.textproto")):
            times = {}
            for name, args in SCHEDULES.items():
                subprocess.run([ddlsim, "run", "-q", "--platform", platform, "--workload", workload, "--ranks", ranks,
                                "--iterations", "2", "--report", report] + args, check=True, stdout=subprocess.DEVNULL)
                times[name] = json.load(open(report))["iteration_time_s"]
                runs += 1
            for other in ("wfbp", "one bucket"):
                if times["mgwfbp"] > times[other] * (1 + 1e-9):
                    failures.append(f"{platform} {workload}: mgwfbp {times['mgwfbp']*1e3:.3f} ms > {other} "
                                    f"{times[other]*1e3:.3f} ms")
for f in failures:
    print(f)
print(f"{runs} runs, {len(failures)} cases where mgwfbp is slower")
sys.exit(1 if failures else 0)
