"""Inject one known gradient bug into a copy of a real program and check what gradscope says.

Operators (each with the cause, in the public vocabulary, that gradscope should name, and the line
it should point at):

============  ===========================================================  ====================  ===============
operator      mutation (on a candidate line found with ``ast``)            expected cause        injected line
============  ===========================================================  ====================  ===============
detach        ``x = <expr>`` in a forward  ->  ``x = (<expr>).detach()``   detach                that line
no_grad       wrap a forward assignment in ``with torch.no_grad():``       no_grad_block         the wrapped line
tolist        after ``x = <expr>`` add ``x = torch.tensor(x.tolist())``    tolist_roundtrip      the added line
freeze        before the optimizer is built, ``m.<layer>.requires_grad_``  frozen_param          the added line
              ``(False)`` for a layer ``self.<layer> = ...`` of m's class
inplace       after ``h = <relu|sigmoid|tanh|exp|softmax|log_softmax>``   inplace_saved_tensor  the added line
              ``(...)`` in a forward, add ``h.mul_(1.0)``
skip_layer    ``x = self.layer(x)`` / ``x = x + self.layer(...)`` ->       unused_parameter      that line
              ``self.layer(...)`` (output discarded: the layer is skipped)
data_attr     ``x = <expr>`` in a forward  ->  ``x = (<expr>).data``       data_attr             that line
============  ===========================================================  ====================  ===============

"Forward" means a method named ``forward`` or ``forward_*`` of a class in the program. A mutant
counts only when the bug is real: run plain (in-process, with a hook on every parameter of every
called model), some parameter that received a gradient in the clean program never receives one, or
``backward()`` raises. Mutants that change nothing (equivalent) or break the program another way
(a shape error) are discarded and the next seeded candidate is tried.

Then the mutant runs under ``gradscope.trace()``: for a lost gradient, ``tr.why(param)`` of the first
parameter that lost it; for a raised backward, ``tr.failure``. Right = the cause is the expected one
AND the site (or a frame of ``site.stack``) is the injected line of the mutant file.

Usage: ``python tests/mutate.py PROGRAM OPERATOR [--seed N]`` prints the mutant's diff line and the verdict.
"""
from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import sys
import tempfile
import traceback
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _programs as P

CAUSES = {
    "detach": "detach",
    "no_grad": "no_grad_block",
    "tolist": "tolist_roundtrip",
    "freeze": "frozen_param",
    "inplace": "inplace_saved_tensor",
    "skip_layer": "unused_parameter",
    "data_attr": "data_attr",
}
OPERATORS = tuple(CAUSES)

#: ops whose backward needs their own output (an in-place write to it makes backward raise)
_SAVES_OUTPUT = {"relu", "sigmoid", "tanh", "exp", "softmax", "log_softmax"}
_OPTIMIZERS = {"SGD", "Adam", "AdamW", "Adadelta", "Adagrad", "RMSprop", "LBFGS", "configure_optimizers"}


@dataclass
class Mutant:
    program: str
    operator: str
    source: str  # the mutant program text
    lines: tuple  # the injected line(s), 1-based, in the mutant
    code: str  # the injected line's text (for reports)

    @property
    def expected(self) -> str:
        return CAUSES[self.operator]

    @property
    def line(self) -> int:
        return self.lines[0]


@dataclass
class Outcome:
    program: str
    operator: str
    status: str  # "scored" | "no_candidate" | "no_effect" (every candidate tried was equivalent or broke the program)
    line: int | None = None
    code: str = ""
    expected: str = ""
    effect: str = ""  # "lost grads: a, b" | "backward raised: ..."
    got_cause: str | None = None
    got_site: str | None = None
    cause_ok: bool = False
    line_ok: bool = False
    note: str = ""
    tried: list = field(default_factory=list)
    # with verification (`gradscope run`, which re-runs the mutant once per candidate cut): what it then named
    v_cause: str | None = None
    v_site: str | None = None
    v_right: bool | None = None
    v_verified: str = ""

    @property
    def right(self) -> bool:
        return self.status == "scored" and self.cause_ok and self.line_ok


# --------------------------------------------------------------------------- finding candidates
def _forward_methods(tree):
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef):
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and (fn.name == "forward" or fn.name.startswith("forward_")):
                    yield fn


