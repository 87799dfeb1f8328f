#!/usr/bin/python3
"""`ddlsim plot` makes every kind of chart from files that ddlsim writes: scaling and breakdown from a sweep CSV,
collective from `collective --csv` (with --compare: the measured curve), layers from `run --report`; SVG parses as XML with an <svg> root and
drawn paths, PNG has PNG's signature, and the same CSV gives the same SVG twice. Exits 77 (skipped) when
/usr/bin/python3 has no matplotlib (Debian: python3-matplotlib).

usage: check_plots.py DDLSIM BUILD_DIR   (from the source directory)
"""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

ddlsim, build = sys.argv[1], sys.argv[2]
if subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"], capture_output=True).returncode != 0:
    print("skipped: /usr/bin/python3 has no matplotlib (apt-get install python3-matplotlib)")
    sys.exit(77)
work = os.path.join(build, "plot-check")
os.makedirs(work, exist_ok=True)


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def run(*args):
    p = subprocess.run([ddlsim, *args], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"ddlsim {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


sweep_csv = os.path.join(work, "sweep.csv")
if os.path.exists(sweep_csv):
    os.remove(sweep_csv)
run("sweep", "--platform", "platforms/p40-4x4-ib56.xml", "--workload", "workloads/resnet50-p40-b32.textproto",
    "--ranks", "1,4,16", "--schedule", "wfbp,sequential", "--iterations", "2", "--jobs", "2", "-q", "--csv", sweep_csv)
collective_csv = os.path.join(work, "collective.csv")
run("collective", "--platform", "platforms/cluster-10gbe.xml", "--ranks", "4", "--stack", "openmpi-tcp", "-q",
    "--compare", "data/osu-allreduce-10gbe/allreduce4.log", "--csv", collective_csv)

report_json = os.path.join(work, "alexnet-10gbe.json")
run("run", "--platform", "platforms/p40-4x4-10gbe.xml", "--workload", "workloads/alexnet-p40-b1024.textproto",
    "--iterations", "2", "-q", "--report", report_json)


def check_svg(path):
    root = ET.parse(path).getroot()
    if not root.tag.endswith("svg"):
        fail(f"{path}: root element is {root.tag}, not svg")
    paths = [e for e in root.iter() if e.tag.endswith("path")]
    if len(paths) < 20:
        fail(f"{path}: only {len(paths)} <path> elements: nothing drawn?")


for kind, option, csv_path in (("scaling", "--csv", sweep_csv), ("breakdown", "--csv", sweep_csv),
                               ("collective", "--csv", collective_csv), ("layers", "--report", report_json)):
    svg = os.path.join(work, f"{kind}.svg")
    png = os.path.join(work, f"{kind}.png")
    for out in (svg, png):
        if os.path.exists(out):
            os.remove(out)
        p = run("plot", kind, option, csv_path, "-o", out)
        if p.stdout.strip() != f"wrote {out}":
            fail(f"plot {kind}: printed {p.stdout.strip()!r}")
    check_svg(svg)
    with open(png, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            fail(f"{png}: not a PNG")
    first = open(svg, "rb").read()
    run("plot", kind, option, csv_path, "-o", svg)
    if open(svg, "rb").read() != first:
        fail(f"plot {kind}: the same CSV gives another SVG the second time")
    leftovers = [n for n in os.listdir(work) if ".ddlsim-" in n]
    if leftovers:
        fail(f"temporary files left: {leftovers}")
    if kind == "layers":  # one bar per aggregation and panel, green (hidden) and red (exposed) among them
        with open(svg, encoding="utf-8") as f:
            text = f.read()
        for colour in ("#59a14f", "#e15759", "#76b7e2"):
            if colour not in text:
                fail(f"{svg}: no {colour} bar")
    print(f"{kind}: SVG parses (svg root, drawn paths) and is reproducible, PNG is a PNG")
