"""Harvest the autograd error and warning messages the installed torch can raise (issue 20, "The catalogue").

Prints candidate messages, one per line, grouped by where they were found; the curated table
(docs/errors.md, with a trigger per row in tests/error_triggers.py) is made by hand from this list.
Re-run it against a new torch version and diff the output against the previous run to see which
messages appeared or went away:

    python benchmarks/harvest_errors.py                 # the candidates, grouped by source
    python benchmarks/harvest_errors.py --counts        # only the counts per source
    python benchmarks/harvest_errors.py --json out.json # everything as JSON (source, file:line, kind, text)
    python benchmarks/harvest_errors.py --counts --coverage  # which curated rows the harvest finds
    python benchmarks/harvest_errors.py --table         # the curated rows (tests/test_error_catalogue.py ROWS)
                                                        # run under gradscope: docs/errors.md's table

Two sources:

1. Python: every ``raise X("...")`` and ``warnings.warn("...")`` / ``torch._check*(..., lambda: "...")`` in the
   autograd-related modules of the installed torch (torch/autograd, torch/utils/checkpoint.py,
   torch/func + torch/_functorch, torch/nn/parallel/distributed.py, torch/nn/utils/*.py, torch/optim,
   torch/nn/modules/module.py); f-strings and ``"..." % x`` / ``.format`` keep their literal parts with
   ``{}`` where a value goes.  Kept when the text names autograd (the KEYWORDS regex below).
2. C++: the printable strings (``strings -n 12``, in Python: runs of >= 12 printable bytes) of
   libtorch_cpu.so and libtorch_python.so that name autograd and look like a sentence (a space,
   a letter, not a mangled symbol, a path or a format spec table).  A C++ message split by format
   arguments (TORCH_CHECK(cond, "a ", x, " b")) appears as its pieces; read the whole pattern in
   pytorch's source (torch/csrc/autograd/*.cpp, aten/src/ATen/native/*, torch/csrc/distributed/c10d/reducer.cpp).

Internal asserts ("INTERNAL ASSERT FAILED", "please report a bug") are left out: a user's code
cannot trigger them on purpose.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

KEYWORDS = re.compile(
    r"grad|leaf|in-?place|version|backward|requires_grad|\bview|autograd|differentia|derivative|checkpoint|"
    r"allow_unused|nan values|"
    r"retain_graph|saved tensor|hook|anomaly|vmap|jvp|vjp|functorch|reentrant|recompute|out=|leaves|written-to|"
    r"changed the (size|type)|inference tensor|InferenceMode|no_grad mode",
    re.I)
#: in the Python sources, also these (module attribute and optimizer messages; device/dtype mismatches)
PY_KEYWORDS = re.compile(r"Parameter|same device|same dtype|no_grad", re.I)
#: sources about autograd as a whole: every message they raise is kept, keyword or not
ALL_MESSAGES = ("autograd/", "utils/checkpoint.py", "optim/optimizer.py", "nn/utils/clip_grad.py",
                "nn/parallel/distributed.py")
INTERNAL = re.compile(r"INTERNAL ASSERT|please report a bug|report (this|it) (as a bug|to)|should never|"
                      r"unreachable|not reached", re.I)

PY_SOURCES = (
    "autograd",
    "utils/checkpoint.py",
    "func",
    "_functorch",
    "nn/parallel/distributed.py",
    "nn/utils",
    "optim",
    "nn/modules/module.py",
    "nn/parameter.py",
    "_tensor.py",
    "overrides.py",
)
SO_FILES = ("lib/libtorch_cpu.so", "lib/libtorch_python.so", "lib/libc10.so")


def torch_dir() -> Path:
    import torch
    return Path(torch.__file__).parent


def _text(node) -> str | None:
    """The literal text of a message expression, '{}' where a value is substituted; None if no literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        return node.value if isinstance(node.value, str) else node.value.decode("utf-8", "replace")
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            out.append(v.value if isinstance(v, ast.Constant) else "{}")
        return "".join(out)
    if isinstance(node, ast.BinOp):
        left, right = _text(node.left), _text(node.right)
        if isinstance(node.op, ast.Mod):
            return left
        if isinstance(node.op, ast.Add) and (left or right):
            return (left or "{}") + (right or "{}")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _text(node.func.value)
    if isinstance(node, ast.Lambda):
        return _text(node.body)
    return None


def _message_args(call: ast.Call):
    """The argument nodes of a call that may carry its message."""
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if name in ("warn", "warn_explicit"):
        return "warning", call.args[:1]
    if name.startswith("_check") or name in ("check",):
        return "error", call.args[1:2] + [k.value for k in call.keywords if k.arg == "msg"]
    if name and (name.endswith("Error") or name.endswith("Exception") or name.endswith("Warning")):
        return "error", call.args[:1]
    return None, []


