"""Mutation run over gradscope's decision code: how many small, deliberate bugs do the tests catch?

A small AST mutator (no dependency). It enumerates every mutant of

* ``gradscope/diagnosis/*.py`` and ``gradscope/verdict.py`` (all operators below),
* the tables of ``gradscope/_record/_ops.py`` (module-level sets, dicts, tuples and lists: dropped entries),
* the cut branches of ``gradscope/_record/_calls.py`` (in ``_post``: the branches that decide ``cut``),

with these operators:

==============  =================================================================================
``negate``      ``if c:`` / ``while c:`` / ``a if c else b`` / a comprehension's ``if c`` -> ``not (c)``
``boolop``      ``and`` <-> ``or`` (one operator of the expression)
``compare``     ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <-> ``!=``, ``in`` <-> ``not in``, ``is`` <-> ``is not``
``string``      a compared string constant changed (``x == "cut"``, ``k in ("a", "b")``): ``"cut"`` -> ``"cut_mut"``
``delete``      an assignment or an ``append``/``add``/``update``/... call removed (in a function)
``return``      ``return <value>`` -> ``return None``
``table``       one entry dropped from a module- or class-level set/dict/tuple/list literal
==============  =================================================================================

draws a seeded random sample, and runs each mutant on its own temporary copy of the package (gradscope/,
tests/ and pyproject.toml copied to a temp dir, the one file mutated there, that dir first on sys.path and in
PYTHONPATH, so subprocesses see the mutant too; the working tree is never touched). A fast, relevant test subset
per mutated file runs with ``-x`` under a per-mutant timeout (see ``SUBSETS``). The children are forked from a
parent that has imported torch (not gradscope), so each mutant saves the interpreter's start-up; ``--spawn`` runs
a fresh interpreter instead.

Each mutant also carries a probe on its own line (no line numbers move): the first time the mutated code runs,
it says so. A mutant is then

* ``killed``   -- a test failed (or the package failed to import);
* ``timeout``  -- the subset ran past the timeout (counted as killed: the mutant hangs or slows a test down);
* ``equivalent`` -- compiles to the same bytecode as the original, or is listed in ``EQUIVALENT`` (reviewed,
  with the reason): not counted;
* ``survived`` -- the subset passed although the mutated code ran: a missing assertion, or an equivalent mutant
  nobody has reviewed yet (an *equivalent candidate*: read its diff);
* ``not reached`` -- the subset passed and never ran the mutated code: a missing test (for that subset).

The kill rate is (killed + timeout) / (all - equivalent). Results go to ``<out>.json`` and ``<out>.md`` (a
table with each mutant's file:line, operator, status, the test that killed it and its diff).

Run it from the repository root (60 mutants: about 25 minutes on 2 free cores with ``--jobs 2``)::

    python benchmarks/mutation.py --sample 60 --seed 1 --jobs 2 --out /tmp/mutation
    # after adding tests: the same sample, only the mutants that were not killed run again
    python benchmarks/mutation.py --sample 60 --seed 1 --jobs 2 --rerun /tmp/mutation.json --out /tmp/mutation2
    python benchmarks/mutation.py --list | head             # every mutant, without running anything
    python benchmarks/mutation.py --only gradscope/verdict.py --sample 10
    python benchmarks/mutation.py --mutant 'gradscope/diagnosis/common.py:40:table:15'   # one mutant again

``--baseline`` first runs each subset on the unmutated copy (it must pass; its time sets the timeout, else
``--timeout``); without it only the first file of each subset is checked on the unmutated copy. (The rule
fixtures of tests/fixtures/rules/ point at lines of tests/test_rules_*.py: after editing those files, re-record
them with tests/fixtures/record_rules.py, or test_diagnosis_registry.py fails, unmutated or not.)
"""
from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = "__import__('_mutprobe').hit"

