"""Snapshot every explanation, report and diagram gradscope gives on the repository's cases, to compare
two versions of the code byte for byte (a behaviour-preserving refactor must change none of them).

    python benchmarks/snapshot.py OUT_DIR [--only SUBSTR] [--jobs 2]   # write one JSON per case
    python benchmarks/snapshot.py --compare OLD_DIR NEW_DIR [--noise OLD_DIR2]   # list what differs

Cases: the public scenarios (../shared/scenarios), tests/scenarios/**, the blind batches
(benchmarks/blind/batch_*) and the real programs (tests/programs, run in-process as __main__).
For each case the snapshot holds, through the public API only: ``str()`` and ``to_json()`` of
``tr.why(QUERY)`` / ``tr.failure``, the step summary (verdict, parameter rows, problems), the
cuts with their verdicts, the report at 60 and 120 columns, the diagram's DOT source and the saved
trace's JSON. Every case runs in a worker process of its own batch; the run order is fixed.
"""
from __future__ import annotations

import argparse
import contextlib
import glob
import importlib.util
import io
import json
import os
import re
import runpy
import sys
import tempfile
import warnings
from concurrent.futures import ProcessPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "scenarios")


def cases(only: str | None = None) -> list:
    out = []
    for pattern in (os.path.join(SHARED, "[0-9]*.py"), os.path.join(ROOT, "tests", "scenarios", "**", "*.py"),
                    os.path.join(ROOT, "benchmarks", "blind", "batch_*", "*.py")):
        out += sorted(p for p in glob.glob(pattern, recursive=True) if not os.path.basename(p).startswith("_"))
    out += sorted(p for p in glob.glob(os.path.join(ROOT, "tests", "programs", "*.py"))
                  if not os.path.basename(p).startswith("_"))
    return [p for p in out if only is None or only in p]


def _key(path: str) -> str:
    rel = os.path.relpath(path, os.path.dirname(ROOT))
    return re.sub(r"[^A-Za-z0-9_.-]+", "__", rel)


def _scrub(text: str) -> str:
    """Remove what differs between runs and checkouts, not between versions: the checkout's root,
    temporary paths, object addresses and timings."""
    text = text.replace(os.path.dirname(ROOT), "<ROOT>")
    text = re.sub(r"/tmp/[\w/.-]+", "<TMP>", text)
    text = re.sub(r"0x[0-9a-f]{6,}", "0x…", text)
    text = re.sub(r"\b\d+(\.\d+)? ?(ms|s)\b", "<T>", text)
    return text


def _scrubbed(value):
    """``value`` (plain JSON data) with every string scrubbed."""
    if isinstance(value, str):
        return _scrub(value)
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrubbed(v) for k, v in value.items()}
    return value


def _report(tr, width: int) -> str:
    from rich.console import Console

    con = Console(width=width, file=io.StringIO(), color_system=None, force_terminal=False,
                  force_jupyter=False, highlight=False, soft_wrap=False)
    tr.report(con)
    return con.file.getvalue()


def _exp(exp) -> dict | None:
    if exp is None:
        return None
    return {"str": str(exp), "json": exp.to_json(), "rule": getattr(exp, "rule", "")}


def _guard(fn):
    try:
        return fn()
    except Exception as e:  # a raise is part of the behaviour being compared
        return f"raised {type(e).__name__}: {e}"


def snapshot_one(path: str) -> dict:
    import torch
    import gradscope

    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    out: dict = {"case": os.path.relpath(path, os.path.dirname(ROOT))}
    is_program = os.sep + "programs" + os.sep in path
    ns, err = None, None
    stdout = io.StringIO()
    saved = sys.argv, list(sys.path), os.getcwd()
    try:
        with contextlib.redirect_stdout(stdout):
            if is_program:
                sys.argv = [path]
                sys.path.insert(0, os.path.dirname(path))
                with gradscope.trace() as tr:
                    runpy.run_path(path, run_name="__main__")
                mod = None
            else:
                name = "snap_" + _key(path)
                spec = importlib.util.spec_from_file_location(name, path)
                mod = importlib.util.module_from_spec(spec)
                sys.modules[name] = mod
                spec.loader.exec_module(mod)
                tr = gradscope.trace()
                try:
                    with tr:
                        ns = mod.run()
                except Exception as e:
                    err = e
    except Exception as e:
        return {**out, "error": f"{type(e).__name__}: {e}"}
    finally:
        sys.argv, sys.path[:] = saved[0], saved[1]
        os.chdir(saved[2])
    out["raised"] = None if err is None else f"{type(err).__name__}"
    if mod is not None:
        if getattr(mod, "EXPECT", None) == "backward_error" or err is not None:
            out["failure"] = _guard(lambda: _exp(tr.failure))
        q = getattr(mod, "QUERY", None)
        if q and ns is not None:
            out["why"] = _guard(lambda: _exp(tr.why(eval(q, {"torch": torch}, ns))))

    def summary():
        s = tr.summary()
        return {"verdict": s.verdict, "ok": s.ok, "n_events": s.n_events, "n_ops": s.n_ops,
                "roots": list(map(str, s.backward_roots)),
                "params": [[p.name, p.tid, list(p.shape), p.status, p.norm, p.trainable, p.cause,
                            p.site.short if p.site else None] for p in s.params],
                "problems": [_exp(p) for p in s.problems], "failure": _exp(s.failure),
                "harmful": [e.index for e in s.harmful_cuts], "benign": [e.index for e in s.benign_cuts],
                "unseen": list(map(str, s.unseen))}

    out["summary"] = _guard(summary)
    out["cuts"] = _guard(lambda: [[e.index, e.kind, e.op, e.cut, e.verdict] for e in tr.cuts()])
    out["report_60"] = _guard(lambda: _report(tr, 60))
    out["report_120"] = _guard(lambda: _report(tr, 120))
    out["dot"] = _guard(lambda: tr.graph().source)
    with tempfile.TemporaryDirectory() as tmp:
        def saved_json():
            p = os.path.join(tmp, "trace.json")
            tr.save(p)
            with open(p) as f:
                return json.load(f)
        out["saved"] = _guard(saved_json)
    return _scrubbed(json.loads(json.dumps(out, sort_keys=True, default=str)))