def harvest_python(root: Path):
    files = []
    for s in PY_SOURCES:
        p = root / s
        files += sorted(p.rglob("*.py")) if p.is_dir() else [p] if p.exists() else []
    files = [f for f in files if "profiler" not in f.name]  # the autograd profiler: timing, not gradients
    out = []
    for f in files:
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            calls = []
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                calls.append(("error", node.exc))
            elif isinstance(node, ast.Call):
                kind, _ = _message_args(node)
                if kind == "warning" or (kind == "error" and not _is_raised(node, tree)):
                    calls.append((kind, node))
            for kind, call in calls:
                k2, args = _message_args(call)
                if isinstance(node, ast.Raise):
                    args = call.args[:1]
                for a in args:
                    t = _text(a)
                    if t is None and isinstance(a, ast.Name):  # msg = "..." just above: take the name
                        t = "{" + a.id + "}"
                    if not t or len(t) < 12:
                        continue
                    t = " ".join(t.split())
                    if INTERNAL.search(t):
                        continue
                    rel = f.relative_to(root).as_posix()
                    if KEYWORDS.search(t) or PY_KEYWORDS.search(t) or any(rel.startswith(a) for a in ALL_MESSAGES):
                        out.append({"source": "python", "where": f"{f.relative_to(root.parent)}:{call.lineno}",
                                    "kind": k2 or kind, "text": t})
    return out


_RAISED: dict[int, set] = {}


def _is_raised(node, tree) -> bool:
    s = _RAISED.get(id(tree))
    if s is None:
        s = {id(n.exc) for n in ast.walk(tree) if isinstance(n, ast.Raise) and n.exc is not None}
        _RAISED[id(tree)] = s
    return id(node) in s


_SENTENCE = re.compile(r"[A-Za-z]{2,}[ ,:;'`]+[A-Za-z(`'\"]")
_NOT_MESSAGE = re.compile(
    r"^_Z|^\s*[/.]|^\S*\.(cpp|h|cc|cu|py)(:\d+)?$|^\S*/[a-z_]+/\S*$|^[\w:.<>,*&()\[\]-]+$|``|:meth:|:class:|>>>|<br>|\| |^(aten|prim|c10|torch)::|"
    r"^func: |->|\bTensor\(a[!)]|^- |^\s*(def|return|if|for) |\$|\{\{|std::|::\w+\(|^[A-Z_0-9]+$|"
    r"^\w+\((Tensor|Scalar|PyObject|SymInt|IntArrayRef)|^Check failed:|^\w+ = \w+\(|^#|%s|primitive|"
    r"ONEDNN|onnx|ONNX|HPU|MPS|MTIA|XPU|MAIA|PrivateUse|Hooks?Interface|cudnn|CUDNN|\bmkl|quantized|"
    # derivative formulas (derivatives.yaml / JIT symbolic scripts), serialization versions, operator docs
    r"^[\w, ]+ = |_grad_sum_to_size|bytecode|upgrade|dwarf|PARDISO|protobuf|Protocol Buffers|^Avg |ADAGRAD|"
    r"iteration|`W\w*`|`R\w*`|pseudo code|\bThe (encoding|index|node|parameter|targeted|current)\b")
#: messages that differ only in an operator's name, collapsed to one family (the name becomes {op})
FAMILIES = (
    (re.compile(r"(Trying to use forward AD with )\w+( that does not support it because it is an out= function)"),
     r"\1{op}\2"),
    (re.compile(r"(Can't call )\w+(\(\) on Variable that requires grad)"), r"\1{op}\2"),
    (re.compile(r"(vmap: Attempted to vmap over .)\w+(. in torch\.)\w+"), r"\1{arg}\2{op}"),
    (re.compile(r"(derivative for )[\w.]+( is not implemented)"), r"\1{op}\2"),
)


def harvest_so(root: Path, min_len: int = 12):
    out = []
    for rel in SO_FILES:
        p = root / rel
        if not p.exists():
            continue
        data = p.read_bytes()
        seen = set()
        for m in re.finditer(rb"[\x20-\x7e\t]{%d,}" % min_len, data):
            s = m.group().decode("ascii").strip()
            if s in seen or not KEYWORDS.search(s) or not _SENTENCE.search(s) or _NOT_MESSAGE.search(s):
                continue
            if INTERNAL.search(s) or s.count(" ") < 2:
                continue
            for fam, repl in FAMILIES:
                s = fam.sub(repl, s)
            if s in seen:
                continue
            seen.add(s)
            out.append({"source": "c++", "where": rel, "kind": "error?", "text": s})
    return out


