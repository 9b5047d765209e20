#!/usr/bin/env python3
"""How much does ``gradscope.trace()`` slow a training step down, and how much memory does it use?

Not a test: a benchmark that prints a markdown report. Run from the repo root:

    python benchmarks/overhead.py               # full run (~15 repetitions, a few minutes)
    python benchmarks/overhead.py --quick       # a rough pass in well under a minute
    python benchmarks/overhead.py --threads 2   # let torch use both cores
    python benchmarks/overhead.py --json out.json

Method. Each model runs one training step at a time (zero_grad, forward, cross_entropy,
backward, optimizer.step, loss.item()). Three variants run side by side:

* ``plain``      - nothing installed;
* ``empty-mode`` - an empty ``torch.overrides.TorchFunctionMode`` (the floor for any
  ``__torch_function__``-based recorder);
* ``gradscope``  - ``with gradscope.trace():`` around the K steps of one sample (a fresh
  trace per sample, entry and exit included).

A sample is the mean step time over K steps (K chosen so a plain sample takes about
0.1 s). In every repetition the variant order is shuffled; the reported ratio is the
median over repetitions of variant/plain *within* the same repetition (paired), which
cancels most of the drift of a shared 2-core VM.

Memory per event: tracemalloc's retained Python allocations after a trace of a few MLP
steps and its first query (trace object still alive), divided by the number of events. Tensor storage is not
counted by tracemalloc; gradscope is not meant to keep tensors alive anyway.

Big trace: enough tiny-MLP steps under one trace to pass 100k events; reports the time,
and that ``tr.why(...)``, ``tr.save()`` and ``gradscope.load()`` work on it.
"""
from __future__ import annotations

import argparse
import gc
import inspect
import json
import math
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import tracemalloc

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

try:  # run from a checkout without installing
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import gradscope  # noqa: E402

    _GS_ERROR = None if hasattr(gradscope, "trace") else "gradscope has no trace()"
except Exception as e:  # noqa: BLE001 - report any import failure and go on without it
    gradscope = None
    _GS_ERROR = f"{type(e).__name__}: {e}"

TARGET_RATIO = 1.25  # gradscope / plain on the realistic models
TARGET_TINY = 2.0  # gradscope overhead / empty-mode overhead on the tiny MLP
TARGET_BYTES_PER_EVENT = 1024
BIG_EVENTS = 100_000


class EmptyMode(TorchFunctionMode):
    """The cheapest possible TorchFunctionMode: intercept every call, do nothing."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class CountingMode(TorchFunctionMode):
    """Counts the ``__torch_function__`` calls a step makes (what any such recorder intercepts)."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


# --------------------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------------------
class Bench:
    """One model, its optimizer and a fixed batch."""

    def __init__(self, key, title, model, opt, x, y):
        self.key, self.title, self.model, self.opt, self.x, self.y = key, title, model, opt, x, y

    def step(self):
        self.opt.zero_grad()
        out = self.model(self.x)
        loss = F.cross_entropy(out, self.y)
        loss.backward()
        self.opt.step()
        return loss.item()


class SeqClassifier(nn.Module):
    def __init__(self, d_model=128, nhead=4, classes=10):
        super().__init__()
        self.encoder = nn.TransformerEncoderLayer(d_model=d_model, nhead=nhead, batch_first=True)
        self.head = nn.Linear(d_model, classes)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))


def mlp(width, depth_in, classes=10):
    return nn.Sequential(
        nn.Linear(depth_in, width), nn.ReLU(),
        nn.Linear(width, width), nn.ReLU(),
        nn.Linear(width, classes),
    )


def make_benches(only=None):
    torch.manual_seed(0)
    benches = []

    m = mlp(512, 512)
    benches.append(Bench("mlp", "MLP 512 (batch 64, Adam)", m, torch.optim.Adam(m.parameters(), 1e-3),
                         torch.randn(64, 512), torch.randint(0, 10, (64,))))

    c = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(2048, 10),
    )
    benches.append(Bench("cnn", "CNN+BN (64x3x32x32, SGD momentum)", c,
                         torch.optim.SGD(c.parameters(), lr=0.01, momentum=0.9),
                         torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,))))

    t = SeqClassifier()
    benches.append(Bench("transformer", "TransformerEncoderLayer 128/4 (32x16x128, Adam)", t,
                         torch.optim.Adam(t.parameters(), 1e-3),
                         torch.randn(32, 16, 128), torch.randint(0, 10, (32,))))

    s = mlp(32, 32)
    benches.append(Bench("tiny", "tiny MLP 32 (batch 8, Adam)", s, torch.optim.Adam(s.parameters(), 1e-3),
                         torch.randn(8, 32), torch.randint(0, 10, (8,))))
    if only:
        benches = [b for b in benches if b.key in only]
    return benches