#: which tests run for a mutant of a file (the first matching prefix), fastest and broadest first
RULE_TESTS = ["tests/test_rules_received.py", "tests/test_rules_nonfinite.py", "tests/test_rules_zero.py",
              "tests/test_rules_none.py", "tests/test_rules_unused.py", "tests/test_rules_failure.py"]
SUBSETS = {
    "gradscope/diagnosis/": ["tests/test_diagnosis_registry.py", *RULE_TESTS, "tests/test_scenarios.py"],
    "gradscope/verdict.py": ["tests/test_verdict.py", *RULE_TESTS, "tests/test_scenarios.py"],
    "gradscope/_record/": ["tests/test_record.py", *RULE_TESTS, "tests/test_scenarios.py"],
}

#: reviewed survivors that cannot change behaviour (or only for input no PyTorch produces): mutant id -> why
EQUIVALENT: dict[str, str] = {
    "gradscope/diagnosis/errors.py:42:negate:0":
        "stops at the first matching pattern whose rule found nothing instead of trying later patterns: differs "
        "only for a message that matches two patterns of ERRORS, which no PyTorch message does",
    "gradscope/diagnosis/templates.py:438:delete:0": "`fix = (fix)` assigns the parameter to itself",
    "gradscope/diagnosis/registry.py:16:table:1": "an __all__ entry: only `from ... import *` reads it, and nothing does",
    "gradscope/diagnosis/rules_failure.py:43:boolop:0":
        "`t is not None or t in tensors`: differs only for a target id the trace has no tensor for (KeyError); the "
        "recorder registers every tensor an in-place event names",
    "gradscope/diagnosis/common.py:86:table:8":
        "'torch.nn.functional' in _MODULE_NAMES: the same test also accepts any receiver starting with 'torch.'",
}

COMPARE_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
COMPARE_TOKEN = {ast.Lt: (r"<(?![=<])", "<"), ast.LtE: (r"<=", "<="), ast.Gt: (r"(?<![->])>(?![=>])", ">"),
                 ast.GtE: (r">=", ">="), ast.Eq: (r"==", "=="), ast.NotEq: (r"!=", "!="),
                 ast.In: (r"(?<!not )\bin\b", "in"), ast.NotIn: (r"\bnot\s+in\b", "not in"),
                 ast.Is: (r"\bis\b(?!\s+not\b)", "is"), ast.IsNot: (r"\bis\s+not\b", "is not")}
MUTATING_CALLS = {"append", "add", "update", "extend", "insert", "setdefault", "discard", "remove", "pop",
                  "appendleft", "clear"}
OPERATORS = ("negate", "boolop", "compare", "string", "delete", "return", "table")


# --------------------------------------------------------------------------------------------- mutants
@dataclass
class Mutant:
    file: str          # path relative to the repository root
    line: int
    op: str
    n: int             # which mutant of its kind on that line
    edits: list        # [(start, end, text)] character offsets into the file's text, applied to the original
    probe_edits: list  # the same edits with the probe on the mutated code
    what: str          # short description

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}:{self.op}:{self.n}"


