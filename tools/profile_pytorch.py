#!/usr/bin/env python3
"""Profile a PyTorch model layer by layer and write a ddlsim workload (text format or JSON).

What it measures (read this before trusting the numbers):
  * One training iteration of one device on synthetic data: forward, loss, backward, SGD step.
  * A "layer" is a module that owns parameters (Conv2d, BatchNorm2d, Linear, ...), in the order the forward
    pass calls them. Parameter-free work (ReLU, pooling, residual additions, flatten, the loss) is charged to
    the layer that precedes it in the forward pass and to the layer whose gradient completes after it in the
    backward pass, so the layer times add up to the whole forward and backward passes.
  * forward_s of layer i = start of layer i+1's forward - start of layer i's forward (the last layer runs to
    the end of the loss computation; the first layer starts at the beginning of the forward pass).
  * backward_s: the backward pass is cut at the moments each layer's parameter gradients are all computed
    (autograd hooks on the parameters). Layers are taken in the order their gradients complete; each gets the
    time since the previous completion (the first one since backward() was called). This is the quantity
    wait-free back-propagation cares about: when each gradient becomes ready.
  * gradient_bytes = sum of numel x element size of the layer's trainable parameters (the gradient has the
    parameter's dtype).
  * update_s: optimizer.step() of plain SGD (momentum 0.9) over all parameters.
  * h2d_s: a pinned host batch copied to the GPU (0 on CPU). io_s: 0, the data are synthetic (not measured).
  * Timing: CUDA events on the GPU (one event per boundary, elapsed times read after a synchronize); on CPU,
    time.perf_counter() (CPU execution is synchronous). `--warmup` iterations are run and discarded, then
    `--repeats` iterations are timed; every reported number is the median over the repeats, per layer.
  * Hooks and events add a little overhead per layer (microseconds), included in the times.

On CPU the numbers are CPU times: use it only to test the tool (e.g. `--model tiny --device cpu`).
Exit status: 0 written; 1 runtime error; 2 usage error; 77 when torch (or torchvision for a torchvision model) is not
importable, so that a test harness can report a skip.
"""

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time

SKIP = 77


def usage_error(message):
    """One line on stderr, exit status 2 (argparse's own errors also print the usage)."""
    print("profile_pytorch.py: error: " + message, file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True,
                   help="'tiny' (a 5-layer CNN for tests) or a torchvision.models name such as resnet50")
    p.add_argument("--batch", type=int, required=True, help="samples per iteration (> 0)")
    p.add_argument("--gpu", required=True,
                   help="reference_gpu written to the workload: the ddlsim GPU-catalogue name of the GPU measured "
                        "(with --device cpu this is only a label so that ddlsim loads the file)")
    p.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu (default: cuda)")
    p.add_argument("--precision", choices=["fp32", "fp16"], default="fp32",
                   help="fp16: torch.autocast mixed precision (GPU only); default fp32")
    p.add_argument("--image-size", type=int, default=0, help="input side in pixels (default: 224; tiny: 32)")
    p.add_argument("--warmup", type=int, default=5, help="untimed iterations first (>= 0, default 5)")
    p.add_argument("--repeats", type=int, default=20, help="timed iterations; medians are reported (>= 1)")
    p.add_argument("-o", "--output", required=True, help="output workload: .textproto/.pbtxt/.txtpb or .json")
    a = p.parse_args(argv)
    if a.batch < 1:
        usage_error("--batch must be >= 1 (got %d)" % a.batch)
    if a.warmup < 0:
        usage_error("--warmup must be >= 0 (got %d)" % a.warmup)
    if a.repeats < 1:
        usage_error("--repeats must be >= 1 (got %d)" % a.repeats)
    if a.image_size < 0:
        usage_error("--image-size must be > 0 (got %d)" % a.image_size)
    if not a.output.endswith((".textproto", ".pbtxt", ".txtpb", ".json")):
        usage_error("--output %s: unknown workload format (expected .textproto, .pbtxt, .txtpb or .json)" % a.output)
    return a


