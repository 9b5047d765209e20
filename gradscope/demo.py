"""Built-in examples of broken (and one harmless) gradient flow, as real torch code.

Each example builds a small model, runs one training step under
:func:`gradscope.trace` and returns ``(trace, target)``: ``target`` is the tensor
whose gradient the example is about (``trace.why(target)`` explains it).
``gradscope demo`` runs them all; notebooks and tests reuse them.

>>> tr, x = detach_cut()
>>> x.grad is None, tr.why(x).cause
(True, 'detach')
"""
from __future__ import annotations

import torch
from torch import nn

import gradscope

__all__ = ["EXAMPLES", "detach_cut", "numpy_roundtrip", "no_grad_in_forward", "inplace_on_saved",
           "item_for_logging", "run_all"]


def detach_cut():
    """``y.detach()`` on the way to the loss: ``x.grad`` stays None (cause ``detach``)."""
    torch.manual_seed(0)
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    with gradscope.trace() as tr:
        y = x * 2
        z = y.detach() * w
        z.sum().backward()
    tr.why(x)  # asking once from here names the tensor "x" in later explanations
    return tr, x


class NumpyNet(nn.Module):
    """An MLP whose forward clips its activation in NumPy and comes back with ``from_numpy``."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.from_numpy(h.detach().numpy().clip(0.0, 1.0))  # the values leave autograd here
        return self.fc2(h)


def numpy_roundtrip():
    """An activation through ``.detach().numpy()`` / ``torch.from_numpy``: ``fc1`` gets no grad."""
    torch.manual_seed(0)
    model = NumpyNet()
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    with gradscope.trace() as tr:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
    return tr, model.fc1.weight


class FrozenEncoderNet(nn.Module):
    """A forward that runs its encoder inside ``torch.no_grad()`` by mistake."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        with torch.no_grad():
            h = torch.relu(self.encoder(x))
        return self.head(h)


def no_grad_in_forward():
    """``torch.no_grad()`` inside ``forward``: the encoder gets no grad (cause ``no_grad_block``)."""
    torch.manual_seed(0)
    model = FrozenEncoderNet()
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    with gradscope.trace() as tr:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
    return tr, model.encoder.weight


class InplaceNet(nn.Module):
    """Doubles a sigmoid output in place, although sigmoid saved that output for backward."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        h.mul_(2)  # modifies the tensor sigmoid's backward needs
        return self.out(h)


def inplace_on_saved():
    """An in-place write to a tensor saved for backward: backward raises; ``trace.failure`` explains it.

    The RuntimeError is caught here; the returned target is ``fc.weight``.
    """
    torch.manual_seed(0)
    model = InplaceNet()
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    tr = gradscope.trace()
    try:
        with tr:
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
    except RuntimeError:
        pass  # "one of the variables needed for gradient computation has been modified by an inplace operation"
    return tr, model.fc.weight


def item_for_logging():
    """``loss.item()`` for logging is a cut, but a harmless one: the trace calls it benign."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    history = []
    with gradscope.trace() as tr:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        history.append(loss.item())  # logging only
        loss.backward()
        opt.step()
    return tr, model[0].weight


#: (title, function) for every example, in the order ``gradscope demo`` shows them.
EXAMPLES = [
    ("1. y.detach() cuts x off from the loss", detach_cut),
    ("2. an activation takes a round trip through NumPy", numpy_roundtrip),
    ("3. torch.no_grad() inside forward", no_grad_in_forward),
    ("4. an in-place write to a tensor saved for backward", inplace_on_saved),
    ("5. loss.item() for logging is harmless", item_for_logging),
]


def run_all(out: str | None = None, console=None) -> int:
    """Run every example: heading, report (and the explanation of the one that is no problem); write example 2's
    diagram to ``out``
    (default: ``numpy_roundtrip.svg`` in a new temporary folder, never the current one) and
    say where, last.

    Returns 0 (a missing ``dot`` only downgrades the diagram to a ``.dot`` file).
    """
    import os  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    from rich.console import Console
    from rich.rule import Rule

    from .render.terminal import print_explanation, write_diagram

    con = console or Console()
    if out is None:
        out = os.path.join(tempfile.mkdtemp(prefix="gradscope-demo-"), "numpy_roundtrip.svg")
    written = None
    for title, fn in EXAMPLES:
        tr, target = fn()
        con.print(Rule(f"[bold]{title}"))
        con.print(f"[dim]gradscope.demo.{fn.__name__}()[/]")
        expl = tr.failure if tr.failure is not None else tr.why(target)
        if expl.cause == "ok":  # (a problem is in the report below: shown once, there)
            print_explanation(con, expl)
        if fn is item_for_logging:
            for cut in tr.cuts():
                where = f" at {cut.site.short}" if cut.site else ""
                con.print(f"cut {cut.op}{where}: {cut.verdict}", highlight=False)
        tr.report(console=con)
        if fn is numpy_roundtrip:
            written = write_diagram(tr, out, con, focus=target)
    if written is not None:
        con.print(Rule())
        con.print(f"gradscope demo: the diagram of example 2 is {written} (--out FILE writes it elsewhere)",
                  highlight=False, markup=False, soft_wrap=True)
    return 0


def _count_as_user_code() -> None:
    """gradscope skips frames inside its own package when it looks for the user's line;
    the examples here stand in for user code, so their lines must count."""
    from ._record import _frames

    for fn in (detach_cut, numpy_roundtrip, no_grad_in_forward, inplace_on_saved, item_for_logging,
               NumpyNet.forward, FrozenEncoderNet.forward, InplaceNet.forward):
        _frames.mark_user(fn)


_count_as_user_code()