class _Source:
    """A file's text with ast positions (line, UTF-8 byte column) turned into character offsets."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0]
        for ln in text.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(ln))
        self.lines = text.splitlines(keepends=True)

    def off(self, line: int, col: int) -> int:
        raw = self.lines[line - 1].encode("utf-8")[:col]
        return self.starts[line - 1] + len(raw.decode("utf-8", errors="replace"))

    def span(self, node) -> tuple[int, int]:
        return self.off(node.lineno, node.col_offset), self.off(node.end_lineno, node.end_col_offset)

    def seg(self, node) -> str:
        a, b = self.span(node)
        return self.text[a:b]


def _parents(tree):
    par = {}
    for n in ast.walk(tree):
        for c in ast.iter_child_nodes(n):
            par[c] = n
    return par


def _in_function(node, par) -> bool:
    while node in par:
        node = par[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
    return False


def _function_of(node, par):
    while node in par:
        node = par[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    return None


def _wrap(text: str) -> str:
    return f"({PROBE}() or {text})"


def _cut_region(tree, par):
    """_calls.py: the nodes that decide a cut, in ``_post``: each statement that assigns ``cut`` (or an ``if`` that
    tests it), the other statements of its branch, and the conditions of the branches around it."""
    post = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_post"), None)
    keep = set()
    if post is None:
        return keep
    for n in ast.walk(post):
        names = [t for t in (n.targets if isinstance(n, ast.Assign) else ()) for t in ast.walk(t)]
        assigns_cut = any(isinstance(t, ast.Name) and t.id == "cut" for t in names)
        tests_cut = isinstance(n, ast.If) and any(isinstance(x, ast.Name) and x.id == "cut" for x in ast.walk(n.test))
        if not (assigns_cut or tests_cut):
            continue
        keep.update(ast.walk(n))
        up = par[n]
        for block in (getattr(up, "body", None), getattr(up, "orelse", None)) if up is not post else ():
            if block and n in block:
                for s in block:
                    keep.update(ast.walk(s))
        while up is not post:
            if isinstance(up, ast.If):
                keep.add(up)
                keep.update(ast.walk(up.test))
            up = par[up]
    return keep


def mutants_of(rel: str) -> list[Mutant]:
    text = (ROOT / rel).read_text(encoding="utf-8")
    src = _Source(text)
    tree = ast.parse(text)
    par = _parents(tree)
    tables_only = rel.endswith("_record/_ops.py")
    region = _cut_region(tree, par) if rel.endswith("_record/_calls.py") else None
    docstrings = {b.body[0].value for b in ast.walk(tree)
                  if isinstance(b, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and b.body
                  and isinstance(b.body[0], ast.Expr) and isinstance(b.body[0].value, ast.Constant)}
    out: list[Mutant] = []
    count: dict = {}

    def add(node, op, edits, probe_edits, what):
        key = (node.lineno, op)
        count[key] = count.get(key, 0) + 1
        out.append(Mutant(rel, node.lineno, op, count[key] - 1, edits, probe_edits, what))

    def allowed(node) -> bool:
        if region is not None:
            return node in region
        return not tables_only

    for node in ast.walk(tree):
        # --- negate a condition
        tests = []
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            tests = [node.test]
        elif isinstance(node, ast.comprehension):
            tests = list(node.ifs)
        for t in tests:
            if allowed(t) and _in_function(t, par):
                a, b = src.span(t)
                seg = text[a:b]
                add(t, "negate", [(a, b, f"not ({seg})")], [(a, b, f"({PROBE}() or not ({seg}))")],
                    f"not ({_short(seg)})")
        # --- swap and/or
        if isinstance(node, ast.BoolOp) and allowed(node) and _in_function(node, par):
            a, b = src.span(node)
            word, other = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            for i in range(len(node.values) - 1):
                g0, g1 = src.span(node.values[i])[1], src.span(node.values[i + 1])[0]
                gap = text[g0:g1]
                new_gap, k = re.subn(rf"\b{word}\b", other, gap, count=1)
                if not k:
                    continue
                new = text[a:g0] + new_gap + text[g1:b]
                add(node, "boolop", [(a, b, new)], [(a, b, _wrap(new))], f"{word} -> {other}")
        # --- change a comparison / a compared string
        if isinstance(node, ast.Compare) and allowed(node) and _in_function(node, par):
            a, b = src.span(node)
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                g0, g1 = src.span(operands[i])[1], src.span(operands[i + 1])[0]
                gap = text[g0:g1]
                pat, tok = COMPARE_TOKEN[type(op)]
                new_tok = COMPARE_TOKEN[COMPARE_SWAP[type(op)]][1]
                new_gap, k = re.subn(pat, new_tok, gap, count=1)
                if not k:
                    continue
                new = text[a:g0] + new_gap + text[g1:b]
                add(node, "compare", [(a, b, new)], [(a, b, _wrap(new))], f"{tok} -> {new_tok}")
            for o in operands:
                consts = [o] if isinstance(o, ast.Constant) else list(o.elts) if isinstance(
                    o, (ast.Tuple, ast.List, ast.Set)) else []
                for c in consts:
                    if isinstance(c, ast.Constant) and isinstance(c.value, str) and c not in docstrings:
                        c0, c1 = src.span(c)
                        new = text[a:c0] + repr(c.value + "_mut") + text[c1:b]
                        add(c, "string", [(a, b, new)], [(a, b, _wrap(new))],
                            f"{_short(repr(c.value))} -> {_short(repr(c.value + '_mut'))}")
        # --- delete a statement / return None
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) or (
                isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in MUTATING_CALLS):
            if getattr(node, "value", None) is not None and allowed(node) and _function_of(node, par) is not None:
                a, b = src.span(node)
                pad = "\n" * text[a:b].count("\n")
                add(node, "delete", [(a, b, "pass" + pad)], [(a, b, f"{PROBE}()" + pad)],
                    f"delete `{_short(text[a:b])}`")
        if isinstance(node, ast.Return) and node.value is not None and allowed(node) and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            a, b = src.span(node)
            pad = "\n" * text[a:b].count("\n")
            add(node, "return", [(a, b, "return None" + pad)], [(a, b, f"return {PROBE}(None)" + pad)],
                f"`{_short(text[a:b])}` -> return None")
        # --- drop a table entry (module or class level)
        if isinstance(node, (ast.Set, ast.List, ast.Tuple, ast.Dict)) and not _in_function(node, par) and (
                region is None):
            elts = list(node.keys if isinstance(node, ast.Dict) else node.elts)
            if len(elts) < 2 or any(e is None for e in elts):
                continue
            if isinstance(node, ast.Dict):
                items = [(k, v) for k, v in zip(node.keys, node.values)]
                spans = [(src.span(k)[0], src.span(v)[1]) for k, v in items]
            else:
                spans = [src.span(e) for e in elts]
            for i, (s0, s1) in enumerate(spans):
                if i + 1 < len(spans):
                    cut0, cut1 = s0, spans[i + 1][0]
                else:
                    cut0, cut1 = spans[i - 1][1], s1
                removed = text[cut0:cut1]
                pad = "\n" * removed.count("\n")
                add(_at(node, src, s0, text), "table", [(cut0, cut1, pad)], [(cut0, cut1, pad)],
                    f"drop `{_short(text[s0:s1])}`")
    out.sort(key=lambda m: (m.line, OPERATORS.index(m.op), m.n))
    return out


def _at(node, src: _Source, off: int, text: str):
    """A stand-in node at the line of character offset ``off`` (a table entry's own line)."""
    line = text.count("\n", 0, off) + 1
    return ast.Pass(lineno=line, col_offset=0)


def _short(s: str, n: int = 60) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[:n - 3] + "..."


def apply(text: str, edits) -> str:
    for a, b, new in sorted(edits, key=lambda e: -e[0]):
        text = text[:a] + new + text[b:]
    return text


def targets() -> list[str]:
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "gradscope" / "diagnosis").glob("*.py")
                   if p.name != "__main__.py")
    return files + ["gradscope/verdict.py", "gradscope/_record/_ops.py", "gradscope/_record/_calls.py"]


