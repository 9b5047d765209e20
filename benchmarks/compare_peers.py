#!/usr/bin/env python3
"""gradscope vs. its peers on five gradient-flow bugs, plus per-step overhead.

Needs a venv with torch, gradscope, torchviz, torchview, torchlens and the graphviz Python
package (the `dot` binary is not used). From the repository root:

    python benchmarks/compare_peers.py            # ~3 min on 2 cores; writes docs/comparison.md
    python benchmarks/compare_peers.py --quick    # 7 repetitions, prints only

Part 1 runs every tool on every bug below, one fresh process per tool (torchlens patches torch
and stays patched); part 2 times a 3-layer MLP step under each tool, paired with plain steps.
The method and its limits are spelled out in the generated docs/comparison.md (see CAVEATS).
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import importlib
import io
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
import traceback
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

# ---- BUGS BEGIN


class BugA(nn.Module):  # (a') detach: x.grad stays None, backward succeeds through w
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))

    def forward(self, x):
        y = x * 2
        z = y.detach() * self.w  # CUT
        return z


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 2)


class BugB(TwoLayer):  # (b) NumPy round trip: fc1 grads None
    def forward(self, x):
        h = self.fc1(x)
        h = torch.from_numpy(h.detach().numpy())  # CUT
        return self.fc2(h)


class BugC(TwoLayer):  # (c) in-place write to a tensor saved for backward: backward raises
    def forward(self, x):
        h = torch.sigmoid(self.fc1(x))  # SAVES
        h.mul_(2)  # CUT
        return self.fc2(h)


class BugD(nn.Module):  # (d) .item() of an auxiliary loss used as a scale: aux grads None
    def __init__(self):
        super().__init__()
        self.fc, self.aux = nn.Linear(4, 2), nn.Linear(4, 1)

    def forward(self, x):
        aux_loss = self.aux(x).pow(2).mean()
        return self.fc(x) * aux_loss.item()  # CUT


class BugE(TwoLayer):  # (e) torch.no_grad() inside forward: fc1 grads None
    def forward(self, x):
        with torch.no_grad():  # CUT
            h = self.fc1(x)  # CUT
        return self.fc2(h)


# ---- BUGS END

# key: (class, title, target whose grad is None, expected gradscope cause, diagnostic regex)
BUGS = {
    "a": (BugA, "(a') `y.detach() * w`", "x", "detach", r"detach"),
    "b": (BugB, "(b) `.numpy()` round trip", "fc1.weight", "numpy_roundtrip", r"numpy"),
    "c": (BugC, "(c) `sigmoid`, then `h.mul_(2)`", None, "inplace_saved_tensor", r"in-?place"),
    "d": (BugD, "(d) `.item()` as a scale", "aux.weight", "item_roundtrip", r"\.item|scalar"),
    "e": (BugE, "(e) `no_grad()` in forward", "fc1.weight", "no_grad_block",
          r"no_grad|grad mode|grad.{0,20}disabled"),
}
TOOLS = ["plain", "detect_anomaly", "torchviz", "torchview", "torchlens", "gradscope"]
SRC = open(os.path.abspath(__file__)).read().splitlines()
REGION = range(SRC.index("# ---- BUGS BEGIN") + 1, SRC.index("# ---- BUGS END") + 1)


def marked(bug, mark):
    """Line numbers in the bug's class that end with `# MARK`."""
    name, lines, inside = f"class {BUGS[bug][0].__name__}(", [], False
    for i in REGION:
        if SRC[i - 1].startswith("class "):
            inside = SRC[i - 1].startswith(name)
        if inside and SRC[i - 1].rstrip().endswith(f"# {mark}"):
            lines.append(i)
    return lines


def make(bug):
    torch.manual_seed(0)
    m, tgt = BUGS[bug][0](), BUGS[bug][2]
    x = torch.randn(3, requires_grad=True) if bug == "a" else torch.randn(5, 4)
    target = x if tgt == "x" else (m.get_parameter(tgt) if tgt else None)
    return m, x, target, dict(m.named_parameters(), **({"x": x} if bug == "a" else {}))


def step(m, x):
    m(x).sum().backward()


def observe(fn):
    """Run fn; return (result, printed text, warnings text, formatted exception or '')."""
    buf, res, exc = io.StringIO(), None, ""
    with warnings.catch_warnings(record=True) as wl, contextlib.redirect_stdout(buf), \
            contextlib.redirect_stderr(buf):
        warnings.simplefilter("always")
        try:
            res = fn()
        except Exception as e:  # noqa: BLE001 - we record whatever the tool does
            exc = "".join(traceback.format_exception(e))
    return res, buf.getvalue(), "\n".join(f"{w.category.__name__}: {w.message}" for w in wl), exc


