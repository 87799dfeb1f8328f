#!/usr/bin/env python3
"""Fails (exit 1, one line per violation) when a source file includes a folder its layer may not use.

Called by the build for every src/ folder (cmake/DdlsimLayer.cmake): the allowed folders are the layer's
declared dependencies, so the dependency table of docs/design.md is enforced by the build, not by convention.
usage: check_layers.py FOLDER --allowed F1 F2 ... [--simgrid] [--boost] -- FILE...
"""
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SIMGRID = ("simgrid/", "xbt/", "xbt.h", "simgrid.h")


def main(argv):
    sep = argv.index("--")
    head, files = argv[:sep], argv[sep + 1:]
    folder = head[0]
    allowed = set(head[head.index("--allowed") + 1:]) if "--allowed" in head else set()
    allowed = {a for a in allowed if not a.startswith("--")} | {folder, "proto"}
    simgrid = "--simgrid" in head
    boost_po = "--boost" in head
    bad = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                kind, name = m.groups()
                where = f"{path}:{number}"
                if kind == "<":
                    if name.startswith(SIMGRID) and not simgrid:
                        bad.append(f"{where}: src/{folder}/ may not include SimGrid (<{name}>)")
                    if name.startswith("boost/program_options") and not boost_po:
                        bad.append(f"{where}: src/{folder}/ may not include Boost.Program_options (<{name}>)")
                    continue
                top = name.split("/", 1)[0] if "/" in name else folder
                if top not in allowed:
                    bad.append(f'{where}: src/{folder}/ may not include "{name}" '
                               f"(allowed: {', '.join(sorted(allowed))}; docs/design.md)")
    for b in bad:
        print(b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
