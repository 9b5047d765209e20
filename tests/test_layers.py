"""The package's layers import one way, and the pure layers never import torch.

Two checks: a static one over the source (fast, needs nothing installed) and the
import-linter contracts in pyproject.toml (also run by .ci/run), which see indirect imports.
"""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "gradscope"

#: modules that hold plain data, rules or renderers: they must run without torch
PURE = ["core", "errors", "diagnosis", "verdict", "graph", "render", "watch/log", "watch/rules"]


def imported_roots(source: str) -> set[str]:
    """Top-level names of every absolute import in ``source``, function-level ones included."""
    roots = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_the_checker_sees_a_planted_torch_import():
    planted = "import os\n\ndef f():\n    import torch.nn as nn\n    return nn\n"
    assert "torch" in imported_roots(planted)
    assert "torch" in imported_roots("from torch.utils import weak\n")
    assert "torch" not in imported_roots("from .model import Site\n")


@pytest.mark.parametrize("name", PURE)
def test_pure_modules_do_not_import_torch(name):
    path = PKG / f"{name}.py"
    if not path.exists():  # a module turned into a package
        files = sorted((PKG / name).rglob("*.py"))
        assert files, f"gradscope.{name} is neither a module nor a package"
    else:
        files = [path]
    for f in files:
        assert not imported_roots(f.read_text()) & {"torch", "numpy"}, f


def test_show_a_saved_trace_without_torch(tmp_path):
    """`gradscope show trace.json` reads plain JSON: the pure layers load it with torch blocked."""
    import torch

    import gradscope

    w = torch.ones(3, requires_grad=True)
    with gradscope.trace() as tr:
        (w.detach() * 2).sum()
    path = tmp_path / "t.json"
    tr.save(path)
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.') or name == 'numpy':\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from gradscope.cli import main\n"
        f"sys.exit(main(['show', {str(path)!r}, '--why', 'w']))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "torch" not in r.stderr


@pytest.mark.skipif(shutil.which("lint-imports") is None and not (Path(sys.executable).parent / "lint-imports").exists(),
                    reason="import-linter not installed")
def test_import_contracts_hold():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    r = subprocess.run([exe, "--no-cache"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:]
    assert "broken" not in r.stdout.lower().split("contracts:")[-1] or " 0 broken" in r.stdout


# --- private torch access only through gradscope/_record/_compat.py -----------------------------
#: private attributes that are not torch's (the standard library's)
NOT_TORCH = ("_getframe", "_make", "_replace", "_fields", "_asdict")  # sys._getframe, named tuples' API


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _torch_private_names() -> set:
    """Private attribute names of the torch objects gradscope handles: classes, instances, modules."""
    import importlib

    import torch
    import torch.nn as nn

    lin = nn.Linear(1, 1)
    t = torch.ones(1, requires_grad=True)
    mods = [importlib.import_module(f"torch.{m}") for m in ("overrides", "nn.modules.module", "optim.optimizer",
                                                            "utils.hooks", "fx", "autograd.graph")]
    objs = [torch, *mods, torch.Tensor,
            torch._C.TensorBase, nn.Module, nn.Parameter, lin, torch.optim.SGD(lin.parameters()), (t * 2).grad_fn,
            torch.optim.Optimizer, torch.fx.GraphModule]
    names = set()
    for o in objs:
        names |= {n for n in dir(o) if _private(n)}
        names |= {n for n in getattr(o, "__dict__", {}) if _private(n)}
    return names


def _owned_names(sources: list) -> set:
    """Every name gradscope itself binds (definitions, assignments, attributes it stores, slots, aliases)."""
    owned = set()
    for src in sources:
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                owned.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                owned.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                owned.add(node.attr)
            elif isinstance(node, ast.arg):
                owned.add(node.arg)
            elif isinstance(node, ast.alias):
                owned.add(node.asname or node.name.split(".")[0])
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets):
                owned.update(c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return owned


def private_torch_uses(source: str, owned: set, torch_private: set, direct: tuple = ()) -> list:
    """(line, text) of each private torch access in ``source``: an import of a private torch module or
    name, an underscore attribute reached from ``torch``/``nn``, an underscore attribute gradscope does not
    define itself or that torch objects have (unless read on ``self``), the same spelled as a string
    to getattr/hasattr."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "torch":
            if any(_private(s) for s in node.module.split(".")) or any(_private(a.name) for a in node.names):
                hits.append((node.lineno, f"from {node.module} import ..."))
        elif isinstance(node, ast.Import):
            hits += [(node.lineno, f"import {a.name}") for a in node.names
                     if a.name.split(".")[0] == "torch" and any(_private(s) for s in a.name.split("."))]
        elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in NOT_TORCH + direct:
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            root = root.id if isinstance(root, ast.Name) else None
            on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if root in ("torch", "nn") or node.attr not in owned or (node.attr in torch_private and not on_self):
                hits.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) \
                and _private(node.args[1].value) and (node.args[1].value not in owned or node.args[1].value in torch_private):
            hits.append((node.lineno, ast.unparse(node)))
    return hits


def test_the_private_access_checker_sees_planted_uses():
    torch_private = _torch_private_names()
    planted = ("import torch\nfrom torch.utils._python_dispatch import _disable_current_modes\n"
               "def f(self, t, m, node):\n"
               "    a = t._version\n    b = torch._C._get_tracing_state()\n    c = m._modules\n"
               "    d = getattr(m, '_forward_hooks', {})\n    e = node._sequence_nr()\n    self._ids = {}\n    g = self._ids\n"
               "    h = sys._getframe(1)\n    k = ('_backward_hooks',)\n")  # (a string alone is not an access)
    owned = _owned_names([planted])
    found = {text for _, text in private_torch_uses(planted, owned, torch_private)}
    assert found == {"from torch.utils._python_dispatch import ...", "t._version", "torch._C._get_tracing_state",
                     "torch._C", "m._modules", "getattr(m, '_forward_hooks', {})", "node._sequence_nr"}, found


def test_private_torch_access_only_in_the_compat_module():
    """Every private torch access (mode stacks, _version, _base, hook dicts, node names, torch._C, ...)
    goes through gradscope/_record/_compat.py, where each says what it relies on."""
    files = sorted(PKG.rglob("*.py"))
    sources = {f: f.read_text() for f in files}
    owned = _owned_names(list(sources.values()))
    torch_private = _torch_private_names()
    from gradscope._record import _compat

    # (the hot path's direct reads: only the attributes and modules _compat lists, with why)
    direct = {f: tuple(_compat.DIRECT_TENSOR_ATTRS) if f.parent.name == "_record" and f.name in _compat.DIRECT_ATTR_MODULES
              else () for f in files}
    bad = [f"{f.relative_to(ROOT)}:{ln}: {text}" for f, src in sources.items() if f.name != "_compat.py"
           for ln, text in private_torch_uses(src, owned, torch_private, direct[f])]
    assert not bad, "private torch access outside _record/_compat.py:\n" + "\n".join(bad)
