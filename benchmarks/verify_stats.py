"""Verification on a folder of scenarios (the shared format): per case, the explanation before and after
``tr.verify(run)`` and the verification's verdict, and the time verify took against one traced step.

    PYTHONPATH=. python benchmarks/verify_stats.py ../shared/scenarios [-v] [-k substring]
"""
import argparse
import collections
import glob
import importlib.util
import os
import sys
import time
import warnings

import torch

import gradscope

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "shared", "scenarios"))


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("-k")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    counts = collections.Counter()
    ratios = []
    for path in sorted(glob.glob(os.path.join(a.folder, "[0-9]*.py"))):
        if a.k and a.k not in path:
            continue
        warnings.simplefilter("ignore")
        m = load(path)
        t0 = time.perf_counter()
        try:
            with gradscope.trace() as tr:
                ns = m.run()
        except Exception:
            ns = None
        t_step = time.perf_counter() - t0
        try:
            before = tr.failure if m.EXPECT == "backward_error" else tr.why(eval(m.QUERY, {"torch": torch}, ns))
        except Exception:
            before = None
        t0 = time.perf_counter()
        try:
            v = tr.verify(m.run)
        except Exception as e:
            counts["verify-raised"] += 1
            print(f"RAISED {os.path.basename(path)}: {type(e).__name__}: {e}")
            continue
        t_v = time.perf_counter() - t0
        try:
            after = tr.failure if m.EXPECT == "backward_error" else tr.why(eval(m.QUERY, {"torch": torch}, ns))
        except Exception:
            after = None
        n = sum(1 for t in v.trials if t.tried)
        if n:
            ratios.append(t_v / max(t_step, 1e-6) / (n + 1))
        verdict = after.verified if after is not None and after.verified else ("-" if not v.targets else "?")
        counts[verdict] += 1
        changed = before is not None and after is not None and (before.cause, before.site and before.site.lineno) != (
            after.cause, after.site and after.site.lineno)
        if changed:
            counts["changed"] += 1
        if a.v or changed or verdict in ("not_repeatable",):
            print(f"{os.path.basename(path):55s} {verdict:15s} trials={n:2d} "
                  f"{'CHANGED ' if changed else ''}"
                  f"{before.cause if before else None}@{before.site.lineno if before and before.site else None} -> "
                  f"{after.cause if after else None}@{after.site.lineno if after and after.site else None}"
                  f"  {after.verification if after else ''}"[:400])
    print(dict(counts))
    if ratios:
        ratios.sort()
        print(f"verify time per re-run / one traced step: median {ratios[len(ratios) // 2]:.2f}, max {ratios[-1]:.2f}")


if __name__ == "__main__":
    main()
