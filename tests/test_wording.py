"""Wording apart from deciding: no prose is built outside the template modules of gradscope.diagnosis.

The rule modules decide (cause, site, evidence, extra sites) and call a template (templates*.py) for the
summary, detail and fix. This scans their source (AST, no torch) for prose literals: a string literal or
f-string with a space in its literal text, put together into a value (assigned, concatenated, chosen by a
conditional, joined) or passed as an Explanation's summary/detail/fix. Literals used to decide (compared,
looked up, split on, passed as a plain argument) are not prose."""
from __future__ import annotations

import ast
import pathlib

import gradscope.diagnosis as diagnosis

PKG = pathlib.Path(diagnosis.__file__).parent
DECIDING = sorted(p for p in PKG.glob("*.py") if not p.name.startswith("templates"))

# Labels that may stay, exactly (module, function, literal as written): a name for something the user did not
# name, used as an Explanation's target and as a name inside the templates' sentences (a name, not a sentence).
LABELS = {
    ("common.py", "_opname", '"\'s indices"'), ("cuts.py", "find_data_cut", "'the loss'"),
    ("facts.py", "late_binding", "'a variable'"), ("facts.py", "root_label", "'the loss'"),
    ("facts.py", "lib_name", "'a parametrization'"), ("facts.py", "cut_input_label", "'the value'"),
    ("facts.py", "cut_input_label", 'f"{p.module}\'s output"'), ("rules_failure.py", "no_grad_fn", "'the loss'"),
    ("rules_failure.py", "numpy_of_grad_tensor", "'the tensor'"), ("rules_failure.py", "no_derivative", "'the loss'"),
}
# Functions that still build their text inline (module, function): NOT moved yet (out of time in session 5);
# each is a gap to close by moving its sentences into a template, not a licence to add more.
ALLOWED = {
    ("cuts.py", "_custom_output_cut"),
    ("core.py", "summarize"),
}
TEXT_FIELDS = {"summary", "detail", "fix"}
# (wording.py's module-level helpers _out_of_place, _as_written, _code, _at ... are the shared text primitives the
# templates are built from, and the texts the passes over findings compose (other cuts, tied weights, a group):
# they are not per-cause texts and stay where the templates import them)
PRIMITIVES = {"_as_written", "_out_of_place", "py_expr", "_code", "_plain", "_at", "_code_of", "_clear_call",
              "other_cuts_text", "tied_text", "grouped_text", "explain", "hook_fix", "grad_off_text", "one_backward_fix",
              "froze_everything_text"}


def _prose(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return " " in node.value
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.Constant) and " " in v.value for v in node.values)
    return False


def _prose_in(expr: ast.AST) -> list[ast.AST]:
    """Prose literals that make up the value of ``expr`` (not those it only decides with)."""
    out = []

    def walk(n, *, arg=False):
        if _prose(n) and not (arg and isinstance(n, ast.Constant)):
            out.append(n)
            return
        if isinstance(n, (ast.Compare, ast.Subscript, ast.Lambda, ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return  # deciding, looking up, filtering
        if isinstance(n, ast.IfExp):
            walk(n.body), walk(n.orelse)
        elif isinstance(n, ast.BoolOp):
            for v in n.values:
                walk(v)
        elif isinstance(n, ast.BinOp):
            walk(n.left), walk(n.right)
        elif isinstance(n, ast.Dict):
            for v in n.values:
                walk(v)
        elif isinstance(n, (ast.Tuple, ast.List)):
            for v in n.elts:
                walk(v)
        elif isinstance(n, ast.Call):
            if isinstance(n.func, ast.Attribute):
                walk(n.func.value)  # `", ".join(...)`, `{...}.get(k, "...")`
            for a in [*n.args, *(k.value for k in n.keywords)]:
                walk(a, arg=not (isinstance(n.func, ast.Attribute) and n.func.attr == "get"))
    walk(expr)
    return out


def prose_outside_templates():
    found = set()
    for path in DECIDING:
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name in PRIMITIVES:
                continue
            for n in ast.walk(fn):
                values = []
                if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)) and n.value is not None:
                    values.append(n.value)
                if isinstance(n, ast.Call):
                    f = n.func
                    if (f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")) in ("Explanation", "replace"):
                        values += [k.value for k in n.keywords if k.arg in TEXT_FIELDS]
                        if getattr(f, "id", "") == "Explanation":
                            values += n.args[3:6]
                for v in values:
                    for lit in _prose_in(v):
                        if (path.name, fn.name, ast.unparse(lit)) not in LABELS:
                            found.add((path.name, fn.name, lit.lineno))
    return found


def test_no_prose_outside_the_templates():
    """Every summary/detail/fix sentence is built by a template, not by the rule that decided it."""
    stray = sorted(f for f in prose_outside_templates() if f[:2] not in ALLOWED)
    assert not stray, "prose built outside diagnosis/templates*.py (move it to a template per cause):\n" + "\n".join(
        f"  {m}:{line} in {fn}()" for m, fn, line in stray)


def test_allow_list_is_current():
    """An allowed function that no longer builds prose leaves the list (it cannot hide a new one there)."""
    used = {f[:2] for f in prose_outside_templates()}
    assert not (ALLOWED - used), f"no prose left in {sorted(ALLOWED - used)}: drop them from ALLOWED"


def test_the_scan_sees_prose():
    """The scan itself: a rule that assigns, concatenates or passes a sentence is caught; deciding is not."""
    src = '''
def rule(dx, q):
    if q.kind == "not prose here":
        fix = f"use {q.name} directly" if q.x else "remove the call"
        return Explanation("c", None, q.name, "a literal summary", detail=", ".join(["a", "b"]), fix=fix)
    name = {"zero": "all zeros"}.get(q.s, "something else")
    return dx.helper(q.name.split(": ", 1))
'''
    tree = ast.parse(src)
    fn = tree.body[0]
    hits = set()
    for n in ast.walk(fn):
        vals = [n.value] if isinstance(n, (ast.Assign, ast.Return)) and n.value is not None else []
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Explanation":
            vals += n.args[3:6] + [k.value for k in n.keywords if k.arg in TEXT_FIELDS]
        for v in vals:
            hits |= {lit.lineno for lit in _prose_in(v)}
    assert hits == {4, 5, 6}
