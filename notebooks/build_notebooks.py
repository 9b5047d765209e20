"""Generate the tutorial notebooks and execute them, so they are committed with outputs.

    python notebooks/build_notebooks.py            # write + execute all three
    python notebooks/build_notebooks.py --no-run   # write only (no outputs)

Code cells carry tags (``metadata.tags``) that ``tests/test_notebooks.py`` uses to
find the outputs it checks.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def md(text: str):
    return new_markdown_cell(text.strip())


def code(text: str, tag: str | None = None):
    c = new_code_cell(text.strip())
    if tag:
        c.metadata["tags"] = [tag]
    return c


# --------------------------------------------------------------------------- 01 quickstart
def quickstart():
    return [
        md("""
# gradscope quick start

gradscope records a training step while it runs and tells you **which line cut your gradient
flow**, why, and how to fix it. Wrap the step in `with gradscope.trace() as tr:`, then

* look at the report (`tr`, or `tr.report()` in a terminal),
* ask `tr.why(tensor)` why a gradient is `None` or zero,
* read `tr.failure` when `backward()` raised,
* call `tr.check()` in tests.
"""),
        code("""
import torch
import torch.nn.functional as F
from torch import nn

import gradscope

torch.manual_seed(0)
print("gradscope", gradscope.__version__, "| torch", torch.__version__)
"""),
        md("""
## A model with a bug

`fc1` never learns: its output is detached before it reaches `fc2`. Nothing raises; the loss
goes down a little (thanks to `fc2`) and the bug goes unnoticed.
"""),
        code("""
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = h.detach()  # the bug
        return self.fc2(h)


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 4), torch.randn(32, 1)
"""),
        md("## Trace one training step\n\nThe trace's report lists every parameter's gradient, the cuts, and an explanation per problem."),
        code("""
with gradscope.trace() as tr:
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()

tr
""", "report"),
        md("## Ask why\n\n`tr.why()` takes the tensor (or its name, such as `\"fc1.weight\"`) and returns an `Explanation`: cause, line, path to the loss, and fix."),
        code("""
e = tr.why(model.fc1.weight)
print(e)
""", "why"),
        code("""
print("cause:", e.cause)
print("line: ", e.site.short, "->", e.site.code)
print("fix:  ", e.fix)
""", "why-fields"),
        md("Every cut the step made, with the diagnosis's verdict (`harmful` starves something; `benign` does not, such as `loss.item()` for logging):"),
        code("""
for cut in tr.cuts():
    print(f"{cut.verdict:8} {cut.cut:8} line {cut.site.lineno}: {cut.site.code}")
""", "cuts"),
        md("`tr.check()` turns all of this into an assertion for tests:"),
        code("""
try:
    tr.check()
except AssertionError as err:
    print(str(err).splitlines()[0])
""", "check-fails"),
        md("## The fix\n\nUse `h` itself. The same trace now passes `check()`:"),
        code("""
class FixedNet(Net):
    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


model = FixedNet()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with gradscope.trace() as tr:
    opt.zero_grad()
    F.mse_loss(model(x), y).backward()
    opt.step()

tr.check()
print(tr.summary().verdict)
""", "fixed"),
        md("""
## In a notebook: the `%%gradscope` cell magic

`%load_ext gradscope` registers `%%gradscope`: it traces the cell, shows the report, explains
each `--why NAME`, draws the diagram with `--graph`, and keeps the trace in `_gradscope_trace`
(or `--name VAR`).
"""),
        code("%load_ext gradscope"),
        code("""
%%gradscope --why w --name magic_trace --quiet
w = torch.randn(3, requires_grad=True)
v = torch.randn(3, requires_grad=True)
doubled = w * 2
out = doubled.detach() * v
out.sum().backward()
""", "magic"),
        code("""
print(magic_trace.why(w).cause, "at line", magic_trace.why(w).site.lineno, "of the cell")
""", "magic-trace"),
        md("""
## Save a trace, explain it later

`tr.save()` writes JSON (never pickle); `gradscope.load()` reads it back, and `why()` works by
name without torch tensors around. On the command line: `gradscope run --save t.json train.py`,
then `gradscope show t.json --why fc1.weight`.
"""),
        code("""
import os
import tempfile

path = os.path.join(tempfile.mkdtemp(), "step.json")
model = Net()
with gradscope.trace() as tr:
    F.mse_loss(model(x), y).backward()
