"""Reading the user's source with ``ast``: whole statements and the grad-mode regions around a line.

Pure (no torch): the diagnosis uses it to report a multi-line statement at its first line with its
whole text, and a no_grad / inference_mode cause at the line that opened the region (the ``with``
line or the decorator) rather than at an op inside it. Files are read through ``linecache`` (which
also holds notebook cells); a file that cannot be parsed gives no answer (callers keep the line).

>>> import linecache
>>> src = "def f(x):\\n    y = g(\\n        x,\\n    )\\n    return y\\n"
>>> linecache.cache["<demo>"] = (len(src), None, src.splitlines(True), "<demo>")
>>> statement("<demo>", 3)
(2, 'y = g(x,)')
"""
from __future__ import annotations

import ast
import linecache
import re

__all__ = ["assignment_in_class", "enclosing_condition", "region_openers", "statement"]

_TREES: dict = {}  # filename -> (source length, tree or None)

#: calls that open a region without gradient recording, as written in a `with` or a decorator
_CONTAINERS = (ast.ExceptHandler,) + ((ast.match_case,) if hasattr(ast, "match_case") else ())
_REGION = re.compile(r"(?:^|[.\s(])(no_grad|inference_mode|set_grad_enabled)\s*\(")


def _holds(clause, lineno) -> bool:
    body = getattr(clause, "body", None) or ()
    first = getattr(clause, "lineno", None) or (body[0].lineno if body else None)
    last = body[-1].end_lineno if body else None
    return first is not None and last is not None and first <= lineno <= last


def _tree(filename: str):
    lines = linecache.getlines(filename)
    if not lines:
        return None, lines
    size = sum(map(len, lines))  # (in C: a torch file read for every trace has thousands of lines)
    hit = _TREES.get(filename)
    if hit is not None and hit[0] == size:
        return hit[1], lines
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        tree = None
    _TREES[filename] = (size, tree)
    return tree, lines


_ANSWERS: dict = {}  # (function, filename, args) -> (tree, lines, its answer)


def _kept(fn, filename: str, *args):
    """``fn(tree, lines, *args)`` on ``filename``'s parsed source (None when it has none), kept while
    :func:`_tree` gives the same tree and lines: every trace's stop asks the same questions about the
    same model classes (a never-called child: where it is assigned, what skips its read), and each
    answer is a walk of a whole file's tree."""
    tree, lines = _tree(filename)
    if tree is None:
        return None
    key = (fn, filename, args)
    hit = _ANSWERS.get(key)
    if hit is not None and hit[0] is tree and hit[1] is lines:
        return hit[2]
    out = fn(tree, lines, *args)
    _ANSWERS[key] = (tree, lines, out)
    return out


def _clean(lines) -> str:
    """Statement lines as one line of code: comments dropped, whitespace collapsed."""
    out = []
    for text in lines:
        cut = text.find("  #")
        if cut < 0 and text.lstrip().startswith("#"):
            cut = 0
        out.append((text[:cut] if cut >= 0 else text).strip())
    text = re.sub(r"\s+", " ", " ".join(x for x in out if x)).strip()
    return re.sub(r"\s+([)\]}])", r"\1", re.sub(r"([(\[{])\s+", r"\1", text))


def _innermost(tree, lineno):
    """The innermost statement whose span holds ``lineno`` (decorators belong to their def's span)."""
    best = None
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _CONTAINERS) and _holds(child, lineno):
                stack.append(child)  # an `except` / `case` clause: its body holds statements
                break
            if not isinstance(child, ast.stmt):
                continue
            first = min([child.lineno] + [d.lineno for d in getattr(child, "decorator_list", ())])
            if first <= lineno <= (child.end_lineno or child.lineno):
                best = child
                stack.append(child)
                break
    return best


def statement(filename: str, lineno: int):
    """(first line, code) of the statement that holds ``filename:lineno``; None when unknown.

    For a compound statement (``if``/``with``/``for``/``def``) only its header counts (the lines
    before its body); a decorator line is its own statement."""
    tree, lines = _tree(filename)
    if tree is None or not 0 < lineno <= len(lines):
        return None
    node = _innermost(tree, lineno)
    if node is None:
        return None
    for d in getattr(node, "decorator_list", ()):
        if d.lineno <= lineno <= (d.end_lineno or d.lineno):
            return d.lineno, _clean(lines[d.lineno - 1:d.end_lineno])
    first, last = node.lineno, node.end_lineno or node.lineno
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.AST):
        last = max(first, body[0].lineno - 1)
        if lineno > last:  # a line of the body that is not a statement of its own (should not happen)
            return None
    if first == last == lineno:
        return None  # one line: nothing to change
    return first, _clean(lines[first - 1:last])


def _opens_region(expr: ast.AST, lines) -> bool:
    text = _clean(lines[expr.lineno - 1:expr.end_lineno or expr.lineno])
    m = _REGION.search(text)
    if m is None:
        return False
    if m.group(1) == "set_grad_enabled":  # set_grad_enabled(True) / (mode) opens no region for sure
        return bool(re.search(r"set_grad_enabled\s*\(\s*(False|0)\s*\)", text))
    return True


