"""Local copy of the scoring logic of ``shared/scenarios/check.py``.

``tests/test_scenarios.py`` imports the shared ``check.py`` when the shared scenario folder
is present (so the suite scores exactly as the public checker does) and falls back to this
module otherwise. It implements the same contract: run a scenario plain, run it again under
``gradscope.trace()``, ask ``tr.why(<QUERY>)`` (or ``tr.failure``), and compare cause, site
and transparency. Keep it in sync with check.py's ``check_one``.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import traceback


def load(path):
    name = "scenario_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def cut_line(path, mark):
    hits = []
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            if line.rstrip().endswith(mark) and "CUT_LINE_MARK" not in line:
                hits.append(no)
    if len(hits) != 1:
        raise ValueError(f"{path}: expected exactly one line marked {mark!r}, found {hits}")
    return hits[0]


def symptom(mod, ns, err):
    import torch

    if err is not None:
        return "backward_error" if isinstance(err, RuntimeError) else f"error:{type(err).__name__}"
    g = eval(mod.QUERY, {"torch": torch}, ns).grad
    if g is None:
        return "grad_none"
    return "grad_zero" if not bool(torch.count_nonzero(g)) else "grad_ok"


def run_plain(mod):
    ns, err = None, None
    try:
        ns = mod.run()
    except Exception as e:  # the scenario's own bug
        err = e
    return ns, err


def same_file(a, b):
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (TypeError, ValueError):
        return False


def site_match(site, path, line):
    if site is None:
        return "none"
    if same_file(getattr(site, "filename", None), path) and getattr(site, "lineno", None) == line:
        return "exact"
    for frame in getattr(site, "stack", None) or ():
        if same_file(getattr(frame, "filename", None), path) and getattr(frame, "lineno", None) == line:
            return "in-stack"
    return "miss"


def describe_site(site):
    if site is None:
        return "-"
    return f"{os.path.basename(str(getattr(site, 'filename', '?')))}:{getattr(site, 'lineno', '?')}"


def check_one(path, gradscope, verbose=False):
    import torch

    mod = load(path)
    line = cut_line(path, mod.CUT_LINE_MARK)
    expected_cause = "ok" if mod.EXPECT == "grad_ok" else mod.CAUSE
    row = {"case": os.path.basename(path), "cause": expected_cause, "line": line, "expect": mod.EXPECT}

    ns, err = run_plain(mod)
    plain = symptom(mod, ns, err)
    row["plain"] = plain
    if plain != mod.EXPECT:
        row["status"] = "invalid-scenario"
        return row

    ns, err, tr = None, None, None
    try:
        with gradscope.trace() as tr:
            ns = mod.run()
    except Exception as e:
        err = e
    if tr is None:
        row.update(status="trace-failed", detail=repr(err))
        return row
    traced = symptom(mod, ns, err) if (err is None or isinstance(err, RuntimeError)) else f"error:{type(err).__name__}"
    row["traced"] = traced
    row["transparent"] = traced == plain
    if traced != plain and err is not None:
        row["detail"] = "".join(traceback.format_exception(err))[-2000:]

    try:
        if mod.EXPECT == "backward_error":
            exp = tr.failure
        else:
            exp = tr.why(eval(mod.QUERY, {"torch": torch}, ns))
    except Exception as e:
        row.update(status="why-raised", detail="".join(traceback.format_exception(e))[-2000:])
        return row
    if exp is None:
        row.update(status="no-explanation", got_cause=None, site="none")
        return row
    row["got_cause"] = getattr(exp, "cause", None)
    row["got_site"] = describe_site(getattr(exp, "site", None))
    row["site"] = site_match(getattr(exp, "site", None), path, line)
    row["cause_ok"] = row["got_cause"] == expected_cause
    row["site_ok"] = row["site"] in ("exact", "in-stack") or expected_cause == "ok"
    row["status"] = "pass" if (row["cause_ok"] and row["site_ok"] and row["transparent"]) else "fail"
    if verbose:
        try:
            row["text"] = str(exp)[:1500]
        except Exception:
            pass
    return row
