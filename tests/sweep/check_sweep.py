#!/usr/bin/python3
"""`ddlsim sweep` against single runs: a 3 x 2 x 2 grid gives 12 rows equal to 12 `ddlsim run --report`s; --jobs 2
gives the same rows; a sweep killed after a few rows (and a torn last line) resumes to the same 12 rows without
rerunning the finished ones; `--csv -` writes the same rows on standard output.

usage: check_sweep.py DDLSIM BUILD_DIR   (from the source directory)
"""
import csv
import io
import json
import os
import signal
import subprocess
import sys
import time

ddlsim, build = sys.argv[1], sys.argv[2]
work = os.path.join(build, "sweep-check")
os.makedirs(work, exist_ok=True)
os.environ["TMPDIR"] = work  # the killed sweep's temporary directory stays in the build tree
CLUSTER = "nodes=1|2|4,gpus-per-node=2,gpu=P40,intra=pcie,inter=10gbe"
GRID = ["--cluster", CLUSTER, "--schedule", "wfbp,sequential", "--model", "alexnet", "--batch", "16,32",
        "--iterations", "2"]
KEYS = ["cluster.nodes", "schedule", "batch"]
METRICS = {"gpus": lambda r: r["gpus"], "iteration_time_s": lambda r: r["iteration_time_s"],
           "throughput_samples_per_s": lambda r: r["throughput_samples_per_s"], "speedup_x": lambda r: r["speedup"],
           "scaling_efficiency_fraction": lambda r: r["scaling_efficiency"],
           "single_gpu_iteration_time_s": lambda r: r["single_gpu_iteration_time_s"]}
for b in ["io_s", "h2d_s", "forward_s", "backward_s", "update_s", "exposed_input_s", "exposed_communication_s",
          "communication_s"]:
    METRICS[b] = lambda r, b=b: r["breakdown"][b]


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def fresh(path):
    for p in (path, path + ".errors"):
        if os.path.exists(p):
            os.remove(p)
    return path


def sweep(csv_path, *extra, check=True):
    p = subprocess.run([ddlsim, "sweep", *GRID, "--csv", csv_path, *extra], capture_output=True, text=True)
    if check and p.returncode != 0:
        fail(f"sweep exited {p.returncode}: {p.stderr.strip()}")
    return p


def rows_of(text):
    table = list(csv.reader(io.StringIO(text)))
    return table[0], table[1:]


def read(path):
    with open(path, encoding="utf-8") as f:
        return rows_of(f.read())


# 1. the grid, and the same 12 points run one by one
path = fresh(os.path.join(work, "grid.csv"))
start = time.monotonic()
sweep(path, "-q", "--jobs", "1")
wall1 = time.monotonic() - start
header, rows = read(path)
if header[:3] != KEYS or header[3:] != list(METRICS):
    fail(f"header {header}")
if len(rows) != 12 or len({tuple(r[:3]) for r in rows}) != 12:
    fail(f"{len(rows)} rows, expected 12 distinct points")
workloads = {}
for batch in ("16", "32"):
    workloads[batch] = os.path.join(work, f"alexnet-b{batch}.textproto")
    subprocess.run([ddlsim, "workload", "--model", "alexnet", "--batch", batch, "-o", workloads[batch]], check=True,
                   capture_output=True)
for row in rows:
    nodes, schedule, batch = row[:3]
    report = os.path.join(work, "single.json")
    cluster = f"nodes={nodes},gpus-per-node=2,gpu=P40,intra=pcie,inter=10gbe"
    subprocess.run([ddlsim, "run", "--cluster", cluster, "--schedule", schedule, "--workload", workloads[batch],
                    "--iterations", "2", "-q", "--report", report], check=True, capture_output=True)
    with open(report, encoding="utf-8") as f:
        r = json.load(f)
    for column, value in zip(header[3:], row[3:]):
        expected = float(METRICS[column](r))
        if float(value) != expected:
            fail(f"nodes={nodes} {schedule} batch={batch}: {column} is {value} in the sweep, {expected!r} alone")
print("12 rows equal 12 single runs")

# 2. --jobs 2: the same rows (in the order they finish)
path2 = fresh(os.path.join(work, "grid-j2.csv"))
start = time.monotonic()
sweep(path2, "-q", "--jobs", "2")
wall2 = time.monotonic() - start
if sorted(read(path2)[1]) != sorted(rows):
    fail("--jobs 2 gives other rows than --jobs 1")
