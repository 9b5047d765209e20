"""Check every public gradscope scenario in this directory.

For each NN_short_name.py it checks the file format (metadata, docstring,
imports, exactly one CUT-marked line) and then runs it: run() must behave as
EXPECT says, the CUT line must actually execute, a second run must give the
same result (determinism), and a run must take under 1 s.

Usage:  python verify.py [-v]      (exit status 0 only if everything passes)
"""
import ast
import importlib.util
import os
import re
import sys
import time
import traceback
import warnings

import torch

sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
FILE_RE = re.compile(r"^(\d\d)_[a-z0-9_]+\.py$")
MARK = "# <-- CUT"
MAX_SECONDS = 1.0

CAUSES = [
    "detach", "data_attr", "numpy_roundtrip", "item_roundtrip", "tolist_roundtrip",
    "tensor_rewrap", "no_grad_block", "inference_mode", "nondifferentiable_op",
    "integer_cast", "requires_grad_false", "frozen_param", "non_leaf_no_retain_grad",
    "leaf_replaced_by_to", "param_recreated", "unused_parameter",
    "autograd_grad_not_backward", "set_to_none_timing", "inplace_saved_tensor",
    "zero_gradient", "hook_modified", "custom_function", "reentrant_checkpoint", "ok",
    "backward_twice", "nonfinite_gradient",
]
# (brief, session 10) also allowed: "other:<words>" for a mechanism outside the vocabulary
# (e.g. "other:leaf_inplace"); EXPECT "grad_nonfinite" (the .grad holds inf or nan)
OPTIONAL = {"backward_twice", "nonfinite_gradient"}
COMMON = [
    "detach", "numpy_roundtrip", "item_roundtrip", "no_grad_block", "nondifferentiable_op",
    "non_leaf_no_retain_grad", "unused_parameter", "inplace_saved_tensor", "frozen_param",
]
EXPECTS = ("grad_none", "grad_zero", "grad_nonfinite", "backward_error", "grad_ok")
ALLOWED_IMPORTS = {"torch", "numpy"}


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def static_checks(path):
    """Format checks that need only the source text. Returns the CUT line number."""
    src = open(path, encoding="utf-8").read()
    lines = src.splitlines()
    tree = ast.parse(src, filename=path)

    doc = ast.get_docstring(tree)
    check(doc is not None, "missing module docstring")
    n_doc = len(doc.strip().splitlines())
    check(2 <= n_doc <= 5, f"docstring has {n_doc} lines (want 2-5)")
    check(MARK not in doc, "docstring must not contain the CUT mark")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mods = [(node.module or "").split(".")[0]]
        else:
            continue
        for m in mods:
            check(m in ALLOWED_IMPORTS, f"line {node.lineno}: imports {m!r} (only torch/numpy allowed)")

    marked = [i for i, line in enumerate(lines, 1)
              if MARK in line and not re.match(r"\s*CUT_LINE_MARK\s*=", line)]
    check(len(marked) == 1, f"expected exactly one CUT-marked line, found {len(marked)}: {marked}")
    cut = marked[0]
    code, _, comment = lines[cut - 1].partition("#")
    check(code.strip() != "", f"CUT line {cut} has no code before the mark")
    check(("#" + comment).startswith(MARK), f"CUT line {cut}: the mark must start the trailing comment")
    return cut, lines[cut - 1].strip()