def lines_in(text):
    found = re.findall(r'compare_peers\.py(?::|", line )(\d+)', text)
    return sorted({int(n) for n in found if int(n) in REGION})


def last_error(text):
    return next((s for s in text.strip().splitlines()[::-1] if "Error" in s), text.strip()[:80])


def cell(bug, text, diag, shows, cause=None, crash=None):
    lines = lines_in(text)
    cause = bool(re.search(BUGS[bug][4], diag, re.I)) if cause is None else cause
    excerpt = " ".join(diag.split())[:320]
    return {"line": any(n in marked(bug, "CUT") for n in lines), "lines": lines, "cause": cause,
            "shows": shows, "crash": crash, "excerpt": excerpt}


def crashed(bug, exc):
    return cell(bug, exc, "", "crash: " + last_error(exc), cause=False, crash=last_error(exc))


# ---------------------------------------------------------------- tools on the bugs
def t_plain(bug):
    m, x, target, _ = make(bug)
    _, out, w, exc = observe(lambda: step(m, x))
    if exc:
        hit = re.search(BUGS[bug][4], exc)
        shows = f"raises `{last_error(exc)[:24]}… {hit.group(0) if hit else ''} …`; no model line"
    else:
        shows = f"silent; `{BUGS[bug][2]}.grad is None`: {target.grad is None}"
    return cell(bug, out + w + exc, w + (last_error(exc) if exc else ""), shows)


def t_detect_anomaly(bug):
    m, x, _, _ = make(bug)

    def run():
        with torch.autograd.detect_anomaly(check_nan=True):
            step(m, x)
    _, out, w, exc = observe(run)
    w = "\n".join(s for s in w.split("\n") if "Anomaly Detection has been enabled" not in s)
    shows, diag = "silent (only the 'anomaly detection enabled' warning)", w + out
    if exc:
        node, pts = re.search(r"Error detected in (\w+)", w + out), lines_in(w + out)
        shows = (f"'Error detected in {node.group(1) if node else '?'}' + forward traceback "
                 f"ending at L{pts[-1] if pts else '?'}; error ends 'Good luck!'")
        tb = [s.strip() for s in diag.splitlines() if s.strip() and "(Triggered" not in s]
        diag = " ".join(tb[:1] + ["…"] + tb[-2:]) + " " + last_error(exc)
    return cell(bug, out + w + exc, diag, shows)


def t_torchviz(bug):
    from torchviz import make_dot
    m, x, _, params = make(bug)
    dot, _, w, exc = observe(lambda: make_dot(m(x).sum(), params=params))
    if exc:
        return crashed(bug, exc)
    src, tgt = dot.source, BUGS[bug][2]
    if tgt:
        marks = [k for k in ("detach", "numpy", "item", "no_grad", "cut") if k in src.lower()]
        drawn = f'"{tgt}\n' in src  # torchviz labels a leaf "name\n (shape)"
        shows = (f"`{tgt}` {'drawn' if drawn else 'absent'}; "
                 f"cut {'marked: ' + ','.join(marks) if marks else 'not marked'}")
    else:
        shows = f"{src.count('->')} edges, healthy-looking graph, nothing flagged"
        m2, x2, _, p2 = make(bug)
        if observe(lambda: make_dot(m2(x2).sum(), params=p2, show_saved=True))[3]:
            shows += "; with `show_saved=True` make_dot itself raises the in-place error"
    return cell(bug, src + w, "", shows, cause=False)


def t_torchview(bug):
    from torchview import draw_graph
    m, x, _, _ = make(bug)
    g, out, w, exc = observe(lambda: draw_graph(  # its most detailed view
        m, input_data=x, expand_nested=True, depth=3, hide_inner_tensors=False,
        hide_module_functions=False, save_graph=False))
    if exc:
        return crashed(bug, exc)
    src = g.visual_graph.source
    nodes = set(re.findall(r"^\s*(\d+) \[", src, re.M))
    edges = re.findall(r"^\s*(\d+) -> (\d+)", src, re.M)
    label = dict(re.findall(r"^\s*(\d+) \[label=<.*?<TD[^>]*>([\w-]+)<BR/>", src, re.M | re.S))
    parent = {n: n for n in nodes}

    def root(n):
        while parent[n] != n:
            n = parent[n]
        return n
    for a, b in edges:
        parent[root(a)] = root(b)
    pieces, pred = len({root(n) for n in nodes}), {b: a for a, b in edges}
    dead = sorted({label.get(pred.get(n, n), "?") if label.get(n, "").endswith("-tensor")
                   else label.get(n, "?") for n in nodes - {a for a, _ in edges}
                   if label.get(n) != "output-tensor"})
    ops = [k for k in ("detach", "numpy", "item", "mul_", "no_grad") if k in src]
    shows = ("graph in 1 piece" if pieces == 1 else f"{pieces} unconnected pieces") \
        + (f", dead end at {', '.join(dead)}" if dead else "") + "; " \
        + (f"`{'`, `'.join(ops)}` node drawn like any op" if ops else "no node for the cut")
    return cell(bug, src + out + w, "", shows, cause=False)