# --------------------------------------------------------------------------------------
# variants
# --------------------------------------------------------------------------------------
def trace_kwargs():
    """Ask gradscope to record everything (no event cap, no step limit) if it has such knobs."""
    kw = {}
    try:
        params = inspect.signature(gradscope.trace).parameters
    except (TypeError, ValueError):
        return kw
    if "max_events" in params:
        kw["max_events"] = None
    if "steps" in params:
        kw["steps"] = None
    return kw


def run_plain(b, k):
    t0 = time.perf_counter()
    for _ in range(k):
        b.step()
    return (time.perf_counter() - t0) / k, None


def run_empty(b, k):
    t0 = time.perf_counter()
    with EmptyMode():
        for _ in range(k):
            b.step()
    return (time.perf_counter() - t0) / k, None


def run_gradscope(b, k, kw):
    t0 = time.perf_counter()
    with gradscope.trace(**kw) as tr:
        for _ in range(k):
            b.step()
    dt = (time.perf_counter() - t0) / k
    info = {"events": len(tr.events), "truncated": bool(getattr(getattr(tr, "data", None), "truncated", False))}
    del tr
    return dt, info


def bench_model(b, reps, target_s, use_gs, kw):
    # warm up every variant (allocator, lazy init, optimizer state)
    for _ in range(3):
        b.step()
    with EmptyMode():
        b.step()
    if use_gs:
        run_gradscope(b, 1, kw)
    with CountingMode() as cm:
        b.step()
    calls = cm.calls
    probe = [run_plain(b, 1)[0] for _ in range(5)]
    t_step = statistics.median(probe)
    k = max(1, min(500, round(target_s / t_step)))

    variants = {"plain": lambda: run_plain(b, k), "empty": lambda: run_empty(b, k)}
    if use_gs:
        variants["gradscope"] = lambda: run_gradscope(b, k, kw)
    samples = {v: [] for v in variants}
    ratios = {v: [] for v in variants if v != "plain"}
    events, truncated = [], False
    for _ in range(reps):
        order = list(variants)
        random.shuffle(order)
        got = {}
        for v in order:
            gc.collect()
            dt, info = variants[v]()
            got[v] = dt
            if info:
                events.append(info["events"] / k)
                truncated |= info["truncated"]
        for v, dt in got.items():
            samples[v].append(dt)
            if v != "plain":
                ratios[v].append(dt / got["plain"])
    res = {
        "model": b.title, "key": b.key, "k": k, "reps": reps,
        "plain_ms": statistics.median(samples["plain"]) * 1e3,
        "empty_ratio": statistics.median(ratios["empty"]),
        "empty_ratio_iqr": _iqr(ratios["empty"]),
        "calls_per_step": calls,
    }
    res["empty_ms"] = statistics.median(samples["empty"]) * 1e3
    # a second estimator, robust to other processes stealing the CPU: ratio of the fastest samples
    res["min_ratio"] = {v: min(samples[v]) / min(samples["plain"]) for v in ratios}
    res["empty_us_per_call"] = (res["empty_ratio"] - 1) * res["plain_ms"] * 1e3 / max(calls, 1)
    if use_gs:
        res["gradscope_ratio"] = statistics.median(ratios["gradscope"])
        res["gradscope_ratio_iqr"] = _iqr(ratios["gradscope"])
        res["gradscope_ms"] = statistics.median(samples["gradscope"]) * 1e3
        res["events_per_step"] = statistics.median(events)
        res["truncated"] = truncated
        eo, go = res["empty_ratio"] - 1, res["gradscope_ratio"] - 1
        res["overhead_vs_empty"] = go / eo if eo > 0.01 else None
        # added cost per intercepted torch call, in microseconds (from the paired ratio)
        res["gs_us_per_call"] = (res["gradscope_ratio"] - 1) * res["plain_ms"] * 1e3 / max(calls, 1)
    return res