tr.save(path)

offline = gradscope.load(path)
print(offline.why("fc1.weight").summary)
""", "load"),
        md("""
## In tests

`gradscope.testing.assert_gradients_flow(model, step)` runs `step()` under a trace and fails with
the explanations when a trainable parameter gets no (or a zero, or a non-finite) gradient. With
`pip install gradscope`, pytest also gets a `gradscope_trace` fixture whose report is added to
failing tests' output.
"""),
        code("""
from gradscope.testing import assert_gradients_flow

model = Net()
try:
    assert_gradients_flow(model, lambda: F.mse_loss(model(x), y).backward())
except AssertionError as err:
    print(err)
""", "assert-flow"),
        md("""
## From the command line

```bash
gradscope run train.py --epochs 1        # run a script under a trace, print the report
gradscope run --why fc1.weight --out flow.svg train.py
gradscope run --json train.py > report.json
gradscope demo                            # the built-in examples
gradscope doctor                          # is everything installed?
```
"""),
    ]


# --------------------------------------------------------------------------- 02 bugs
BUGS_SETUP = """
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import gradscope

torch.manual_seed(0)
x, y = torch.randn(32, 4), torch.randn(32, 1)


class MLP(nn.Module):
    \"\"\"fc1 -> relu -> fc2; each bug below overrides `forward`.\"\"\"

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def step(model):
    \"\"\"One traced training step: forward, MSE loss, backward, SGD step.\"\"\"
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return tr
"""


def bug(title: str, story: str, buggy: str, tag: str, fix_text: str, fixed: str):
    return [
        md(f"## {title}\n\n{story.strip()}"),
        code(buggy, tag),
        md(f"**Fix.** {fix_text.strip()}"),
        code(fixed, tag + "-fixed"),
    ]


def bugs():
    cells = [
        md("""
# Why is my grad `None`?

The classic ways a gradient goes missing, one by one. Each section runs the buggy code under
`gradscope.trace()`, prints gradscope's explanation (cause, line, path to the loss, fix), then
runs the fixed version and shows that it passes `tr.check()`.
"""),
        code(BUGS_SETUP),
    ]
    cells += bug(
        "1. `.detach()`",
        "`detach()` returns the same values without autograd history: everything before it gets no gradient.",
        """
class DetachNet(MLP):
    def forward(self, x):
        h = torch.relu(self.fc1(x)).detach()
        return self.fc2(h)


model = DetachNet()
tr = step(model)
print(tr.why(model.fc1.weight))
""", "detach",
        "Drop the `.detach()` (keep it only for values that must not train anything, such as targets).",
        """
model = MLP()
tr = step(model)
tr.check()
print(tr.summary().verdict)
""")
    cells += bug(
        "2. A round trip through NumPy",
        "NumPy arrays carry no history; `torch.from_numpy` makes a constant.",
        """
class NumpyNet(MLP):
    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.from_numpy(np.tanh(h.detach().numpy()))
        return self.fc2(h)


model = NumpyNet()
tr = step(model)
print(tr.why(model.fc1.weight))
""", "numpy",
        "Use the torch twin of the NumPy function (`torch.tanh`).",
        """
class TorchNet(MLP):
    def forward(self, x):
        return self.fc2(torch.tanh(torch.relu(self.fc1(x))))


model = TorchNet()
tr = step(model)
tr.check()
print(tr.summary().verdict)
""")
    cells += bug(
        "3. `.item()` turned the loss into a number",
        "Rebuilding a tensor from `loss.item()` (here with `torch.tensor(..., requires_grad=True)` to make "
        "`backward()` stop complaining) gives a fresh leaf: backward reaches nothing in the model.",
        """
model = MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with gradscope.trace() as tr:
    loss = F.mse_loss(model(x), y)
    loss = torch.tensor(loss.item(), requires_grad=True)
    loss.backward()
print(tr.why(model.fc1.weight))
""", "item",
        "Call `backward()` on the loss tensor itself. `.item()` for *logging* is fine: gradscope calls that cut benign.",
        """
model = MLP()
history = []
with gradscope.trace() as tr:
    loss = F.mse_loss(model(x), y)
    history.append(loss.item())  # logging only
    loss.backward()