def t_torchlens(bug):
    import torchlens as tl
    m, x, _, _ = make(bug)
    tr, out, w, exc = observe(lambda: tl.trace(m, x))
    if exc:
        return crashed(bug, exc)
    _, out2, w2, exc2 = observe(lambda: print(tr.summary(), tr.audit(), tl.report.explain(tr),
                                              sep="\n"))
    audit = re.search(r"TraceAudit: ([^;\n]*)", out2)
    parts, recorded, inplace = [], [], []
    for s in w.splitlines():
        cat, ls = re.match(r"(\w+Warning): ", s), lines_in(s)
        if cat:
            parts.append(cat.group(1) + (" at L" + ",".join(map(str, ls)) if ls else ""))
    for lab in tr.layer_labels:
        lay = tr[lab]
        locs = getattr(lay, "code_context", None) or []
        ln = getattr(locs[0], "line_number", None) if locs else None
        if ln in marked(bug, "CUT") and lay.func_name != "none":
            recorded.append(f"{lay.func_name}@L{ln}")
        if getattr(lay, "is_inplace", False):
            inplace.append(f"{lab}: is_inplace=True, not flagged")
    parts.append(f"per-op lines stored ({', '.join(recorded)})" if recorded
                 else "no op logged on the cut line")
    parts += inplace + [f"audit: \"{audit.group(1) if audit else last_error(exc2)}\""]
    return cell(bug, out + w + out2 + w2 + exc2, "\n".join([w, w2, audit.group(0) if audit else ""]),
                "; ".join(parts))


def t_gradscope(bug):
    import gradscope
    m, x, target, _ = make(bug)
    holder = {}

    def run():
        with gradscope.trace() as tr:
            holder["tr"] = tr
            step(m, x)
    _, out, w, exc = observe(run)
    if "tr" not in holder:
        return crashed(bug, exc)
    e, _, _, exc2 = observe(lambda: holder["tr"].failure if target is None
                            else holder["tr"].why(target))
    if exc2:
        return crashed(bug, exc2)
    text = str(e)
    saver = [n for n in lines_in(text) if n in marked(bug, "SAVES")]
    shows = f"`{e.cause}`" + (f" at L{e.site.lineno}" if e.site else "") \
        + (f"; also names the saving op (L{saver[0]})" if saver else "")
    return cell(bug, text, text.splitlines()[0], shows, cause=e.cause == BUGS[bug][3])


# ---------------------------------------------------------------- overhead
BENCH_TOOLS = ["plain (control)", "gradscope.trace", "gradscope.trace, one per K steps",
               "detect_anomaly", "torchviz make_dot", "torchview draw_graph", "torchlens trace"]