def all_mutants(only: str | None = None) -> list[Mutant]:
    out = []
    for f in targets():
        if only and only not in f:
            continue
        out += mutants_of(f)
    return out


def _code_equal(a, b) -> bool:
    if a.co_code != b.co_code or a.co_names != b.co_names or len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if hasattr(x, "co_code") and hasattr(y, "co_code"):
            if not _code_equal(x, y):
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True


def same_bytecode(original: str, mutated: str) -> bool:
    try:
        return _code_equal(compile(original, "m", "exec"), compile(mutated, "m", "exec"))
    except SyntaxError:
        return False


def diff_of(m: Mutant) -> str:
    text = (ROOT / m.file).read_text(encoding="utf-8")
    new = apply(text, m.edits)
    d = difflib.unified_diff(text.splitlines(), new.splitlines(), m.file, m.file, n=0, lineterm="")
    return "\n".join(x for x in d if not x.startswith(("---", "+++")))


# --------------------------------------------------------------------------------------------- running
@dataclass
class Result:
    id: str
    file: str
    line: int
    op: str
    what: str
    status: str
    reached: bool | None = None
    killer: str | None = None
    seconds: float = 0.0
    diff: str = ""
    note: str = ""
    tests: list = field(default_factory=list)


PROBE_MODULE = '''import os
_done = False


def hit(value=False):
    global _done
    if not _done:
        _done = True
        p = os.environ.get("MUTATION_PROBE")
        if p:
            open(p, "w").close()
    return value
'''