def _statements(body):
    """Statements of a function body, descending into if/for/while/with/try (not nested defs)."""
    for st in body:
        yield st
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(st, name, []) or [])
        for h in getattr(st, "handlers", []) or []:
            yield from _statements(h.body)


def _forward_assigns(tree):
    """``name = <expr>`` statements of forward methods (single Name target), in line order."""
    out = []
    for fn in _forward_methods(tree):
        for st in _statements(fn.body):
            if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                    and not isinstance(st.value, (ast.Constant, ast.List, ast.Tuple, ast.Dict))):
                out.append(st)
    return sorted(out, key=lambda s: s.lineno)


def _terminal(func) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _is_self_call(node) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "self")


class _Src:
    """Line-based editing of the program text with ast positions (1-based lines, 0-based cols)."""

    def __init__(self, text: str):
        self.lines = text.splitlines(keepends=True)

    def segment(self, node) -> str:
        return ast.get_source_segment("".join(self.lines), node)

    def replace(self, node, new: str) -> str:
        """Text with ``node``'s source replaced by ``new`` (node on one or more lines)."""
        ls = list(self.lines)
        first, last = node.lineno - 1, node.end_lineno - 1
        head = ls[first][: _col(ls[first], node.col_offset)]
        tail = ls[last][_col(ls[last], node.end_col_offset):]
        ls[first:last + 1] = [head + new + tail]
        return "".join(ls)

    def indent_of(self, st) -> str:
        line = self.lines[st.lineno - 1]
        return line[: len(line) - len(line.lstrip())]

    def insert(self, lineno: int, text: str) -> str:
        """Insert ``text`` (one line, no newline) before 1-based ``lineno``."""
        ls = list(self.lines)
        ls.insert(lineno - 1, text + "\n")
        return "".join(ls)


def _col(line: str, byte_col: int) -> int:
    """ast col offsets are UTF-8 byte offsets."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def candidates(program: str, operator: str, text: str | None = None) -> list[Mutant]:
    """Every mutant of ``operator`` that can be made in ``program`` (in line order)."""
    if text is None:
        with open(P.program_path(program), encoding="utf-8") as f:
            text = f.read()
    tree = ast.parse(text)
    src = _Src(text)
    out: list[Mutant] = []

    def add(new_text, lines):
        code = new_text.splitlines()[lines[0] - 1].strip()
        out.append(Mutant(program, operator, new_text, tuple(lines), code))

    if operator == "freeze":
        return _freeze_candidates(program, tree, src, text)
    for st in _forward_assigns(tree):
        target, value = st.targets[0].id, st.value
        one_line = st.lineno == st.end_lineno
        ind = src.indent_of(st)
        if operator in ("detach", "data_attr"):
            suffix = ".detach()" if operator == "detach" else ".data"
            add(src.replace(value, f"({src.segment(value)}){suffix}"), [st.lineno])
        elif operator == "no_grad" and one_line:
            body = src.lines[st.lineno - 1]
            new = src.insert(st.lineno, f"{ind}with torch.no_grad():")
            ls = new.splitlines(keepends=True)
            ls[st.lineno] = "    " + body  # the statement, one level deeper, now on lineno + 1
            add("".join(ls), [st.lineno + 1])
        elif operator == "tolist":
            add(src.insert(st.end_lineno + 1, f"{ind}{target} = torch.tensor({target}.tolist())"), [st.end_lineno + 1])
        elif operator == "inplace" and isinstance(value, ast.Call) and _terminal(value.func) in _SAVES_OUTPUT:
            add(src.insert(st.end_lineno + 1, f"{ind}{target}.mul_(1.0)"), [st.end_lineno + 1])
        elif operator == "skip_layer":
            call = None
            if _is_self_call(value) and value.args and isinstance(value.args[0], ast.Name) and value.args[0].id == target:
                call = value
            elif (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and isinstance(value.left, ast.Name)
                  and value.left.id == target and _is_self_call(value.right)):
                call = value.right
            if call is not None:
                add(src.replace(st, src.segment(call)), [st.lineno])
    return out


def _freeze_candidates(program, tree, src, text) -> list[Mutant]:
    """``<var>.<layer>.requires_grad_(False)`` right before ``opt = Optim(<var>.parameters(), ...)``
    (or ``<var>.configure_optimizers(...)``), one per layer attribute of <var>'s class."""
    parents = {}
    for node in ast.walk(tree):
        for ch in ast.iter_child_nodes(node):
            parents[ch] = node
    classes = {c.name: c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)}

    def class_of(var, scope_node):
        if var == "self":  # the enclosing class
            n = scope_node
            while n is not None and not isinstance(n, ast.ClassDef):
                n = parents.get(n)
            return n
        for node in ast.walk(tree):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id == var):
                v = node.value
                while isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute):  # Net().to(device)
                    v = v.func.value
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in classes:
                    return classes[v.func.id]
        return None

    def layers(cls):
        init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        out = []
        for st in _statements(init.body if init else []):
            if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Attribute)
                    and isinstance(st.targets[0].value, ast.Name) and st.targets[0].value.id == "self"
                    and isinstance(st.value, ast.Call) and (_terminal(st.value.func) or "")[:1].isupper()):
                if st.targets[0].attr not in out:
                    out.append(st.targets[0].attr)
        return out

    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _terminal(node.func) in _OPTIMIZERS):
            continue
        var = None
        if _terminal(node.func) == "configure_optimizers" and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name):
            var = node.func.value.id
        elif node.args and isinstance(node.args[0], ast.Call) and _terminal(node.args[0].func) == "parameters" \
                and isinstance(node.args[0].func, ast.Attribute) and isinstance(node.args[0].func.value, ast.Name):
            var = node.args[0].func.value.id
        if var is None:
            continue
        st = node
        while not isinstance(parents.get(st), (ast.Module, ast.FunctionDef, ast.If, ast.For, ast.While, ast.With)) \
                or not isinstance(st, ast.stmt):
            st = parents[st]
        cls = class_of(var, st)
        if cls is None:
            continue
        ind = src.indent_of(st)
        for attr in layers(cls):
            new = src.insert(st.lineno, f"{ind}{var}.{attr}.requires_grad_(False)")
            out.append(Mutant(program, "freeze", new, (st.lineno,), f"{var}.{attr}.requires_grad_(False)"))
    return sorted(out, key=lambda m: m.line)