def _holding(tree, lineno: int):
    """The statements that hold line ``lineno``, outermost first (a decorated definition holds its
    decorators' lines too)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _CONTAINERS) and _holds(child, lineno):
                stack.append(child)
                break
            if not isinstance(child, ast.stmt):
                continue
            first = min([child.lineno] + [d.lineno for d in getattr(child, "decorator_list", ())])
            if not first <= lineno <= (child.end_lineno or child.lineno):
                continue
            yield child
            stack.append(child)
            break


def _header(block, lines) -> str:
    """The header of a compound statement (``with ...:``, ``if ...:``), all its lines."""
    return _clean(lines[block.lineno - 1:block.body[0].lineno - 1] or [lines[block.lineno - 1]])


def region_openers(filename: str, lineno: int):
    """The grad-disabling regions around ``filename:lineno``, innermost first: (line, code, kind) with
    kind "with" (a `with torch.no_grad():` / inference_mode / set_grad_enabled(False) block holding the
    line) or "decorator" (``@torch.no_grad()`` on the function that holds the line)."""
    tree, lines = _tree(filename)
    if tree is None or not 0 < lineno <= len(lines):
        return []
    found = []
    for child in _holding(tree, lineno):
        if isinstance(child, (ast.With, ast.AsyncWith)) and child.body and child.body[0].lineno <= lineno:
            if any(_opens_region(item.context_expr, lines) for item in child.items):
                found.append((child.lineno, _header(child, lines), "with"))
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and child.lineno <= lineno:
            for d in child.decorator_list:
                if _opens_region(d, lines):
                    found.append((d.lineno, _clean(lines[d.lineno - 1:d.end_lineno or d.lineno]), "decorator"))
                    break
    found.reverse()
    return found


def assignment_in_class(filename: str, cls_name: str, attr: str):
    """(line, code) of the first ``self.<attr> = ...`` (or ``setattr``/``add_module`` naming it) in the
    methods of class ``cls_name`` defined in ``filename``; None when not found."""
    return _kept(_assignment_in_class, filename, cls_name, attr)


def _assignment_in_class(tree, lines, cls_name, attr):
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef) or node.name != cls_name:
            continue
        for sub in ast.walk(node):
            targets = []
            if isinstance(sub, ast.Assign):
                targets = sub.targets
            elif isinstance(sub, (ast.AnnAssign, ast.AugAssign)):
                targets = [sub.target]
            flat = []
            for t in targets:  # (`self.norm1, self.norm2 = norm_layer(d), norm_layer(d)`: each element)
                flat.extend(t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])
            for t in flat:
                if isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name) \
                        and t.value.id == "self":
                    return sub.lineno, _clean(lines[sub.lineno - 1:sub.end_lineno or sub.lineno])
            if isinstance(sub, ast.Expr) and isinstance(sub.value, ast.Call):
                c = sub.value
                fn = c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "")
                if fn in ("add_module", "register_module", "setattr") and any(
                        isinstance(a, ast.Constant) and a.value == attr for a in c.args[:2]):
                    return sub.lineno, _clean(lines[sub.lineno - 1:sub.end_lineno or sub.lineno])
    return None


def decorator_of(filename: str, lineno: int, name: str):
    """(line, code) of the decorator naming ``name`` (`@once_differentiable`) on the innermost function whose body
    holds ``lineno``; None when there is none."""
    return _kept(_decorator_of, filename, lineno, name)


def _decorator_of(tree, lines, lineno, name):
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= lineno <= (
                node.end_lineno or node.lineno) and (best is None or node.lineno > best.lineno):
            best = node
    for d in (best.decorator_list if best is not None else ()):
        text = "".join(lines[d.lineno - 1:d.end_lineno or d.lineno])
        if name in text:
            return d.lineno, _clean(lines[d.lineno - 1:d.lineno])
    return None


def enclosing_condition(filename: str, lineno: int):
    """(line, code) of the innermost ``if``/``elif``/``while`` header whose branch holds ``filename:lineno``,
    within the function that holds the line; None when there is none."""
    tree, lines = _tree(filename)
    if tree is None or not 0 < lineno <= len(lines):
        return None
    found = None
    for child in _holding(tree, lineno):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found = None  # a condition outside the function is not this line's guard
        elif isinstance(child, (ast.If, ast.While)) and child.body and child.body[0].lineno <= lineno:
            found = (child.lineno, _header(child, lines))
    return found



_JUMPS = (ast.Continue, ast.Return, ast.Break)


def _jump_in(stmt):
    """A ``continue``/``return``/``break`` directly in the body of ``if`` statement ``stmt`` (or its else)."""
    if not isinstance(stmt, ast.If):
        return None
    for s in list(stmt.body) + list(stmt.orelse):
        if isinstance(s, _JUMPS):
            return s
    return None


def skip_before(filename: str, lineno: int):
    """(line, code) of what can keep ``filename:lineno`` from running, within its function: the last
    ``if ...: continue``/``return``/``break`` before it in a block that holds it (that jump's line), else
    the innermost ``if`` whose branch holds it (its header); None when neither is there."""
    return _kept(_skip_before, filename, lineno)


def _skip_before(tree, lines, lineno):
    if not 0 < lineno <= len(lines):
        return None
    chain = [c for c in _holding(tree, lineno)]
    k = max((i for i, c in enumerate(chain) if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef))), default=None)
    if k is None:
        return None
    chain = chain[k:]  # the function, then the statements inside it that hold the line
    for i in range(len(chain) - 1, 0, -1):
        parent, child = chain[i - 1], chain[i]
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None) or []
            if child in block:
                jumps = [j for j in map(_jump_in, block[:block.index(child)]) if j is not None]
                if jumps:
                    j = jumps[-1]
                    return j.lineno, _clean([lines[j.lineno - 1]])
                if isinstance(parent, ast.If) and field == "body":
                    return parent.lineno, _header(parent, lines)
                break
    return None


_INSTALLED = ("site-packages", "dist-packages")


def in_installed_package(filename: str) -> bool:
    """A file of an installed package (a training framework, a model library), not the user's own code."""
    return any(f"{sep}{d}{sep}" in filename for d in _INSTALLED for sep in ("/", "\\"))