def bench_steps(tool, width, batch):
    """(plain step, tool step, context around a whole sample or None)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                          nn.Linear(width, 10))  # the 3-layer MLP
    x, y = torch.randn(batch, width), torch.randint(0, 10, (batch,))

    def plain():
        model.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()

    name = tool.split(".")[0].split()[0]
    lib = importlib.import_module(name) if name.startswith(("gradscope", "torch")) else None

    def run():
        if tool == "gradscope.trace":
            with lib.trace():
                plain()
        elif tool == "detect_anomaly":
            with torch.autograd.detect_anomaly(check_nan=True):
                plain()
        elif tool == "torchviz make_dot":
            model.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            lib.make_dot(loss, params=dict(model.named_parameters()))  # Digraph only, no `dot`
            loss.backward()
        else:  # torchview and torchlens run their own forward pass, then the plain step
            if tool == "torchview draw_graph":
                lib.draw_graph(model, input_data=x, save_graph=False)
            elif tool == "torchlens trace":
                lib.trace(model, x)
            plain()
    return plain, run, (lib.trace if tool.endswith("K steps") else None)


def bench_worker(tool, width, batch, reps):
    torch.set_num_threads(1)
    plain, run, outer = bench_steps(tool, width, batch)

    def sample(fn, k, ctx=None):
        gc.collect()
        t0 = time.perf_counter()
        with ctx() if ctx else contextlib.nullcontext():
            for _ in range(k):
                fn()
        return (time.perf_counter() - t0) / k

    def calibrate(fn):
        for _ in range(5):
            fn()
        return max(1, round(0.025 / max(sample(fn, 2), 1e-6)))

    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        kp = calibrate(plain)
        pre = [sample(plain, kp) for _ in range(max(5, reps // 4))]
        kt = kp if outer else calibrate(run)  # also absorbs one-time costs (torchlens wrapping)
        rng, ps, ts = random.Random(width), [], []
        for _ in range(reps):
            for o in rng.sample([0, 1], 2):
                (ps, ts)[o].append(sample((plain, run)[o], (kp, kt)[o], (None, outer)[o]))
    ratios = [t / p for p, t in zip(ps, ts)]
    q = statistics.quantiles(ratios, n=4)
    return {"tool": tool, "plain_ms": statistics.median(ps) * 1e3,
            "tool_ms": statistics.median(ts) * 1e3, "ratio": statistics.median(ratios),
            "q1": q[0], "q3": q[2], "residue": statistics.median(ps) / statistics.median(pre)}


# ---------------------------------------------------------------- driver
def worker(args):
    """Runs in a child process; prints one JSON line."""
    if args[0] == "bugs":
        res = {}
        for bug in BUGS:
            try:
                res[bug] = globals()["t_" + args[1]](bug)
            except Exception as e:  # noqa: BLE001 - a harness failure is shown, not hidden
                res[bug] = crashed(bug, f"{type(e).__name__}: {e}")
        print(json.dumps(res))
    else:
        print(json.dumps(bench_worker(args[1], int(args[2]), int(args[3]), int(args[4]))))


def child(*args):
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", *map(str, args)],
                       capture_output=True, text=True, timeout=600)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except Exception:  # noqa: BLE001
        return {"error": ((r.stderr or r.stdout).strip().splitlines() or ["no output"])[-1]}


def versions():
    from importlib.metadata import version  # every package here is required anyway
    v = {"python": sys.version.split()[0], "torch": torch.__version__}
    v.update((p, version(p)) for p in ("torchviz", "torchview", "torchlens", "graphviz", "numpy",
                                       "gradscope"))
    git = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse",
                          "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    v["gradscope"] += f" (commit {git or '?'} + working tree)"
    return v


CAVEATS = """\
- *line*: a regex over each tool's user-facing text, restricted to the bug classes. torchviz and
  torchview output DOT graphs, which hold no source lines, so they cannot score it. torchlens
  stores a `file:line` for every op in its data ('per-op lines stored'), but puts a line in its
  text only in the `.item()` warning.
- *cause*: only diagnostics count, not node labels or op listings (a `detach` node is shown, not
  called a cause). (c)'s ✔ for `plain` and `detect_anomaly` is PyTorch's own error message.
- (e): either line of the `no_grad` block counts as the cut.
- torchlens runs its default `tl.trace(model, x)` (forward only) plus `summary()`, `audit()` and
  `tl.report.explain()`; its backward capture (`log_backward`) is not used. torchview runs with
  `hide_module_functions=False` (otherwise a model without submodules is drawn as one box).
- These five bugs are the cases gradscope was built for. The table measures coverage of them,
  not general usefulness: torchview/torchlens/torchviz do things gradscope does not (shapes,
  activations, FLOPs, module graphs).
- Overhead: the machine is shared with other jobs; read the paired median and its IQR. `plain
  (control)` is the noise floor (ideal 1.00x). torchview and torchlens run their own forward pass,
  so their step is the tool call plus a plain step; torchviz builds the `Digraph` without `dot`.
  'plain after/before' compares plain steps after the tool was first used with those before
  (torchlens keeps its torch wrappers after the first trace); it is not paired, so it carries
  about ±20 % of drift. The first torchlens trace in a process (~0.5 s of wrapping) is excluded
  as warm-up. Run-to-run, the medians moved by up to ~0.3x at width 512 (e.g. gradscope.trace
  1.5x-1.9x over four runs) and by ~10 % at width 32.
