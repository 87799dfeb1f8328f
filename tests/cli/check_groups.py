#!/usr/bin/env python3
"""Checks a report's merge plan: every layer with a gradient appears once, in backward order, and the group bytes
add up to the layers' gradient bytes. usage: check_groups.py REPORT.json WORKLOAD.textproto"""
import json
import re
import sys

report = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
layers = re.findall(r'layers \{\s*name: "([^"]+)".*?gradient_bytes: (\d+)', text, re.S)
expected = [(n, int(b)) for n, b in reversed(layers) if int(b) > 0]
groups = report["aggregation_groups"]
seen = [name for g in groups for name in g["layers"]]
if seen != [n for n, _ in expected]:
    sys.exit(f"layers in the plan {seen[:5]}... differ from the gradients in backward order")
size = dict(expected)
for g in groups:
    if sum(size[n] for n in g["layers"]) != int(g["bytes"]):
        sys.exit(f"group {g['layers'][0]}..: bytes {g['bytes']} differ from its layers' sum")
if report["aggregations_per_iteration"] != len(groups):
    sys.exit("aggregations_per_iteration differs from the number of groups")
print(f"{len(groups)} groups cover {len(seen)} gradients")