def _iqr(xs):
    if len(xs) < 4:
        return (min(xs), max(xs))
    q = statistics.quantiles(xs, n=4)
    return (q[0], q[2])


# --------------------------------------------------------------------------------------
# memory and the big trace
# --------------------------------------------------------------------------------------
def memory_per_event(steps, kw):
    b = make_benches({"mlp"})[0]
    for _ in range(3):  # optimizer state and caches exist before measuring
        b.step()
    run_gradscope(b, 1, kw)
    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    with gradscope.trace(**kw) as tr:
        for _ in range(steps):
            b.step()
    gc.collect()
    recorded, _ = tracemalloc.get_traced_memory()  # as recorded (gradscope converts lazily)
    n = len(tr.events)  # the first query turns the records into plain data
    gc.collect()
    cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del tr
    return {
        "steps": steps, "events": n,
        "retained_bytes": cur - base, "peak_bytes": peak - base,
        "bytes_per_event": (cur - base) / max(n, 1),
        "recorded_bytes_per_event": (recorded - base) / max(n, 1),
        "peak_bytes_per_event": (peak - base) / max(n, 1),
    }


def big_trace(events_per_step, kw, target=BIG_EVENTS):
    b = make_benches({"tiny"})[0]
    steps = int(math.ceil(target * 1.05 / max(events_per_step, 1)))
    out = {"steps": steps}
    gc.collect()
    t0 = time.perf_counter()
    with gradscope.trace(**kw) as tr:
        for _ in range(steps):
            b.step()
        t_steps = time.perf_counter() - t0
    out["trace_s"] = time.perf_counter() - t0
    out["exit_s"] = out["trace_s"] - t_steps
    out["events"] = len(tr.events)
    out["truncated"] = bool(getattr(getattr(tr, "data", None), "truncated", False))
    t = time.perf_counter()
    try:
        exp = tr.why(b.model[0].weight)
        out["why"] = f"ok: cause={exp.cause}"
    except Exception as e:  # noqa: BLE001
        out["why"] = f"FAILED: {type(e).__name__}: {e}"
    out["why_s"] = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "big.json")
        t = time.perf_counter()
        try:
            tr.save(path)
            out["save"] = "ok"
            out["file_mb"] = os.path.getsize(path) / 1e6
        except Exception as e:  # noqa: BLE001
            out["save"] = f"FAILED: {type(e).__name__}: {e}"
        out["save_s"] = time.perf_counter() - t
        if out["save"] == "ok":
            t = time.perf_counter()
            try:
                tr2 = gradscope.load(path)
                out["load"] = f"ok ({len(tr2.events)} events)"
            except Exception as e:  # noqa: BLE001
                out["load"] = f"FAILED: {type(e).__name__}: {e}"
            out["load_s"] = time.perf_counter() - t
    return out


# --------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------
def fmt_x(r, iqr=None):
    s = f"{r:.2f}x"
    if iqr:
        s += f" ({iqr[0]:.2f}-{iqr[1]:.2f})"
    return s


def verdict(ok):
    return "PASS" if ok else "FAIL"


