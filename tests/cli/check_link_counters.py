#!/usr/bin/env python3
"""Checks the link counter tracks of a trace: present for LINK, whole numbers >= 0, back to 0 at the end (every
transfer that started ended). usage: check_link_counters.py TRACE.json LINK"""
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
counts = [(e["ts"], e["args"]["transfers"]) for e in events if e["ph"] == "C" and e["name"] == sys.argv[2]]
if not counts:
    sys.exit(f"no counter track for {sys.argv[2]}")
if any(n < 0 for _, n in counts) or counts[-1][1] != 0 or max(n for _, n in counts) < 1:
    sys.exit(f"{sys.argv[2]}: counts {counts[:5]}... must be >= 0, reach 1 and end at 0")
print(f"{sys.argv[2]}: {len(counts)} changes, at most {max(n for _, n in counts)} transfers in flight")