def _md(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def table() -> int:
    """Run every curated row's trigger under gradscope.trace() and print the markdown table of
    docs/errors.md (what gradscope says today, and whether that is the row's cause at its line)."""
    tests = Path(__file__).resolve().parent.parent / "tests"
    sys.path.insert(0, str(tests))
    import test_error_catalogue as cat  # noqa: E402 (tests/ is not a package)
    import torch
    torch.set_warn_always(True)
    src = (tests / "error_triggers.py").read_text().splitlines()
    print("| # | message (regex) | when it happens | trigger | cause wanted | gradscope today | right |")
    print("|---|---|---|---|---|---|---|")
    right = 0
    for i, row in enumerate(cat.ROWS, 1):
        got, ret, tr = cat.run(row, traced=True)
        exp = tr.failure if row.kind == "raises" else tr.why(ret)
        want = cat.cause_line(row)
        if exp is None:
            today = "nothing"
        else:
            line = exp.site.lineno if exp.site else None
            code = src[line - 1].split("#")[0].strip() if line and exp.site.filename.endswith("error_triggers.py") \
                else None
            where = (f"at `{code}`" if code else "with no line" if line is None else f"at {exp.site.short}")
            where += " (the cause's line)" if line == want else f"; the cause is `{src[want - 1].split('#')[0].strip()}`"
            today = f"`{exp.cause}` ({exp.rule or 'no rule'}) {where}"
        ok = not row.todo
        right += ok
        pat = row.pattern or "(no message: a gradient question)"
        print(f"| {i} | `{_md(pat)}` | {_md(row.when)} | `{row.trigger}` | `{row.cause}` | {_md(today)} | {'yes' if ok else 'no'} |")
    print(f"\n{len(cat.ROWS)} rows; explained right today (cause and line): {right}; not: {len(cat.ROWS) - right}")
    return 0


def _found(message: str, texts) -> bool:
    """Does a harvested text (its literal parts, >= 10 characters each) occur in this raised message?"""
    m = " ".join(message.split())
    for t in texts:
        lits = [x.strip() for x in re.split(r"\{\w*\}", t) if len(x.strip()) >= 10]
        if lits and all(x in m for x in lits):
            return True
    return False


def coverage(rows_found) -> int:
    """Which curated rows' messages (as raised by their triggers) the harvest found."""
    tests = Path(__file__).resolve().parent.parent / "tests"
    sys.path.insert(0, str(tests))
    import test_error_catalogue as cat  # noqa: E402 (tests/ is not a package)
    import torch
    torch.set_warn_always(True)
    texts = [r["text"] for r in rows_found]
    missing = []
    for row in cat.ROWS:
        if not row.pattern:
            continue
        got, _, _ = cat.run(row, traced=False)
        msgs = [str(got)] if isinstance(got, BaseException) else [str(w) for w in got]
        if not any(_found(m, texts) for m in msgs):
            missing.append(row.trigger)
    n = sum(1 for r in cat.ROWS if r.pattern)
    print(f"\n# coverage: {n - len(missing)} of {n} curated messages found by the harvest; not found "
          f"(split by format arguments into pieces under 12 characters, or not an autograd message): "
          f"{', '.join(missing) or 'none'}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", action="store_true", help="print only the counts per source")
    ap.add_argument("--json", metavar="PATH", help="write all candidates as JSON")
    ap.add_argument("--no-so", action="store_true", help="skip the shared libraries")
    ap.add_argument("--table", action="store_true", help="run the curated rows under gradscope: the docs table")
    ap.add_argument("--coverage", action="store_true",
                    help="after the harvest, check which curated rows' messages it found")
    a = ap.parse_args(argv)
    if a.table:
        return table()
    import torch
    root = torch_dir()
    rows = harvest_python(root) + ([] if a.no_so else harvest_so(root))
    # one row per distinct text (the first place it was found)
    uniq, seen = [], set()
    for r in rows:
        if r["text"] not in seen:
            seen.add(r["text"])
            uniq.append(r)
    by_src: dict[str, list] = {}
    for r in uniq:
        by_src.setdefault(r["source"] + " " + r["where"].split(":")[0], []).append(r)
    print(f"# torch {torch.__version__}: {len(uniq)} candidate messages "
          f"({sum(r['source'] == 'python' for r in uniq)} Python, {sum(r['source'] == 'c++' for r in uniq)} C++)")
    for src, rs in by_src.items():
        print(f"## {src}: {len(rs)}")
        if not a.counts:
            for r in rs:
                where = r["where"].rsplit(":", 1)[-1] if r["source"] == "python" else ""
                print(f"  [{r['kind']}{' L' + where if where else ''}] {r['text']}")
    if a.json:
        Path(a.json).write_text(json.dumps({"torch": torch.__version__, "messages": uniq}, indent=1))
    if a.coverage:
        return coverage(uniq)
    return 0


if __name__ == "__main__":
    sys.exit(main())