- (a) exactly as in the seed doc (`y.detach() * 3`) raises instead of leaving `x.grad` None, so
  (a') multiplies by a parameter `w`."""


def render(bugs, bench, vers, reps, elapsed):
    yn = {True: "✔", False: "✘"}
    out = ["# gradscope and its peers on five gradient-flow bugs", "",
           f"Generated {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC} by "
           f"`benchmarks/compare_peers.py` in {elapsed:.0f} s. Reproduce from the repository root:",
           "", "```bash", "python3 -m venv /tmp/peers-venv && . /tmp/peers-venv/bin/activate",
           "pip install torch==2.13.0 && pip install torchviz torchview torchlens graphviz numpy "
           "rich && pip install -e . --no-deps", "python benchmarks/compare_peers.py", "```", "",
           "Versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()) + ". Machine: "
           f"{platform.machine()}, {os.cpu_count()} CPUs, shared with other jobs; no GPU.", "",
           "## The bugs", "", "Line numbers are those of `benchmarks/compare_peers.py`. Each bug "
           "runs `model(x).sum().backward()` once; (c) raises in backward, the others succeed and "
           "leave the target's `.grad` None.", "", "```python"]
    out += [f"{i:3d}  {SRC[i - 1]}" for i in REGION if SRC[i - 1].strip() and "----" not in
            SRC[i - 1]] + ["```", "", "## What each tool says", "",
                           "Each cell: **line** ✔ if the tool's text names a cut line (lines it "
                           "names in brackets) · **cause** ✔ if a diagnostic names the kind of "
                           "cut · what it shows.", "",
                           "| tool | " + " | ".join(f"{t[1]}, cut L{'/'.join(map(str, marked(b, 'CUT')))}"
                                                   for b, t in BUGS.items()) + " |",
                           "|---|" + "---|" * len(BUGS)]
    for tool in TOOLS:
        cells = []
        for b in BUGS:
            r = bugs[tool].get(b) or {"line": False, "lines": [], "cause": False,
                                      "shows": f"harness error: {bugs[tool].get('error')}"}
            ls = f" [L{','.join(map(str, r['lines']))}]" if r["lines"] else ""
            cells.append(f"line {yn[r['line']]}{ls} · cause {yn[r['cause']]} · {r['shows']}")
        out.append(f"| {tool} | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    count = {t: sum(r["line"] + r["cause"] for r in bugs[t].values() if isinstance(r, dict))
             for t in TOOLS}
    out += ["", "✔ count (line + cause, of 10): " + ", ".join(f"{t} {n}" for t, n in count.items())
            + ".", "", "Diagnostic text behind the *cause* column (first 320 characters):", ""]
    out += [f"- {t} {BUGS[b][1]}: `` {r['excerpt']} ``" for t in TOOLS
            for b, r in bugs[t].items() if isinstance(r, dict) and r.get("excerpt")]
    out += ["", "## Per-step overhead", "",
            f"3-layer MLP, fwd + cross_entropy + bwd, `torch.set_num_threads(1)`, {reps} paired "
            "repetitions in shuffled order, one process per tool and size; ratio = median of "
            "tool/plain over the repetitions. `gradscope.trace` opens a fresh trace per step; "
            "'one per K steps' wraps each K-step sample in one trace.", ""]
    for (w, b), rows in bench.items():
        out += [f"### width {w}, batch {b}", "",
                "| tool | step ms | plain ms | × plain (median) | IQR | plain after/before |",
                "|---|---|---|---|---|---|"]
        for r in rows:
            out.append(f"| {r['tool']} | crash: {r['error']} | | | | |" if "error" in r else
                       f"| {r['tool']} | {r['tool_ms']:.2f} | {r['plain_ms']:.2f} | "
                       f"**{r['ratio']:.2f}x** | {r['q1']:.2f}–{r['q3']:.2f} | {r['residue']:.2f} |")
        out.append("")
    return "\n".join(out + ["## Caveats", "", CAVEATS, ""])


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=41, help="paired repetitions per overhead cell")
    ap.add_argument("--quick", action="store_true", help="7 repetitions; print, do not write")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "docs", "comparison.md"))
    a = ap.parse_args()
    reps, t0 = (7 if a.quick else a.reps), time.time()
    bugs = {tool: child("bugs", tool) for tool in TOOLS}
    print(f"bugs done ({time.time() - t0:.0f} s)", file=sys.stderr)
    bench = {(w, b): [{"tool": tool, **child("bench", tool, w, b, reps)} for tool in BENCH_TOOLS]
             for w, b in ((512, 64), (32, 8))}
    md = render(bugs, bench, versions(), reps, time.time() - t0)
    print(md)
    if not a.quick:
        with open(a.out, "w") as f:
            f.write(md + "\n")
        print(f"wrote {os.path.normpath(a.out)}", file=sys.stderr)


if __name__ == "__main__":
    main()
