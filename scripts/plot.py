#!/usr/bin/python3
"""Charts from ddlsim's CSVs and JSON reports, called by `ddlsim plot` (which checks the options first).

usage: plot.py KIND INPUT OUT SERIES TITLE
  KIND    scaling | collective | breakdown (INPUT: a CSV) | layers (INPUT: a run's JSON report)
  SERIES  comma-separated key columns that make a series ('' : chosen from the CSV)
  TITLE   chart title ('' : from the CSV's name)
Exit codes as ddlsim's: 1 bad CSV, 2 a setting (matplotlib missing, unknown column), 4 the chart cannot be written.
Every error is one line on stderr.
"""
import csv
import json
import math
import os
import sys

# Columns that set the GPU count: on the x axis of a scaling chart, not a series.
GPU_KEYS = {"ranks", "cluster.nodes", "cluster.gpus-per-node", "hosts"}
BREAKDOWN = [("io_s", "data loading (I/O)"), ("h2d_s", "host-to-device copy"), ("forward_s", "forward"),
             ("backward_s", "backward"), ("update_s", "update"), ("exposed_input_s", "input not hidden"),
             ("exposed_communication_s", "communication not hidden")]


# Series differ by marker and line as well as colour: overlapping lines stay visible.
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
LINES = ["-", "--", ":", "-."]