def build_model(torch, name):
    nn = torch.nn
    if name == "tiny":
        return nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 16, 3, padding=1, stride=2), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10)), 10, 32
    try:
        import torchvision.models as models
    except ImportError as e:
        print("SKIP: torchvision is not importable (%s); only --model tiny works without it" % e, file=sys.stderr)
        sys.exit(SKIP)
    if not hasattr(models, name) or not callable(getattr(models, name)):
        raise SystemExit("profile_pytorch.py: error: unknown model '%s' (not in torchvision.models)" % name)
    return getattr(models, name)(), 1000, 224


class Timer:
    """Boundary timestamps: CUDA events on a GPU, perf_counter on the CPU."""

    def __init__(self, torch, device):
        self.torch = torch
        self.cuda = device.type == "cuda"

    def mark(self):
        if self.cuda:
            ev = self.torch.cuda.Event(enable_timing=True)
            ev.record()
            return ev
        return time.perf_counter()

    def seconds(self, a, b):
        if self.cuda:
            return a.elapsed_time(b) / 1e3  # elapsed_time is in milliseconds
        return b - a

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()


def layer_modules(model):
    """Modules that own parameters directly (not through children), with their qualified names."""
    out = []
    for name, module in model.named_modules():
        params = [p for p in module.parameters(recurse=False) if p.requires_grad]
        if params:
            out.append((name or type(module).__name__, module, params))
    return out