def print_report(results, mem, big, args):
    print(f"\n## gradscope overhead ({'quick' if args.quick else 'full'} run)\n")
    print(f"torch {torch.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"torch threads {torch.get_num_threads()}, {args.reps} repetitions, shuffled order, "
          "median of paired ratios (interquartile range in brackets); best-of ratio = fastest sample / fastest plain "
          f"sample; load average at start {args.load0:.1f} on {os.cpu_count()} CPUs\n")
    if _GS_ERROR:
        print(f"> gradscope variant skipped: {_GS_ERROR}\n")
    print("| model | K | plain ms/step | empty mode | gradscope | gradscope ovh / empty ovh | best-of ratio empty, gradscope | torch calls/step | events/step | µs/call empty, gradscope | target | result |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        gs = "gradscope_ratio" in r
        if r["key"] == "tiny":
            target = f"gs ovh <= {TARGET_TINY:g}x empty ovh"
            ok = gs and r["overhead_vs_empty"] is not None and r["overhead_vs_empty"] <= TARGET_TINY
        else:
            target = f"<= {TARGET_RATIO}x plain"
            ok = gs and r["gradscope_ratio"] <= TARGET_RATIO
        ovh = r.get("overhead_vs_empty")
        mr = r["min_ratio"]
        print("| {} | {} | {:.3f} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r["model"], r["k"], r["plain_ms"],
            fmt_x(r["empty_ratio"], r["empty_ratio_iqr"]),
            fmt_x(r["gradscope_ratio"], r["gradscope_ratio_iqr"]) if gs else "n/a",
            (f"{ovh:.1f}" if ovh is not None else "n/a (empty ovh < 1%)") if gs else "n/a",
            f"{mr['empty']:.2f}x, " + (f"{mr['gradscope']:.2f}x" if gs else "n/a"),
            r["calls_per_step"],
            f"{r['events_per_step']:.0f}" + (" (truncated!)" if r.get("truncated") else "") if gs else "n/a",
            f"{r['empty_us_per_call']:.1f}, " + (f"{r['gs_us_per_call']:.1f}" if gs else "n/a"),
            target, verdict(ok) if gs else "n/a",
        ))
    if mem:
        print(f"\n**Memory** (tracemalloc, {mem['steps']} MLP-512 steps, {mem['events']} events): "
              f"retained after the first query {mem['retained_bytes'] / 1e3:.0f} kB = "
              f"**{mem['bytes_per_event']:.0f} B/event** (as recorded, before it: "
              f"{mem['recorded_bytes_per_event']:.0f} B/event; peak {mem['peak_bytes_per_event']:.0f} B/event); "
              f"target <= {TARGET_BYTES_PER_EVENT} B/event: "
              f"{verdict(mem['bytes_per_event'] <= TARGET_BYTES_PER_EVENT)}")
    if big:
        ok = big["events"] >= BIG_EVENTS and big["why"].startswith("ok") and big.get("save") == "ok"
        print(f"\n**Big trace**: {big['steps']} tiny-MLP steps, {big['events']} events"
              f"{' (truncated!)' if big['truncated'] else ''} in {big['trace_s']:.1f} s "
              f"(exit {big['exit_s']:.2f} s); why() (the first query: converts the records) {big['why']} in "
              f"{big['why_s']:.2f} s; "
              f"save(): {big.get('save')} in {big.get('save_s', 0):.2f} s"
              + (f" ({big['file_mb']:.1f} MB)" if "file_mb" in big else "")
              + (f"; load(): {big['load']} in {big['load_s']:.2f} s" if "load" in big else "")
              + f" -> {verdict(ok)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=None, help="repetitions per model (default 15; 5 with --quick)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, shorter samples, smaller big trace")
    ap.add_argument("--threads", type=int, default=1, choices=(1, 2), help="torch.set_num_threads (default 1)")
    ap.add_argument("--models", default="mlp,cnn,transformer,tiny", help="comma-separated subset")
    ap.add_argument("--no-big", action="store_true", help="skip the 100k-event trace")
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc measurement")
    ap.add_argument("--no-gradscope", action="store_true", help="only plain vs empty mode")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.reps is None:
        args.reps = 5 if args.quick else 15
    args.load0 = os.getloadavg()[0]
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    use_gs = gradscope is not None and not _GS_ERROR and not args.no_gradscope
    kw = trace_kwargs() if use_gs else {}
    target_s = 0.03 if args.quick else 0.1

    results = []
    for b in make_benches(set(args.models.split(","))):
        print(f"... {b.title}", file=sys.stderr, flush=True)
        results.append(bench_model(b, args.reps, target_s, use_gs, kw))
    mem = big = None
    if use_gs and not args.no_memory:
        print("... memory per event", file=sys.stderr, flush=True)
        mem = memory_per_event(10 if args.quick else 50, kw)  # steady state: 50 steps of one trace
    if use_gs and not args.no_big:
        eps = next((r["events_per_step"] for r in results if r["key"] == "tiny"), None)
        if eps is None:
            b = make_benches({"tiny"})[0]
            eps = run_gradscope(b, 3, kw)[1]["events"] / 3
        print(f"... big trace ({eps:.0f} events/step)", file=sys.stderr, flush=True)
        big = big_trace(eps, kw, BIG_EVENTS)
    print_report(results, mem, big, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "memory": mem, "big": big, "threads": args.threads,
                       "reps": args.reps, "torch": torch.__version__, "load_average_at_start": args.load0, "trace_kwargs": repr(kw)}, f, indent=2)


if __name__ == "__main__":
    main()
