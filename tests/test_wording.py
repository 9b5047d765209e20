"""Wording apart from deciding: no prose is built outside the template modules of gradscope.diagnosis.

The rule modules decide (cause, site, evidence, extra sites) and call a template (templates*.py) for the
summary, detail and fix. This scans their source (AST, no torch) for prose literals: a string literal or
f-string with a space in its literal text, put together into a value (assigned, concatenated, chosen by a
conditional, joined) or passed as an Explanation's summary/detail/fix. Literals used to decide (compared,
looked up, split on, passed as a plain argument) are not prose.

And the fix templates are built from the user's code: a literal code span in a fix names only torch's API,
Python's keywords and builtins and an idiom's generic names, never a scenario's variables or values."""
from __future__ import annotations

import ast
import pathlib
import re

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
    ("rules_failure.py", "anomaly_nonfinite", "'the loss'"),
}
# Functions that still build their text inline (module, function): NOT moved yet (out of time in session 5);
# each is a gap to close by moving its sentences into a template, not a licence to add more.
ALLOWED = {
    ("cuts.py", "custom_output_cut"),
    ("core.py", "summarize"),
}
TEXT_FIELDS = {"summary", "detail", "fix"}
# (wording.py's module-level helpers _out_of_place, _as_written, _code, _at ... are the shared text primitives the
# templates are built from, and the texts the passes over findings compose (other cuts, tied weights, a group):
# they are not per-cause texts and stay where the templates import them)
PRIMITIVES = {"_as_written", "_out_of_place", "py_expr", "_code", "_plain", "_at", "_code_of", "_clear_call",
              "other_cuts_text", "tied_text", "said", "explain", "hook_fix", "grad_off_text", "one_backward_fix",
              "froze_everything_text",
              "__new__", "about"}  # (Said's: a sentence joined from its subject and reason, or said of a group)


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


# --- fix templates are built from the user's code, never from a scenario's names -------------------------------------
#: names a literal code span in a fix template may use: torch's API roots, Python keywords and builtins, and the
#: generic loop/placeholder names of an idiom (a method after a dot is API and always allowed)
_TEMPLATE_NAMES = {"torch", "nn", "F", "np", "for", "in", "with", "if", "else", "not", "and", "or", "None", "True", "False",
                   "lambda", "zip", "sum", "p", "g", "n", "grads", "params", "mean", "std", "soft", "hard", "lr",
                   # gradscope's own command line (`gradscope run --eager-compile`)
                   "gradscope", "run", "eager", "compile"}


def _literal_text(node):
    """The literal parts of a string expression; f-string placeholders become NUL (user text goes there)."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "\x00" for v in node.values)
    if isinstance(node, ast.BinOp):
        return _literal_text(node.left) + _literal_text(node.right)
    if isinstance(node, ast.IfExp):
        return _literal_text(node.body) + "\x00" + _literal_text(node.orelse)
    if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
        return _literal_text(node.elts[-1])  # (head, why, fix) tuples: the fix
    if isinstance(node, ast.Call) and node.args:
        return "\x00".join(_literal_text(a) for a in node.args)
    return "\x00"


def _fix_templates():
    import ast
    import importlib
    import inspect
    import pkgutil

    from gradscope import diagnosis

    # every module of the diagnosis package (the wording and the rules alike)
    mods = [importlib.import_module(f"gradscope.diagnosis.{m.name}") for m in pkgutil.iter_modules(diagnosis.__path__)
            if m.name != "__main__"]
    assert {"wording", "templates", "rules_none", "rules_failure", "cuts"} <= {m.__name__.rsplit(".", 1)[-1] for m in mods}
    out = []
    for node in (n for m in [diagnosis, *mods] for n in ast.walk(ast.parse(inspect.getsource(m)))):
        if isinstance(node, ast.keyword) and node.arg == "fix":
            out.append((node.value.lineno, _literal_text(node.value)))
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "fix" for t in node.targets):
            out.append((node.lineno, _literal_text(node.value)))
        elif isinstance(node, ast.FunctionDef) and node.name in ("_zero_fix", "_out_of_place"):
            out += [(r.lineno, _literal_text(r.value)) for r in ast.walk(node) if isinstance(r, ast.Return) and r.value]
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "texts" for t in node.targets):
            out += [(v.lineno, _literal_text(v)) for v in getattr(node.value, "values", ())]
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 3:
            # a template returning (summary, detail, fix) / (head, detail, fix): its fix
            out.append((node.value.elts[2].lineno, _literal_text(node.value.elts[2])))
    return out


def test_fix_templates_name_no_scenario_variables_or_values():
    found = _fix_templates()
    assert len(found) > 40  # (the scan reaches the templates)
    bad = []
    for lineno, text in found:
        for span in re.findall(r"`([^`]*)`", text):
            if "\x00" in span:
                continue  # filled from the user's code
            code = re.sub(r"<[^>]*>", "", span)  # <state>, <module>: placeholders
            names = {m.group(1) for m in re.finditer(r"(?<![.\w])([A-Za-z_]\w*)", code)}
            strays = names - _TEMPLATE_NAMES
            numbers = re.findall(r"(?<![\w.])(\d+\.\d+|[2-9]\d*)(?![\w.])", code)
            if strays or numbers or re.search(r"['\"]", code):
                bad.append((lineno, span, sorted(strays), numbers))
    assert not bad, bad


def test_a_fix_assigns_only_to_what_the_user_can_assign_to():
    from gradscope.diagnosis.wording import assign_target

    assert assign_target("h") == "h" and assign_target("self.hidden") == "self.hidden"
    assert assign_target("states[-1]") == "states[-1]" and assign_target("model.cells[0].h") == "model.cells[0].h"
    assert assign_target("torch.tanh(lin(states[-1]))") == "<state>"  # (an expression: no assignment target)
    assert assign_target("t16") == "<state>"  # (a name only the trace has)
    assert assign_target("t16", "<h>") == "<h>"