def load(path, tag):
    spec = importlib.util.spec_from_file_location(f"gradscope_public_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def metadata_checks(mod):
    check(getattr(mod, "CUT_LINE_MARK", None) == MARK, f"CUT_LINE_MARK must be {MARK!r}")
    c = getattr(mod, "CAUSE", None)
    check(c in CAUSES or (isinstance(c, str) and c.startswith("other:") and len(c) > 7), f"unknown CAUSE {getattr(mod, 'CAUSE', None)!r}")
    check(getattr(mod, "EXPECT", None) in EXPECTS, f"unknown EXPECT {getattr(mod, 'EXPECT', None)!r}")
    check(callable(getattr(mod, "run", None)), "missing run()")
    check(hasattr(mod, "QUERY"), "missing QUERY")
    q = mod.QUERY
    if mod.EXPECT == "backward_error":
        check(q is None or isinstance(q, str), "QUERY must be a string or None")
    else:
        check(isinstance(q, str) and q.strip(), "QUERY must be a non-empty string")
    check((mod.CAUSE == "ok") == (mod.EXPECT == "grad_ok"),
          "CAUSE 'ok' goes with EXPECT 'grad_ok' and only with it")


def execute(mod, path, trace_lines=None):
    """Run run() once. Returns ('ok', result_dict) or ('error', exception)."""
    target = os.path.abspath(path)

    def local_tracer(frame, event, arg):
        if event == "line":
            trace_lines.add(frame.f_lineno)
        return local_tracer

    def global_tracer(frame, event, arg):
        if frame.f_code.co_filename == target:
            if event == "call":
                trace_lines.add(frame.f_lineno)
            return local_tracer
        return None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = sys.gettrace()
        if trace_lines is not None:
            sys.settrace(global_tracer)
        try:
            out = mod.run()
            return "ok", out
        except Exception as exc:  # analysed by the caller
            return "error", exc
        finally:
            if trace_lines is not None:
                sys.settrace(old)


def query_grad(mod, result):
    check(isinstance(result, dict), f"run() returned {type(result).__name__}, want dict")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .grad of a non-leaf warns
        t = eval(mod.QUERY, dict(result))
        check(isinstance(t, torch.Tensor), f"QUERY {mod.QUERY!r} is a {type(t).__name__}, not a tensor")
        return t.grad


def raised_in_backward(exc):
    sep = os.sep
    for fr in traceback.extract_tb(exc.__traceback__):
        in_torch = f"{sep}torch{sep}" in fr.filename
        if in_torch and fr.name in ("backward", "_engine_run_backward", "run_backward"):
            return True
    return False


def outcome(mod, status, payload):
    """Compare one run's outcome to EXPECT; returns a comparable fingerprint."""
    exp = mod.EXPECT
    if exp == "backward_error":
        if status == "ok":
            raise Failure("expected a RuntimeError from backward, run() returned normally")
        check(isinstance(payload, RuntimeError),
              f"expected RuntimeError, got {type(payload).__name__}: {payload}")
        check(raised_in_backward(payload), f"RuntimeError was not raised inside backward(): {payload}")
        return ("error", str(payload).splitlines()[0])
    if status == "error":
        tb = "".join(traceback.format_exception(type(payload), payload, payload.__traceback__))
        raise Failure(f"run() raised unexpectedly:\n{tb}")
    g = query_grad(mod, payload)
    if exp == "grad_none":
        if g is not None:
            raise Failure(f"{mod.QUERY}.grad should be None, got a tensor "
                          f"(nonzeros={int(torch.count_nonzero(g))})")
        return ("none",)
    check(g is not None, f"{mod.QUERY}.grad is None, want a tensor")
    nnz = int(torch.count_nonzero(g))
    if exp == "grad_nonfinite":
        check(not bool(torch.isfinite(g).all()), f"{mod.QUERY}.grad should hold inf or nan, it is all finite")
        return ("grad", torch.nan_to_num(g.detach().clone(), nan=12345.0))
    if exp == "grad_zero":
        check(nnz == 0, f"{mod.QUERY}.grad should be all zeros, has {nnz} nonzeros")
    else:
        check(nnz > 0, f"{mod.QUERY}.grad should be nonzero, it is all zeros")
    return ("grad", g.detach().clone())


def same(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "grad":
        return a[1].shape == b[1].shape and torch.equal(a[1], b[1])
    return a == b


def verify_one(path, tag):
    cut, cut_src = static_checks(path)
    mod = load(path, tag)
    metadata_checks(mod)

    executed = set()
    status, payload = execute(mod, path, trace_lines=executed)
    first = outcome(mod, status, payload)
    check(cut in executed, f"CUT line {cut} was never executed by run()")

    t0 = time.perf_counter()
    status2, payload2 = execute(mod, path)
    elapsed = time.perf_counter() - t0
    second = outcome(mod, status2, payload2)
    check(same(first, second), "two runs disagree (not deterministic)")
    check(elapsed < MAX_SECONDS, f"run() took {elapsed:.2f}s (limit {MAX_SECONDS}s)")
    return mod, cut, cut_src, elapsed


def main():
    verbose = "-v" in sys.argv[1:]
    torch.set_num_threads(1)
    files = sorted(f for f in os.listdir(HERE) if FILE_RE.match(f))
    problems = []
    nums = [int(FILE_RE.match(f).group(1)) for f in files]
    if nums != list(range(1, len(files) + 1)):
        problems.append(f"scenario numbers are not 01..{len(files):02d} without gaps/duplicates: {nums}")

    causes, expects = {}, {}
    w = max(len(f) for f in files)
    print(f"{'file':<{w}}  {'cause':<27} {'expect':<15} {'cut':>4} {'time':>7}  result")
    n_pass = 0
    for i, f in enumerate(files):
        path = os.path.join(HERE, f)
        try:
            mod, cut, cut_src, elapsed = verify_one(path, i)
        except Failure as exc:
            problems.append(f"{f}: {exc}")
            print(f"{f:<{w}}  {'?':<27} {'?':<15} {'?':>4} {'':>7}  FAIL: {exc}")
            continue
        except Exception:
            problems.append(f"{f}: verifier crashed:\n{traceback.format_exc()}")
            print(f"{f:<{w}}  FAIL (verifier crashed)")
            continue
        n_pass += 1
        causes[mod.CAUSE] = causes.get(mod.CAUSE, 0) + 1
        expects[mod.EXPECT] = expects.get(mod.EXPECT, 0) + 1
        print(f"{f:<{w}}  {mod.CAUSE:<27} {mod.EXPECT:<15} {cut:>4} {elapsed * 1000:6.0f}ms  PASS")
        if verbose:
            print(f"{'':<{w}}    CUT: {cut_src}")

    for c in CAUSES:
        if c in OPTIONAL:
            continue
        need = 3 if c == "ok" else (2 if c in COMMON else 1)
        if causes.get(c, 0) < need:
            problems.append(f"coverage: cause {c!r} has {causes.get(c, 0)} passing scenario(s), need >= {need}")

    print()
    print(f"scenarios: {len(files)}, passed: {n_pass}, failed: {len(files) - n_pass}")
    print("by expect: " + ", ".join(f"{k}={expects.get(k, 0)}" for k in EXPECTS))
    print("by cause:  " + ", ".join(f"{c}={causes.get(c, 0)}" for c in CAUSES))
    if problems:
        print("\nPROBLEMS:")
        for p in problems:
            print(" - " + p)
        return 1
    print("ALL CHECKS PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