def profile(args):
    try:
        import torch
    except ImportError as e:
        print("SKIP: torch is not importable (%s); install PyTorch to profile" % e, file=sys.stderr)
        return SKIP
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("profile_pytorch.py: error: --device %s but CUDA is not available (use --device cpu)"
                         % args.device)
    if args.precision == "fp16" and device.type != "cuda":
        raise SystemExit("profile_pytorch.py: error: --precision fp16 needs a CUDA device")
    model, classes, default_side = build_model(torch, args.model)
    side = args.image_size or default_side
    model = model.to(device).train()
    layers = layer_modules(model)
    if not layers:
        raise SystemExit("profile_pytorch.py: error: model '%s' has no trainable parameters" % args.model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    timer = Timer(torch, device)
    x_host = torch.randn(args.batch, 3, side, side)
    if device.type == "cuda":
        x_host = x_host.pin_memory()
    x = x_host.to(device)
    y = torch.randint(0, classes, (args.batch,), device=device)

    # Per-iteration state the hooks write into.
    state = {"fwd_start": {}, "grad_done": {}, "pending": {}, "calls": {}}

    def pre_hook(name):
        def hook(module, inputs):
            state["calls"][name] = state["calls"].get(name, 0) + 1
            if state["calls"][name] > 1:
                raise RuntimeError("module '%s' is called more than once per forward pass; per-layer times "
                                   "would be ambiguous" % name)
            state["fwd_start"][name] = timer.mark()
        return hook

    def grad_hook(name):
        def hook(grad):
            state["pending"][name] -= 1
            if state["pending"][name] == 0:
                state["grad_done"][name] = timer.mark()
            return grad
        return hook

    handles = []
    for name, module, params in layers:
        handles.append(module.register_forward_pre_hook(pre_hook(name)))
        for p in params:
            handles.append(p.register_hook(grad_hook(name)))

    samples = {name: {"fwd": [], "bwd": []} for name, _, _ in layers}
    order_seen = None
    totals = {"update": [], "h2d": [], "forward": [], "backward": []}
    for it in range(args.warmup + args.repeats):
        state["fwd_start"].clear()
        state["grad_done"].clear()
        state["calls"].clear()
        for name, _, params in layers:
            state["pending"][name] = len(params)
        optimizer.zero_grad(set_to_none=True)
        h2d_a = timer.mark()
        if device.type == "cuda":
            x = x_host.to(device, non_blocking=True)
        h2d_b = timer.mark()
        t0 = timer.mark()
        with (torch.autocast(device_type="cuda", dtype=torch.float16) if args.precision == "fp16"
              else contextlib.nullcontext()):
            loss = loss_fn(model(x), y)
        t_fwd_end = timer.mark()
        loss.backward()
        t_bwd_end = timer.mark()
        optimizer.step()
        t_step_end = timer.mark()
        timer.sync()
        if it < args.warmup:
            continue
        missing = [n for n, _, _ in layers if n not in state["fwd_start"] or n not in state["grad_done"]]
        if missing:
            raise SystemExit("profile_pytorch.py: error: layers not reached in forward or backward: %s"
                             % ", ".join(missing[:5]))
        # Forward: boundaries at each layer's start, in call order.
        fwd_order = sorted(state["fwd_start"], key=lambda n: timer.seconds(t0, state["fwd_start"][n]))
        if order_seen is None:
            order_seen = fwd_order
        for i, name in enumerate(fwd_order):
            begin = t0 if i == 0 else state["fwd_start"][name]
            end = t_fwd_end if i + 1 == len(fwd_order) else state["fwd_start"][fwd_order[i + 1]]
            samples[name]["fwd"].append(max(0.0, timer.seconds(begin, end)))
        # Backward: cut at gradient completions, in completion order.
        bwd_order = sorted(state["grad_done"], key=lambda n: timer.seconds(t_fwd_end, state["grad_done"][n]))
        previous = t_fwd_end
        for name in bwd_order:
            samples[name]["bwd"].append(max(0.0, timer.seconds(previous, state["grad_done"][name])))
            previous = state["grad_done"][name]
        totals["forward"].append(timer.seconds(t0, t_fwd_end))
        totals["backward"].append(timer.seconds(t_fwd_end, t_bwd_end))
        totals["update"].append(timer.seconds(t_bwd_end, t_step_end))
        totals["h2d"].append(timer.seconds(h2d_a, h2d_b) if device.type == "cuda" else 0.0)
    for h in handles:
        h.remove()

    params_of = {name: params for name, _, params in layers}
    out_layers = []
    for name in order_seen:
        out_layers.append({
            "name": name,
            "forward_s": statistics.median(samples[name]["fwd"]),
            "backward_s": statistics.median(samples[name]["bwd"]),
            "gradient_bytes": sum(p.numel() * p.element_size() for p in params_of[name]),
        })
    med = {k: statistics.median(v) for k, v in totals.items()}
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU (times are CPU times)"
    workload = {
        "schema_version": 1,
        "model": args.model,
        "batch_size_per_gpu": args.batch,
        "reference_gpu": args.gpu,
        "io_s": 0.0,
        "h2d_s": med["h2d"],
        "update_s": med["update"],
        "layers": out_layers,
        "source": ("tools/profile_pytorch.py: %s, batch %d, %dx%d input, %s, on %s, torch %s; medians of %d "
                   "iterations after %d warm-up; synthetic data (io_s not measured); whole forward %.6g s, "
                   "whole backward %.6g s (medians)"
                   % (args.model, args.batch, side, side, args.precision, where, torch.__version__, args.repeats,
                      args.warmup, med["forward"], med["backward"])),
    }
    write(workload, args.output)
    print("wrote %s (%d layers, %d gradient bytes)" % (args.output, len(out_layers),
                                                       sum(l["gradient_bytes"] for l in out_layers)))
    return 0


def text_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def text_double(v):
    if not math.isfinite(v):
        raise SystemExit("profile_pytorch.py: error: non-finite time %r" % v)
    return repr(float(v))


def write(w, path):
    if path.endswith(".json"):
        text = json.dumps(w, indent=1) + "\n"
    else:
        lines = ["schema_version: %d" % w["schema_version"],
                 "model: %s" % text_string(w["model"]),
                 "batch_size_per_gpu: %d" % w["batch_size_per_gpu"],
                 "reference_gpu: %s" % text_string(w["reference_gpu"]),
                 "io_s: %s" % text_double(w["io_s"]),
                 "h2d_s: %s" % text_double(w["h2d_s"]),
                 "update_s: %s" % text_double(w["update_s"])]
        for l in w["layers"]:
            lines.append("layers {\n  name: %s\n  forward_s: %s\n  backward_s: %s\n  gradient_bytes: %d\n}"
                         % (text_string(l["name"]), text_double(l["forward_s"]), text_double(l["backward_s"]),
                            l["gradient_bytes"]))
        lines.append("source: %s" % text_string(w["source"]))
        text = "\n".join(lines) + "\n"
    directory = os.path.dirname(path)
    if directory and not os.path.isdir(directory):
        raise SystemExit("profile_pytorch.py: error: --output %s: directory '%s' does not exist" % (path, directory))
    with open(path, "w") as f:
        f.write(text)


def main(argv):
    args = parse_args(argv)
    return profile(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