_STAGE: list[Path] = []


def stage() -> Path:
    """One copy of the package and the tests taken when the run starts (edits made meanwhile do not leak in)."""
    if not _STAGE:
        tmp = Path(tempfile.mkdtemp(prefix="gradscope-mutation-stage-"))
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
        shutil.copytree(ROOT / "gradscope", tmp / "gradscope", ignore=ignore)
        shutil.copytree(ROOT / "tests", tmp / "tests", ignore=ignore, symlinks=True)
        shutil.copy2(ROOT / "pyproject.toml", tmp / "pyproject.toml")
        (tmp / "_mutprobe.py").write_text(PROBE_MODULE)
        _STAGE.append(tmp)
    return _STAGE[0]


def make_copy(mutant: Mutant | None) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix="gradscope-mutant-"))
    shutil.copytree(stage(), tmp, dirs_exist_ok=True, symlinks=True)
    if mutant is not None:
        p = tmp / mutant.file
        p.write_text(apply(p.read_text(encoding="utf-8"), mutant.probe_edits), encoding="utf-8")
    return tmp


def subset_for(rel: str) -> list[str]:
    for prefix, tests in SUBSETS.items():
        if rel.startswith(prefix):
            return tests
    raise KeyError(rel)


def _pytest_args(tests) -> list[str]:
    return ["-x", "-q", "-p", "no:cacheprovider", "--no-header", "-o", "addopts=", "-rfE", *tests]