def _batch(paths: list, out_dir: str) -> list:
    done = []
    for p in paths:
        try:
            snap = snapshot_one(p)
        except BaseException as e:  # noqa: BLE001 - a case that kills the worker is recorded, not fatal
            snap = {"case": p, "error": f"{type(e).__name__}: {e}"}
        with open(os.path.join(out_dir, _key(p) + ".json"), "w") as f:
            json.dump(snap, f, indent=1, sort_keys=True)
        done.append(p)
    return done


def write(out_dir: str, only: str | None, jobs: int) -> None:
    out_dir = os.path.abspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    os.chdir(ROOT)  # (reports show paths relative to the working directory: the same one for every run)
    todo = cases(only)
    chunks = [todo[i:i + 12] for i in range(0, len(todo), 12)]
    with ProcessPoolExecutor(jobs, max_tasks_per_child=1) as pool:
        n = 0
        for done in pool.map(_batch, chunks, [out_dir] * len(chunks)):
            n += len(done)
            print(f"\r{n}/{len(todo)}", end="", file=sys.stderr, flush=True)
    print(f"\nwrote {len(todo)} snapshots to {out_dir}", file=sys.stderr)


def _flat(value, path=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _flat(v, f"{path}/{k}")
    elif isinstance(value, list):
        if not value:
            yield path, "[]"
        for i, v in enumerate(value):
            yield from _flat(v, f"{path}[{i}]")
    else:
        yield path, value


def _load(d: str, name: str) -> dict:
    with open(os.path.join(d, name)) as f:
        return dict(_flat(json.load(f)))


def compare(old: str, new: str, noise: str | None = None, show: int = 3) -> int:
    """Cases whose snapshots differ between ``old`` and ``new``. ``noise``: a second snapshot of the old code;
    values that differ between ``old`` and ``noise`` are not deterministic and are left out."""
    a = {os.path.basename(p) for p in glob.glob(os.path.join(old, "*.json"))}
    b = {os.path.basename(p) for p in glob.glob(os.path.join(new, "*.json"))}
    bad = 0
    for name in sorted(a ^ b):
        print(f"only in {'old' if name in a else 'new'}: {name}")
        bad += 1
    ignored = 0
    for name in sorted(a & b):
        x, y = _load(old, name), _load(new, name)
        skip = set()
        if noise and os.path.exists(os.path.join(noise, name)):
            z = _load(noise, name)
            skip = {k for k in set(x) | set(z) if x.get(k) != z.get(k)}
            ignored += bool(skip)
        diff = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k) and k not in skip)
        if diff:
            bad += 1
            print(f"DIFFERS {name}: {len(diff)} values, in {', '.join(sorted({k.split('/')[1].split('[')[0] for k in diff}))}")
            for k in diff[:show]:
                print(f"    {k}: {str(x.get(k))[:160]!r} -> {str(y.get(k))[:160]!r}")
    print(f"{len(a & b)} compared, {bad} differ" + (f" ({ignored} with values that are not deterministic, left out)" if noise else ""))
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?")
    ap.add_argument("--only")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    ap.add_argument("--noise", metavar="OLD2", help="with --compare: a second snapshot of the old code (what differs "
                    "between OLD and OLD2 is not deterministic and is left out)")
    a = ap.parse_args(argv)
    if a.compare:
        return compare(*a.compare, noise=a.noise)
    if not a.out:
        ap.error("OUT_DIR or --compare OLD NEW")
    write(a.out, a.only, a.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