tr.check()
print(tr.summary().verdict)
print([(c.op, c.verdict) for c in tr.cuts()])
""")
    cells += bug(
        "4. `torch.no_grad()` in the forward",
        "A `no_grad` block meant for evaluation wraps part of the training forward.",
        """
class NoGradNet(MLP):
    def forward(self, x):
        with torch.no_grad():
            h = torch.relu(self.fc1(x))
        return self.fc2(h)


model = NoGradNet()
tr = step(model)
print(tr.why(model.fc1.weight))
""", "no_grad",
        "Move the computation out of the `no_grad` block.",
        """
model = MLP()
tr = step(model)
tr.check()
print(tr.summary().verdict)
""")
    cells += bug(
        "5. `argmax` has no gradient",
        "A hard choice (`argmax`, comparisons, `round`) is piecewise constant: no gradient flows back through it.",
        """
class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(4, 3)
        self.experts = nn.Linear(4, 3)

    def forward(self, x):
        choice = self.gate(x).argmax(dim=-1, keepdim=True)
        return self.experts(x).gather(1, choice)


model = Gate()
tr = step(model)
print(tr.why(model.gate.weight))
""", "argmax",
        "Use a soft choice (softmax weights) so the gate gets a gradient.",
        """
class SoftGate(Gate):
    def forward(self, x):
        weights = torch.softmax(self.gate(x), dim=-1)
        return (weights * self.experts(x)).sum(dim=-1, keepdim=True)


model = SoftGate()
tr = step(model)
tr.check()
print(tr.summary().verdict)
""")
    cells += bug(
        "6. An in-place write to a tensor saved for backward",
        "`sigmoid` saves its output for backward; `h.mul_(2)` changes it afterwards, so `backward()` "
        "raises. PyTorch's message names the sigmoid; gradscope names the in-place line. The error is "
        "caught here and the diagnosis is in `tr.failure`.",
        """
class InplaceNet(MLP):
    def forward(self, x):
        h = torch.sigmoid(self.fc1(x))
        h.mul_(2)
        return self.fc2(h)


model = InplaceNet()
tr = gradscope.trace()
try:
    with tr:
        F.mse_loss(model(x), y).backward()
except RuntimeError as err:
    print("RuntimeError:", str(err)[:100], "...\\n")
print(tr.failure)
""", "inplace",
        "Write out of place: `h = h * 2`.",
        """
class OutOfPlaceNet(MLP):
    def forward(self, x):
        h = torch.sigmoid(self.fc1(x))
        h = h * 2
        return self.fc2(h)


model = OutOfPlaceNet()
tr = step(model)
tr.check()
print(tr.summary().verdict)
""")
    cells += bug(
        "7. A frozen parameter",
        "Freezing a layer (`requires_grad = False`) for a warm-up phase and forgetting to unfreeze it: "
        "its `.grad` stays `None`.",
        """
model = MLP()
for p in model.fc1.parameters():
    p.requires_grad = False  # warm-up: train fc2 only ... and never unfrozen

tr = step(model)
print(tr.why(model.fc1.weight))
""", "frozen",
        "Unfreeze it when the warm-up ends (`requires_grad_(True)`).",
        """
model.fc1.requires_grad_(True)
tr = step(model)
tr.check()
print(tr.summary().verdict)
""")
    cells += bug(
        "8. `.grad` of a tensor that is not a leaf",
        "Gradients flow *through* intermediate tensors, but PyTorch only stores `.grad` on leaves.",
        """
w = torch.randn(4, 3, requires_grad=True)
with gradscope.trace() as tr:
    hidden = x @ w
    hidden.sum().backward()
print("hidden.grad:", hidden.grad)
print(tr.why(hidden))
""", "non_leaf",
        "Call `retain_grad()` on it before backward (or use `torch.autograd.grad(loss, hidden)`).",
        """
with gradscope.trace() as tr:
    hidden = x @ w
    hidden.retain_grad()
    hidden.sum().backward()
tr.check()
print("hidden.grad is set:", hidden.grad is not None, "| w.grad is set:", w.grad is not None)
""")
    return cells


# --------------------------------------------------------------------------- 03 diagrams
def diagrams():
    return [
        md("""
# Diagrams

