#!/usr/bin/env python3
"""Draws one rank's rows of a `ddlsim run --trace` file as a Gantt chart (PNG or SVG, by the extension).

usage: plot_timeline.py TRACE.json OUT.png [--rank R] [--title TEXT]
Needs matplotlib (Debian: python3-matplotlib; run with /usr/bin/python3 if another python3 comes first).
"""
import argparse
import json
import sys

COLOURS = {"io": "#8c8c8c", "h2d": "#b0b0b0", "forward": "#4c72b0", "backward": "#dd8452", "update": "#55a868",
           "aggregation": "#c44e52", "timer": "#e6e6e6"}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace")
    p.add_argument("out")
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--title", default="")
    a = p.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_timeline.py: needs matplotlib (Debian package python3-matplotlib)")
    events = json.load(open(a.trace))["traceEvents"]
    rows = {e["tid"]: e["args"]["name"] for e in events
            if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == a.rank}
    spans = [e for e in events if e["ph"] == "X" and e["pid"] == a.rank]
    order = sorted(rows)
    fig, ax = plt.subplots(figsize=(10, 1.6 + 0.5 * len(order)))
    for e in spans:
        y = order.index(e["tid"])
        start, dur = e["ts"] / 1e3, e["dur"] / 1e3  # ms
        ax.barh(y, dur, left=start, height=0.7, color=COLOURS.get(e["cat"], "#999999"), edgecolor="black",
                linewidth=0.4)
        if dur > 0.45:
            label = e["name"].split(":", 1)[-1] + f" ({e['args']['iteration']})"
            ax.text(start + dur / 2, y, label, ha="center", va="center", fontsize=6.5)
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels([rows[t] for t in order])
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (ms)")
    ax.set_title(a.title, fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLOURS.values()]
    fig.legend(handles, COLOURS.keys(), ncol=len(COLOURS), fontsize=7, loc="lower center", frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
