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
PURE = ["model", "errors", "explanation", "naming", "diagnosis", "verdict", "_source", "report", "graph", "render",
        "_output", "watchlog", "watchrules", "watch_render"]


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