def _child(tmp: Path, tests, log: Path, probe: Path):
    """In the forked child: run pytest on the copy, exit with its status."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.chdir(tmp)
    os.environ["PYTHONPATH"] = str(tmp)
    os.environ["MUTATION_PROBE"] = str(probe)
    sys.path.insert(0, str(tmp))
    try:
        import pytest

        code = int(pytest.main(_pytest_args(tests)))
    except BaseException:  # noqa: BLE001  (anything: the mutant broke the run)
        import traceback

        traceback.print_exc()
        code = 3
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


class _Run:
    """One copy under test: a forked child (or a spawned interpreter) running the subset."""

    def __init__(self, mutant: Mutant | None, tests, timeout: float, spawn: bool):
        self.mutant, self.timeout = mutant, timeout
        self.tmp = make_copy(mutant)
        self.log, self.probe = self.tmp / "_log.txt", self.tmp / "_probe"
        self.t0 = time.monotonic()
        self.proc = None
        if spawn:
            env = dict(os.environ, PYTHONPATH=str(self.tmp), MUTATION_PROBE=str(self.probe))
            with open(self.log, "w") as fh:
                self.proc = subprocess.Popen([sys.executable, "-m", "pytest", *_pytest_args(tests)], cwd=self.tmp,
                                             env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
            self.pid = self.proc.pid
        else:
            self.pid = os.fork()
            if self.pid == 0:
                os.setsid()
                _child(self.tmp, tests, self.log, self.probe)

    def poll(self):
        """None while running; else (outcome 'pass' / 'fail' / 'timeout', seconds, log text, probe reached)."""
        done, status = os.waitpid(self.pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
        elif time.monotonic() - self.t0 > self.timeout:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            code = None
        else:
            return None
        secs = time.monotonic() - self.t0
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        reached = self.probe.exists()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return ("timeout" if code is None else "pass" if code == 0 else "fail"), secs, text, reached


def run_one(mutant: Mutant | None, tests, timeout: float, spawn: bool):
    r = _Run(mutant, tests, timeout, spawn)
    while (out := r.poll()) is None:
        time.sleep(0.2)
    return out


def _killer(text: str) -> str | None:
    for ln in text.splitlines():
        if ln.startswith(("FAILED ", "ERROR ")):
            return ln.split(" - ")[0]
    for ln in text.splitlines():
        if "Error" in ln and ("ImportError" in ln or "SyntaxError" in ln or "NameError" in ln):
            return ln.strip()[:200]
    tail = [ln for ln in text.splitlines() if ln.strip()]
    return tail[-1][:200] if tail else None


def _prepare(m: Mutant) -> Result:
    original = (stage() / m.file).read_text(encoding="utf-8")
    r = Result(m.id, m.file, m.line, m.op, m.what, "?", diff=diff_of(m), tests=subset_for(m.file))
    if same_bytecode(original, apply(original, m.edits)):
        r.status, r.note = "equivalent", "same bytecode as the original"
    return r


def _finish(m: Mutant, r: Result, outcome, secs, text, reached) -> Result:
    r.seconds, r.reached = round(secs, 1), reached
    if outcome == "timeout":
        r.status = "timeout"
    elif outcome == "fail":
        r.status, r.killer = "killed", _killer(text)
    elif m.id in EQUIVALENT:
        r.status, r.note = "equivalent", EQUIVALENT[m.id]
    else:
        r.status = "survived" if reached or m.op == "table" else "not reached"
        r.note = _last_line(text)
    return r


def run_all(chosen: list[Mutant], timeouts, spawn: bool, jobs: int, done: dict | None = None, report=print):
    """Judge every mutant, ``jobs`` at a time; ``done``: results to keep (a previous run's kills)."""
    results: dict[str, Result] = {}
    queue = []
    for m in chosen:
        if done and m.id in done:
            results[m.id] = done[m.id]
            continue
        r = _prepare(m)
        if r.status == "equivalent":
            results[m.id] = r
        else:
            queue.append((m, r))
    running = []
    n = 0
    while queue or running:
        while queue and len(running) < jobs:
            m, r = queue.pop(0)
            running.append((m, r, _Run(m, subset_for(m.file), timeouts[tuple(subset_for(m.file))], spawn)))
        for item in list(running):
            m, r, run = item
            out = run.poll()
            if out is None:
                continue
            running.remove(item)
            results[m.id] = _finish(m, r, *out)
            n += 1
            report(f"[{n}/{n + len(queue) + len(running)}] {r.status:11} {r.seconds:6.1f}s {m.id}  {m.what}"
                   + (f"  <- {r.killer}" if r.killer else ""))
        time.sleep(0.2)
    return [results[m.id] for m in chosen]


def _last_line(text: str) -> str:
    """pytest's closing line (``612 passed, 1 skipped in 45.1s``)."""
    tail = [ln.strip("= ") for ln in text.splitlines() if ln.strip()]
    return tail[-1] if tail else ""


def summary(results: list[Result]) -> dict:
    by = {}
    for r in results:
        by[r.status] = by.get(r.status, 0) + 1
    counted = len(results) - by.get("equivalent", 0)
    killed = by.get("killed", 0) + by.get("timeout", 0)
    return {"mutants": len(results), **by, "kill_rate": round(killed / counted, 3) if counted else None}


def write_report(results: list[Result], meta: dict, out: str):
    s = summary(results)
    Path(out + ".json").write_text(json.dumps({"meta": meta, "summary": s, "results": [asdict(r) for r in results]},
                                              indent=1))
    lines = [f"# Mutation run: seed {meta['seed']}, {s['mutants']} mutants", "",
             "Kill rate (killed + timeout) / (all - equivalent): "
             f"**{s['kill_rate']:.1%}**" if s["kill_rate"] is not None else "", "",
             "| " + " | ".join(f"{k}: {v}" for k, v in s.items() if k != "kill_rate") + " |", "",
             "| # | mutant | operator | status | killed by / note | s | diff |", "|---|---|---|---|---|---|---|"]
    for i, r in enumerate(results, 1):
        diff = r.diff.replace("|", "\\|").replace("\n", "<br>")
        lines.append(f"| {i} | `{r.file}:{r.line}` | {r.op}: {r.what.replace('|', '/')} | {r.status} | "
                     f"{(r.killer or r.note or '').replace('|', '/')} | {r.seconds} | <code>{diff}</code> |")
    Path(out + ".md").write_text("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=60, help="how many mutants to draw (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", help="only files whose path contains this")
    ap.add_argument("--op", action="append", choices=OPERATORS, help="only these operators")
    ap.add_argument("--mutant", action="append", help="run these mutant ids (see --list) instead of a sample")
    ap.add_argument("--list", action="store_true", help="print the mutants (id, description) and stop")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per mutant (without --baseline)")
    ap.add_argument("--baseline", action="store_true", help="run each subset unmutated first; timeout = 2x + 30 s")
    ap.add_argument("--spawn", action="store_true", help="a fresh interpreter per mutant instead of a fork")
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once")
    ap.add_argument("--rerun", metavar="REPORT.json",
                    help="the same sample again, keeping that report's killed mutants (tests added since cannot "
                         "revive them): only its survivors, timeouts and unreached mutants run again")
    ap.add_argument("--out", default="mutation", help="write <out>.json and <out>.md")
    a = ap.parse_args(argv)

    pool = all_mutants(a.only)
    if a.op:
        pool = [m for m in pool if m.op in a.op]
    if a.list:
        for m in pool:
            print(m.id, "|", m.what)
        print(f"{len(pool)} mutants", file=sys.stderr)
        return 0
    if a.mutant:
        ids = {m.id: m for m in pool}
        chosen = [ids[i] for i in a.mutant]
    else:
        chosen = pool if not a.sample or a.sample >= len(pool) else random.Random(a.seed).sample(pool, a.sample)
    stage()
    if not a.spawn:  # (the forked children share these imports: not gradscope's)
        import numpy  # noqa: F401
        import torch  # noqa: F401

    timeouts = {}
    for tests in {tuple(subset_for(m.file)) for m in chosen}:
        if a.baseline:
            outcome, secs, text, _ = run_one(None, list(tests), 3600, a.spawn)
            if outcome != "pass":
                print(text[-3000:])
                raise SystemExit(f"the unmutated copy fails {tests}: fix that first")
            timeouts[tests] = 2 * secs + 30
            print(f"baseline {len(tests)} files: {secs:.0f} s", flush=True)
        else:
            timeouts[tests] = a.timeout
            # (cheap sanity check: the unmutated copy passes the subset's first file, else every mutant "dies")
            outcome, secs, text, _ = run_one(None, list(tests[:1]), 600, a.spawn)
            if outcome != "pass":
                print(text[-3000:])
                raise SystemExit(f"the unmutated copy fails {tests[0]}: fix that first")
    done = None
    if a.rerun:
        prev = json.loads(Path(a.rerun).read_text())
        done = {r["id"]: Result(**r) for r in prev["results"] if r["status"] in ("killed", "equivalent")}
    t0 = time.time()
    results = run_all(chosen, timeouts, a.spawn, a.jobs, done, report=lambda x: print(x, flush=True))
    meta = {"seed": a.seed, "sample": a.sample, "only": a.only, "seconds": round(time.time() - t0), "jobs": a.jobs,
            "rerun_of": a.rerun,
            "pool": len(pool), "subsets": SUBSETS}
    write_report(results, meta, a.out)
    shutil.rmtree(stage(), ignore_errors=True)
    print(json.dumps(summary(results)), f"({meta['seconds']} s; {a.out}.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