# --------------------------------------------------------------------------- running and judging
def write_mutant(m: Mutant, root: str) -> str:
    """The mutant as ``root/<program>.py`` next to a copy of the programs' helpers."""
    for f in os.listdir(P.PROGRAMS_DIR):
        if f.startswith("_") and f.endswith(".py"):
            shutil.copy(os.path.join(P.PROGRAMS_DIR, f), root)
    path = os.path.join(root, m.program + ".py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(m.source)
    return path


_CLEAN: dict = {}


def clean_grads(program: str) -> set:
    """Which parameters (root index, module path) get a gradient in the unmutated program."""
    if program not in _CLEAN:
        run = P.run_program(P.program_path(program), track_grads=True)
        if run.error is not None:
            raise RuntimeError(f"{program} fails unmutated: {run.error!r}")
        _CLEAN[program] = run.grads
    return _CLEAN[program]


def _raised_in_backward(exc) -> bool:
    if not isinstance(exc, RuntimeError):
        return False
    for fr, _ in traceback.walk_tb(exc.__traceback__):
        f = fr.f_code
        if f.co_name in ("backward", "_engine_run_backward", "grad") and os.sep + "autograd" + os.sep in f.co_filename:
            return True
    return False


def effect(m: Mutant, path: str):
    """How the bug changes gradient flow when run plain: ("lost", [keys]) | ("raised", exc) | None."""
    clean = clean_grads(m.program)
    run = P.run_program(path, track_grads=True)
    if run.error is not None:
        return ("raised", run.error) if _raised_in_backward(run.error) else None
    lost = sorted(clean - run.grads)
    return ("lost", lost) if lost else None


def _site_hits(site, path: str, lines) -> bool:
    if site is None:
        return False
    frames = [(site.filename, site.lineno)] + [(f.filename, f.lineno) for f in (site.stack or ())]
    return any(os.path.realpath(fn) == os.path.realpath(path) and ln in lines for fn, ln in frames)


def judge(m: Mutant, path: str, eff) -> Outcome:
    """Run the mutant under gradscope.trace() and compare its explanation with the injected bug."""
    o = Outcome(m.program, m.operator, "scored", m.line, m.code, m.expected)
    run = P.run_program(path, traced=True)
    tr = run.trace
    try:
        if eff[0] == "raised":
            o.effect = f"backward raised: {str(eff[1]).splitlines()[0][:70]}"
            exp = tr.failure
            if exp is None:
                o.note = "the traced run raised nothing" if run.error is None else "tr.failure is None"
        else:
            keys = {key: p for key, _, p in run.params()}
            o.effect = "lost grads: " + ", ".join(k[1] for k in eff[1][:3]) + (" ..." if len(eff[1]) > 3 else "")
            param = keys.get(eff[1][0])
            exp = tr.why(param) if param is not None else None
            if param is None:
                o.note = "the lost parameter is not in the traced run's models"
    except Exception as e:  # gradscope failing to answer is a miss, with the reason
        exp, o.note = None, f"gradscope raised {type(e).__name__}: {str(e)[:80]}"
    if exp is not None:
        o.got_cause = exp.cause
        o.got_site = exp.site.short if exp.site else None
        o.cause_ok = exp.cause == m.expected
        o.line_ok = _site_hits(exp.site, path, m.lines)
    return o


def judge_cli(m: Mutant, path: str, eff, o: Outcome) -> None:
    """The same mutant under `gradscope run --json` (which verifies by default): its problem for the lost
    parameter (or its failure), judged like :func:`judge`, into ``o.v_*``."""
    import json
    import subprocess

    p = subprocess.run([sys.executable, "-m", "gradscope", "run", "--json", "--quiet", path], capture_output=True,
                       text=True, timeout=600, cwd=os.path.dirname(path))
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        o.v_right, o.v_verified = False, f"no JSON (exit {p.returncode})"
        return
    exp = None
    if eff[0] == "raised":
        exp = doc.get("failure")
    else:
        want = eff[1][0][1]
        for q in doc.get("problems", []):
            if any(t == want or t.endswith("." + want) for t in q.get("targets", [q.get("target", "")])):
                exp = q
                break
    if exp is None:
        o.v_right = False
        return
    site = exp.get("site") or {}
    o.v_cause, o.v_site = exp.get("cause"), f"{os.path.basename(site.get('filename', '?'))}:{site.get('lineno')}"
    o.v_verified = exp.get("verified") or ""
    frames = [(site.get("filename"), site.get("lineno"))] + [(f[0], f[1]) for f in site.get("stack", [])
                                                            if isinstance(f, list) and len(f) >= 2]
    line_ok = any(fn and os.path.realpath(fn) == os.path.realpath(path) and ln in m.lines for fn, ln in frames)
    o.v_right = exp.get("cause") == m.expected and line_ok


def mutate_and_judge(program: str, operator: str, seed: int = 0, max_tries: int = 4, verify: bool = False) -> Outcome:
    """Pick seeded candidates until one really changes gradient flow; judge gradscope on it."""
    cands = candidates(program, operator)
    if not cands:
        return Outcome(program, operator, "no_candidate", expected=CAUSES[operator])
    rng = random.Random(f"{seed}:{program}:{operator}")
    rng.shuffle(cands)
    tried = []
    for m in cands[:max_tries]:
        with tempfile.TemporaryDirectory(prefix="gs-mutant-") as d:
            path = write_mutant(m, d)
            eff = effect(m, path)
            tried.append(m.line)
            if eff is None:
                continue
            o = judge(m, path, eff)
            if verify:
                judge_cli(m, path, eff, o)
            o.tried = tried
            return o
    return Outcome(program, operator, "no_effect", expected=CAUSES[operator], tried=tried)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("program", choices=P.program_names())
    ap.add_argument("operator", choices=OPERATORS)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    o = mutate_and_judge(a.program, a.operator, a.seed)
    print(f"{o.program} {o.operator}: {o.status}; line {o.line}: {o.code}")
    print(f"  effect: {o.effect}\n  expected {o.expected}, got {o.got_cause} @ {o.got_site}  "
          f"[{'RIGHT' if o.right else 'MISS'}] {o.note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