print(f"--jobs 2 gives the same rows (wall {wall1:.2f} s with --jobs 1, {wall2:.2f} s with --jobs 2)")

# 3. killed after 3 rows, a torn last line added: the rerun completes the same 12 rows and reruns none of the 3
path3 = fresh(os.path.join(work, "killed.csv"))
child = subprocess.Popen([ddlsim, "sweep", *GRID, "--csv", path3, "-q"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    if os.path.exists(path3) and open(path3, encoding="utf-8").read().count("\n") >= 4:
        break
    time.sleep(0.01)
child.send_signal(signal.SIGKILL)
child.wait()
_, kept = read(path3)
if not 3 <= len(kept) < 12:
    fail(f"the killed sweep left {len(kept)} rows, expected 3..11 (it ran too fast to be killed midway?)")
with open(path3, "a", encoding="utf-8") as f:
    f.write("4,wfbp,3")  # a row cut in the middle of its write
p = sweep(path3, check=True)
if f"{len(kept)} from the CSV" not in p.stderr:
    fail(f"the rerun did not skip the {len(kept)} finished rows: {p.stderr.strip()}")
header3, rows3 = read(path3)
if header3 != header or sorted(rows3) != sorted(rows) or rows3[:len(kept)] != kept:
    fail("the resumed sweep's rows differ from the uninterrupted sweep's")
print(f"killed after {len(kept)} rows and a torn line, the rerun skipped them and completed the same 12 rows")

# 3b. interrupted (SIGINT, as Ctrl-C): exit 3 with one line saying so, every finished row kept, the rest to do
path5 = fresh(os.path.join(work, "interrupted.csv"))
child = subprocess.Popen([ddlsim, "sweep", *GRID, "--csv", path5, "-q"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    if os.path.exists(path5) and open(path5, encoding="utf-8").read().count("\n") >= 3:
        break
    time.sleep(0.01)
child.send_signal(signal.SIGINT)
_, stderr = child.communicate()
_, kept = read(path5)
if child.returncode != 3 or "sweep interrupted:" not in stderr or stderr.count("\n") != 1:
    fail(f"SIGINT: exit {child.returncode}, stderr {stderr!r}")
if not kept or not set(map(tuple, kept)) <= set(map(tuple, rows)):
    fail("SIGINT: the finished rows were not kept")
sweep(path5, "-q")
if sorted(read(path5)[1]) != sorted(rows):
    fail("SIGINT: the rerun does not complete the same 12 rows")
print(f"interrupted after {len(kept)} rows, exit 3 in one line, the rerun completed the same 12 rows")

# 4. --csv -: the rows on standard output
p = sweep("-", "-q")
header4, rows4 = rows_of(p.stdout)
if header4 != header or sorted(rows4) != sorted(rows):
    fail("--csv - does not write the same table on standard output")
print("--csv - writes the same 12 rows on standard output")

# 5. --collective: one row per size of each run, equal to `ddlsim collective --csv` run alone
path6 = fresh(os.path.join(work, "collective.csv"))
base = ["--platform", "platforms/p40-4x4-ib56.xml", "--ranks", "8", "--sizes", "1KiB:1MiB", "--factor", "32"]
p = subprocess.run([ddlsim, "sweep", "--collective", *base, "--algorithm", "ring|rd<=8KiB,hd", "--csv", path6, "-q"],
                   capture_output=True, text=True)
if p.returncode != 0:
    fail(f"sweep --collective: exit {p.returncode}: {p.stderr.strip()}")
header6, rows6 = read(path6)
expected = []
for algorithm in ("ring", "rd<=8KiB,hd"):
    single = os.path.join(work, "single-collective.csv")
    subprocess.run([ddlsim, "collective", *base, "--algorithm", algorithm, "--csv", single, "-q"], check=True,
                   capture_output=True)
    single_header, single_rows = read(single)
    expected += [[algorithm, *r] for r in single_rows]
if header6 != ["algorithm", *single_header] or sorted(rows6) != sorted(expected) or len(rows6) != 6:
    fail(f"sweep --collective: {header6} {rows6} differ from the single runs' {expected}")
print("--collective: 2 algorithms x 3 sizes, the rows of the single collective runs")
