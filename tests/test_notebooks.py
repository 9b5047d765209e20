"""Execute the tutorial notebooks with nbclient and check what they show."""
from __future__ import annotations

import re

import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

pytestmark = pytest.mark.notebook

REPO = Path(__file__).resolve().parents[1]
NB_DIR = REPO / "notebooks"
sys.path.insert(0, str(NB_DIR))
import build_notebooks  # noqa: E402

_cache: dict = {}


def executed(name: str):
    """The notebook, freshly executed (once per test session)."""
    if name not in _cache:
        nb = nbformat.read(NB_DIR / name, as_version=4)
        for c in nb.cells:
            if c.cell_type == "code":
                c.outputs, c.execution_count = [], None
        _cache[name] = build_notebooks.execute(nb, timeout=120)
    return _cache[name]


def cell(nb, tag: str):
    [c] = [c for c in nb.cells if tag in c.metadata.get("tags", ())]
    return c


def text(c) -> str:
    """Everything a cell printed or displayed as text."""
    parts = []
    for o in c.outputs:
        if o.output_type == "stream":
            parts.append(o.text)
        elif o.output_type in ("execute_result", "display_data"):
            parts.append(str(o.data.get("text/plain", "")))
        elif o.output_type == "error":
            parts.append(f"{o.ename}: {o.evalue}")
    return "\n".join(parts)


def line_in(c, needle: str) -> int:
    return next(i for i, line in enumerate(c.source.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("name", list(build_notebooks.NOTEBOOKS))
def test_committed_with_outputs_and_in_sync(name):
    """The committed notebooks were built by build_notebooks.py and executed without errors."""
    nb = nbformat.read(NB_DIR / name, as_version=4)
    nbformat.validate(nb)
    fresh = build_notebooks.build(name)
    assert [c.source for c in nb.cells] == [c.source for c in fresh.cells], "regenerate: python notebooks/build_notebooks.py"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "notebook committed without outputs"
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]


def test_quickstart():
    nb = executed("01_quickstart.ipynb")
    model_cell = nb.cells[3]
    bug = line_in(model_cell, "h = h.detach()")
    report = cell(nb, "report").outputs[0]
    assert "text/html" in report.data and "fc1.weight" in report.data["text/html"]
    why = text(cell(nb, "why"))
    assert "fc1.weight.grad is None" in why and "cause: detach" in why
    assert re.search(rf"In\[\d+\]:{bug} in Net.forward", why) and "h = h.detach()" in why  # a cell, by number
    assert f"harmful  detach   line {bug}: h = h.detach()" in text(cell(nb, "cuts"))
    assert "1 gradient problem" in text(cell(nb, "check-fails"))
    assert text(cell(nb, "fixed")).startswith("OK")
    magic = cell(nb, "magic")
    assert "w.grad is None" in text(magic)
    assert f"detach at line {line_in(magic, 'doubled.detach()') - 1} of the cell" in text(cell(nb, "magic-trace"))
    assert "fc1.weight.grad is None" in text(cell(nb, "load"))
    flow = text(cell(nb, "assert-flow"))
    assert "2 of 4 trainable parameters of Net" in flow and "cause: detach" in flow


BUGS = [  # tag, cause, the buggy line (None: the site is not in that cell)
    ("detach", "detach", ".detach()"),
    ("numpy", "numpy_roundtrip", "torch.from_numpy"),
    ("item", "item_roundtrip", "loss.item()"),
    ("no_grad", "no_grad_block", "with torch.no_grad():"),  # (the region opener; the op inside is in its stack)
    ("argmax", "nondifferentiable_op", "argmax("),
    ("inplace", "inplace_saved_tensor", "h.mul_(2)"),
    ("frozen", "frozen_param", None),
    ("non_leaf", "non_leaf_no_retain_grad", "hidden = x @ w"),
]


@pytest.mark.parametrize("tag,cause,needle", BUGS, ids=[b[0] for b in BUGS])
def test_why_is_my_grad_none(tag, cause, needle):
    nb = executed("02_why_is_my_grad_none.ipynb")
    c = cell(nb, tag)
    out = text(c)
    assert f"cause: {cause}" in out, out
    if needle:
        assert re.search(rf"In\[\d+\]:{line_in(c, needle)} in", out), out  # names the buggy line of that cell
    fixed = text(cell(nb, tag + "-fixed"))
    assert "OK" in fixed or "is set: True" in fixed, fixed  # the fixed version passes tr.check()
    assert not [o for o in cell(nb, tag + "-fixed").outputs if o.output_type == "error"]


def test_diagrams():
    nb = executed("03_diagrams.ipynb")
    small = cell(nb, "small-graph").outputs[0]
    assert "fc1.weight" in small.data["text/plain"]
    if "image/svg+xml" in small.data:  # dot installed
        assert "<svg" in small.data["image/svg+xml"]
    assert "focus: fc1.weight" in text(cell(nb, "focus"))
    assert "blocks.0.fc.weight.grad is None" in text(cell(nb, "deep"))
    assert "collapsed to module depth 1" in text(cell(nb, "depth"))
    assert "blocks.0-7 (x8)" in text(cell(nb, "collapse"))
    export = text(cell(nb, "export"))
    assert "small.dot:" in export
    assert "digraph gradscope" in text(cell(nb, "dot-source"))


@pytest.mark.parametrize("name", list(build_notebooks.NOTEBOOKS))
def test_text_plain_outputs_have_no_ansi_escape_codes(name):
    """Jupyter shows text/plain where HTML is not rendered (nbviewer's text view, VS Code's
    plain output, `jupyter nbconvert --to markdown`): terminal colour codes there are noise.
    Checked on the committed notebook and on a fresh execution."""
    for nb in (nbformat.read(NB_DIR / name, as_version=4), executed(name)):
        plain = [str(o.data.get("text/plain", "")) for c in nb.cells if c.cell_type == "code"
                 for o in c.outputs if o.output_type in ("execute_result", "display_data")]
        assert not [t for t in plain if "\x1b[" in t], [t[:80] for t in plain if "\x1b[" in t]


def test_a_cell_magic_names_its_own_cell():
    """`%%gradscope` in the third cell: the cut's site is `In[3]` (the number the notebook shows), as a plain traced
    cell's would be, not the execution counter IPython has already moved on."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext gradscope\nimport torch, torch.nn as nn"),
                nbformat.v4.new_code_cell("net = nn.Linear(3, 1)\nx = torch.randn(2, 3)"),
                nbformat.v4.new_code_cell("%%gradscope --quiet\nh = net(x).detach()\nw = torch.ones(1, requires_grad=True)\n"
                                          "(h * w).sum().backward()"),
                nbformat.v4.new_code_cell("e = _gradscope_trace.why(net.weight)\nprint(e.site.short)\nprint(e.summary)")]
    out = build_notebooks.execute(nb, timeout=120)
    assert [c.execution_count for c in out.cells] == [1, 2, 3, 4]
    got = text(out.cells[3])
    assert got.splitlines()[0] == "In[3]:1", got
    assert "detached at In[3]:1 (`h = net(x).detach()`)" in got, got