`tr.graph()` draws the traced step: tensors and ops along the data flow, **red** where a cut
starves a parameter, grey for harmless cuts, parameters coloured by their gradient. In Jupyter
the diagram shows inline (SVG); `.render(path)` writes `.svg`, `.png`, `.pdf` or `.dot` (the
format comes from the extension; all but `.dot` need Graphviz's `dot`).
"""),
        code("""
import os
import shutil
import tempfile

import torch
import torch.nn.functional as F
from torch import nn

import gradscope

torch.manual_seed(0)
out_dir = tempfile.mkdtemp()
print("dot:", shutil.which("dot") or "not installed (diagrams fall back to .dot source)")
"""),
        md("## A small model with a NumPy round trip"),
        code("""
from gradscope.demo import numpy_roundtrip

tr, fc1_weight = numpy_roundtrip()
g = tr.graph()
g
""", "small-graph"),
        code("""
print(repr(g))
print(g.describe())
""", "describe"),
        md("## Focus on one tensor\n\n`focus=` keeps only the paths between that tensor and the loss, across the cut that starves it."),
        code("""
focused = tr.graph(focus="fc1.weight")
print(repr(focused))
focused
""", "focus"),
        md("""
## Big models: collapse and fold

A deeper model: twelve residual blocks, and block 8 detaches its input by mistake, which starves
blocks 0-7. `depth=1` draws each top-level module as one box; `collapse=True` folds repeated
blocks (`blocks.0-11 (x12)`) and keeps the problem's path visible.
"""),
        code("""
class Block(nn.Module):
    def __init__(self, i):
        super().__init__()
        self.i = i
        self.fc = nn.Linear(16, 16)

    def forward(self, h):
        if self.i == 8:
            h = h.detach()  # the bug
        return h + torch.relu(self.fc(h))


class Deep(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 16)
        self.blocks = nn.ModuleList(Block(i) for i in range(12))
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h)


deep = Deep()
with gradscope.trace() as deep_tr:
    F.mse_loss(deep(torch.randn(8, 4)), torch.randn(8, 1)).backward()

print(deep_tr.why(deep.blocks[0].fc.weight).summary)
full = deep_tr.graph(collapse=False)
print("full:     ", repr(full))
""", "deep"),
        code("""
by_module = deep_tr.graph(depth=1)
print("depth=1:  ", repr(by_module))
by_module
""", "depth"),
        code("""
folded = deep_tr.graph(collapse=True)
print("collapse: ", repr(folded), folded.folded)
folded
""", "collapse"),
        md("## Export\n\nThe format comes from the file extension."),
        code("""
for name in ("small.svg", "small.png", "small.dot"):
    path = os.path.join(out_dir, name)
    try:
        written = g.render(path)
        print(f"{name}: {os.path.getsize(written)} bytes")
    except gradscope.DotNotFoundError as err:
        print(err)
""", "export"),
        md("The `.dot` file is plain Graphviz source: render it elsewhere with `dot -Tsvg small.dot -o small.svg`."),
        code("""
print(open(os.path.join(out_dir, "small.dot")).read()[:240], "...")
""", "dot-source"),
    ]


NOTEBOOKS = {
    "01_quickstart.ipynb": quickstart,
    "02_why_is_my_grad_none.ipynb": bugs,
    "03_diagrams.ipynb": diagrams,
}


def build(name: str) -> nbformat.NotebookNode:
    nb = new_notebook(cells=NOTEBOOKS[name]())
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for i, c in enumerate(nb.cells):  # stable ids: clean diffs when regenerated
        c["id"] = f"{Path(name).stem[:2]}-{i:02d}"
    return nb


def execute(nb: nbformat.NotebookNode, timeout: int = 300) -> nbformat.NotebookNode:
    """Run ``nb`` in a fresh python3 kernel (this interpreter) with the repo importable."""
    from nbclient import NotebookClient

    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    os.environ.setdefault("COLUMNS", "100")
    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(HERE)}}).execute()
    return nb


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-run", action="store_true", help="write the notebooks without executing them")
    ap.add_argument("names", nargs="*", help=f"notebooks to build (default: all of {', '.join(NOTEBOOKS)})")
    args = ap.parse_args(argv)
    for name in args.names or NOTEBOOKS:
        nb = build(name)
        if not args.no_run:
            execute(nb)
        nbformat.validate(nb)
        nbformat.write(nb, HERE / name)
        print(f"wrote {HERE / name}{'' if args.no_run else ' (executed)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