class Failure(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def read_table(path, first_result):
    """Header, rows (dicts) and key columns (those before `first_result`); Failure(1) for anything malformed."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            lines = list(csv.reader(f))
    except (OSError, UnicodeDecodeError) as e:
        raise Failure(1, f"{path}: cannot be read ({e})")
    except csv.Error as e:
        raise Failure(1, f"{path}: not CSV ({e})")
    if not lines:
        raise Failure(1, f"{path}: empty, expected a header line")
    header = lines[0]
    if first_result not in header:
        raise Failure(1, f"{path}: no '{first_result}' column (header: {','.join(header)[:200]}); "
                         "not a CSV of this kind")
    rows = []
    for number, fields in enumerate(lines[1:], start=2):
        if not fields:
            continue
        if len(fields) != len(header):
            raise Failure(1, f"{path}: line {number}: {len(fields)} fields, the header has {len(header)}")
        rows.append(dict(zip(header, fields), _line=number))
    if not rows:
        raise Failure(1, f"{path}: no data rows")
    return header, rows, header[:header.index(first_result)]


def number(path, row, column):
    text = row[column]
    try:
        value = float(text)
    except ValueError:
        raise Failure(1, f"{path}: line {row['_line']}: {column} is not a number (got '{text}')")
    if not math.isfinite(value):
        raise Failure(1, f"{path}: line {row['_line']}: {column} is not finite (got '{text}')")
    return value


def series_columns(path, keys, rows, given, exclude):
    if given:
        columns = [c for c in given.split(",") if c]
        for c in columns:
            if c not in keys:
                raise Failure(2, f"--series {given}: '{c}' is not a key column of {path} (keys: {', '.join(keys)})")
        return columns
    return [k for k in keys if k not in exclude and len({r[k] for r in rows}) > 1]


def short(value):
    """A file's name without its directory and extension (series labels stay short)."""
    return os.path.splitext(os.path.basename(value))[0] if "/" in value else value


def label(row, columns, separator=", "):
    return separator.join(f"{c.replace('cluster.', '')}={short(row[c])}" for c in columns)


def sort_key(row, columns):
    """Numbers as numbers, then text: the order a grid was given in, for ranks 2, 4, 16."""
    key = []
    for c in columns:
        try:
            key.append((0, float(row[c]), ""))
        except ValueError:
            key.append((1, 0.0, row[c]))
    return key


def group(rows, columns):
    groups = {}
    for r in rows:
        groups.setdefault(label(r, columns) or "all runs", []).append(r)
    return groups


def plot_scaling(plt, path, series, title):
    _, rows, keys = read_table(path, "gpus")
    columns = series_columns(path, keys, rows, series, GPU_KEYS)
    fig, (eff, thr) = plt.subplots(1, 2, figsize=(11, 4.2))
    for k, (label, members) in enumerate(group(rows, columns).items()):
        points = sorted((number(path, r, "gpus"), number(path, r, "scaling_efficiency_fraction"),
                         number(path, r, "throughput_samples_per_s")) for r in members)
        gpus = [p[0] for p in points]
        style = {"marker": MARKERS[k % len(MARKERS)], "linestyle": LINES[k // len(MARKERS) % len(LINES)]}
        eff.plot(gpus, [100 * p[1] for p in points], label=label, **style)
        thr.plot(gpus, [p[2] for p in points], label=label, **style)
    all_gpus = sorted({number(path, r, "gpus") for r in rows})
    for ax in (eff, thr):
        ax.set_xscale("log", base=2)
        ax.set_xticks(all_gpus)
        ax.set_xticklabels([f"{g:g}" for g in all_gpus])
        ax.set_xlabel("GPUs")
        ax.grid(True, alpha=0.3)
    eff.set_ylabel("scaling efficiency (%)")
    eff.set_ylim(0, 105)
    thr.set_ylabel("throughput (samples/s, log scale)")
    thr.set_yscale("log")
    handles, labels = eff.get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=min(3, max(1, len(labels))),
               bbox_to_anchor=(0.5, -0.02 - 0.045 * ((len(labels) + 2) // 3)))
    fig.suptitle(title or f"scaling ({os.path.basename(path)})")
    return fig


def plot_collective(plt, path, series, title):
    header, rows, keys = read_table(path, "bytes")
    columns = series_columns(path, keys, rows, series, set())
    measured = "measured_us" in header
    fig, (bw, tm) = plt.subplots(1, 2, figsize=(11, 4.2))
    for label, members in group(rows, columns).items():
        points = sorted((number(path, r, "bytes"), number(path, r, "busbw_GBps"), number(path, r, "time_us"),
                         number(path, r, "algbw_GBps"), number(path, r, "measured_us") if measured else 0.0)
                        for r in members)
        sizes = [p[0] for p in points]
        name = "simulated" if label == "all runs" else label
        line = bw.plot(sizes, [p[1] for p in points], marker=".", label=name)[0]
        tm.plot(sizes, [p[2] for p in points], marker=".", color=line.get_color(), label=name)
        if measured:
            tag = "measured" if label == "all runs" else f"{label} (measured)"
            # busbw = algbw x 2(n-1)/n: the simulated row's factor, applied to the measured algbw
            m_bw = [p[0] / (p[4] * 1e-6) / 1e9 * (p[1] / p[3] if p[3] > 0 else 0) if p[4] > 0 else 0 for p in points]
            bw.plot(sizes, m_bw, linestyle="--", marker="x", color=line.get_color(), label=tag)
            tm.plot(sizes, [p[4] for p in points], linestyle="--", marker="x", color=line.get_color(), label=tag)
    for ax in (bw, tm):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.grid(True, which="both", alpha=0.3)
    tm.set_yscale("log")
    bw.set_ylabel("bus bandwidth (GB/s)")
    tm.set_ylabel("time (us)")
    bw.legend(fontsize=8)
    fig.suptitle(title or f"allreduce ({os.path.basename(path)})")
    return fig


def plot_breakdown(plt, path, series, title):
    header, rows, keys = read_table(path, "gpus")
    for column, _ in BREAKDOWN:
        if column not in header:
            raise Failure(1, f"{path}: no '{column}' column; not a 'ddlsim sweep' CSV")
    columns = series_columns(path, keys, rows, series, set())
    rows = sorted(rows, key=lambda r: sort_key(r, columns))
    labels = ["\n".join(short(r[c]) for c in columns) or f"row {i + 1}" for i, r in enumerate(rows)]
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(rows) + 2), 4.8))
    bottom = [0.0] * len(rows)
    for column, name in BREAKDOWN:
        values = [1e3 * number(path, r, column) for r in rows]
        if not any(values):
            continue
        ax.bar(range(len(rows)), values, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_xlabel(" / ".join(c.replace("cluster.", "") for c in columns))
    ax.set_ylabel("time per iteration (ms)")
    handles, names = ax.get_legend_handles_labels()  # top of the stack first, as the bars read
    ax.legend(handles[::-1], names[::-1], fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(title or f"where one iteration's time goes ({os.path.basename(path)})")
    return fig


# Colours as in `ddlsim report --html` (Tableau 10).
FORWARD, BACKWARD, HIDDEN, EXPOSED = "#4e79a7", "#76b7e2", "#59a14f", "#e15759"


def read_report(path):
    """The parts of a run's JSON report a layers chart reads, checked; Failure(1) naming the field otherwise."""
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, UnicodeDecodeError) as e:
        raise Failure(1, f"{path}: cannot be read ({e})")
    except ValueError as e:
        raise Failure(1, f"{path}: not JSON ({e})")

    def need(obj, key, where, kind):
        if not isinstance(obj, dict) or key not in obj:
            raise Failure(1, f"{path}: {where}{key}: missing (not a ddlsim run report, or one from an older ddlsim)")
        value = obj[key]
        if kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise Failure(1, f"{path}: {where}{key}: expected a finite number >= 0 (got {json.dumps(value)[:40]})")
        elif not isinstance(value, kind):
            raise Failure(1, f"{path}: {where}{key}: expected {kind.__name__} (got {json.dumps(value)[:40]})")
        return value

    if not isinstance(report, dict):
        raise Failure(1, f"{path}: top level: expected an object (not a ddlsim report)")
    if need(report, "schema_version", "", float) != 1:
        raise Failure(1, f"{path}: schema_version: expected 1 (got {report['schema_version']})")
    for key in ("model", "gpu"):
        need(report, key, "", str)
    need(report, "gpus", "", float)
    layers = {}
    for i, layer in enumerate(need(report, "layers", "", list)):
        name = need(layer, "name", f"layers[{i}].", str)
        layers[name] = need(layer, "forward_s", f"layers[{i}].", float) + need(layer, "backward_s", f"layers[{i}].",
                                                                               float)
    rows = []
    seen = set()
    for i, a in enumerate(need(report, "aggregations", "", list)):
        where = f"aggregations[{i}]."
        names = need(a, "layers", where, list)
        if not names:
            raise Failure(1, f"{path}: {where}layers: empty (an aggregation carries at least one layer)")
        for name in names:
            if name not in layers:
                raise Failure(1, f"{path}: {where}layers: '{name}' is not a layer of the report")
        time_s, exposed_s = need(a, "time_s", where, float), need(a, "exposed_s", where, float)
        if exposed_s > time_s:
            raise Failure(1, f"{path}: {where}exposed_s: {exposed_s} s is more than its time_s {time_s} s")
        compute = sum(layers[n] for n in names if n not in seen)  # a split layer counts once
        seen.update(names)
        label = names[0] + (f" +{len(names) - 1}" if len(names) > 1 else "")
        rows.append((label, time_s - exposed_s, exposed_s, compute))
    if not rows:
        raise Failure(1, f"{path}: aggregations: empty (a one-GPU run has no communication to draw)")
    return report, rows


def plot_layers(plt, path, series, title):
    report, rows = read_report(path)
    n = len(rows)
    fig, (comm, comp) = plt.subplots(2, 1, figsize=(min(22, max(8, 0.11 * n + 3)), 6.4), sharex=True,
                                     gridspec_kw={"height_ratios": [3, 2]})
    x = list(range(n))
    hidden = [1e3 * r[1] for r in rows]
    exposed = [1e3 * r[2] for r in rows]
    comm.bar(x, hidden, width=0.85, color=HIDDEN, label="hidden behind backward")
    comm.bar(x, exposed, width=0.85, bottom=hidden, color=EXPOSED, label="exposed (after the last backward)")
    comm.set_ylabel("communication (ms)")
    comm.set_ylim(0, 1.18 * max(h + e for h, e in zip(hidden, exposed)) or 1)
    comm.legend(fontsize=8, loc="upper right", title=f"GPU 0, last measured iteration: {sum(hidden):.3f} ms hidden, "
                f"{sum(exposed):.3f} ms exposed in {n} aggregations", title_fontsize=8)
    comp.bar(x, [1e3 * r[3] for r in rows], width=0.85, color=BACKWARD)
    comp.set_ylabel("forward + backward\nof its layers (ms)")
    comp.invert_yaxis()  # computation hangs below, so a row reads top to bottom
    step = max(1, math.ceil(n / 110))
    comp.set_xticks(x[::step])
    comp.set_xticklabels([r[0] for r in rows][::step], rotation=90, fontsize=7)
    comp.set_xlabel("aggregation, in the order they ran (last layer first); '+N': N more layers merged into it")
    for ax in (comm, comp):
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_xlim(-0.6, n - 0.4)
    config = report.get("config") if isinstance(report.get("config"), dict) else {}
    where = [short(str(config[k])) for k in ("platform_file", "schedule", "algorithm") if config.get(k)]
    fig.suptitle(title or f"per-layer communication hidden vs exposed: {report['model']} on {report['gpus']} x "
                 f"{report['gpu']}" + (f" ({', '.join(where)})" if where else ""))
    fig.subplots_adjust(hspace=0.05)
    return fig


def save(fig, out):
    """Beside the target, then renamed over it (as ddlsim writes every output)."""
    extension = os.path.splitext(out)[1].lower()
    temporary = f"{out}.ddlsim-{os.getpid()}.tmp{extension}"
    try:
        fig.savefig(temporary, format=extension[1:], dpi=110, bbox_inches="tight",
                    metadata={"Date": None} if extension == ".svg" else None)
        os.replace(temporary, out)
    except OSError as e:
        try:
            os.remove(temporary)
        except OSError:
            pass
        raise Failure(4, f"-o {out}: cannot be written ({e.strerror or e})")


# The numeric columns each kind reads, and the column where results start (the key columns come before it).
NEEDS = {"scaling": ("gpus", ["gpus", "scaling_efficiency_fraction", "throughput_samples_per_s"]),
         "collective": ("bytes", ["bytes", "time_us", "algbw_GBps", "busbw_GBps"]),
         "breakdown": ("gpus", [c for c, _ in BREAKDOWN])}


def validate(kind, path):
    """Reads the CSV and every number the chart needs before matplotlib loads: a bad CSV fails fast, anywhere."""
    if kind == "layers":
        read_report(path)
        return
    first, columns = NEEDS[kind]
    header, rows, _ = read_table(path, first)
    for column in columns:
        if column not in header:
            raise Failure(1, f"{path}: no '{column}' column; not a CSV for a {kind} chart")
    for r in rows:
        for column in columns:
            number(path, r, column)
    if kind == "collective" and "measured_us" in header:
        for r in rows:
            number(path, r, "measured_us")


def main(argv):
    if len(argv) != 6:
        raise Failure(2, "plot.py: usage: plot.py KIND INPUT OUT SERIES TITLE (run it through 'ddlsim plot')")
    kind, path, out, series, title = argv[1:]
    if kind not in NEEDS and kind != "layers":
        raise Failure(2, f"plot: unknown kind '{kind}' (scaling, collective, breakdown, layers)")
    validate(kind, path)
    try:
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.hashsalt"] = "ddlsim"  # the same CSV gives the same SVG
        import matplotlib.pyplot as plt
    except ImportError:
        raise Failure(2, f"plot needs matplotlib for {sys.executable} (Debian: apt-get install python3-matplotlib)")
    draw = {"scaling": plot_scaling, "collective": plot_collective, "breakdown": plot_breakdown,
            "layers": plot_layers}[kind]
    fig = draw(plt, path, series, title)
    save(fig, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    try:
        main(sys.argv)
    except Failure as e:
        print(f"ddlsim: error: {' '.join(str(e).split())}", file=sys.stderr)
        sys.exit(e.code)
