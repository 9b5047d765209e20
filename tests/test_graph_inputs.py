"""The user's data loading in a collapsed diagram: the ops outside the model that no gradient
reaches (sampling indices, slicing a token array, stacking a batch) are one node named after the
tensors they hand to the model, not a row of ``input t641``-style nodes beside it; a group with a
cut among it stays drawn op by op; the model's own data-only ops (``arange`` in a forward) stay.
"""
from __future__ import annotations

import re
import shutil
import struct
import subprocess

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gradscope
from _programs import PYTHON, program_path, subprocess_env

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz `dot` binary not installed")


class TinyLM(nn.Module):
    def __init__(self, vocab=32, d=8, block=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block, d)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        pos = torch.arange(idx.size(1))  # the model's own data-only op
        return self.head(self.wte(idx) + self.wpe(pos))


def _step(with_cut: bool = False, soft_update: bool = False):
    torch.manual_seed(0)
    model, target = TinyLM(), TinyLM()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    tokens = torch.randint(0, 32, (200,))
    with gradscope.trace() as tr:
        ix = torch.randint(len(tokens) - 9, (4,))
        xb = torch.stack([tokens[i:i + 8] for i in ix])
        yb = torch.stack([tokens[i + 1:i + 9] for i in ix])
        if with_cut:  # the targets take a trip through NumPy: a (benign) cut among the data loading
            yb = torch.from_numpy(yb.numpy().copy())
        logits = model(xb)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), yb.view(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if soft_update:  # as PyTorch's DQN tutorial updates its target network
            target_sd, sd = target.state_dict(), model.state_dict()
            for key in sd:
                target_sd[key] = sd[key] * 0.005 + target_sd[key] * (1 - 0.005)
            target.load_state_dict(target_sd)
    return tr


def _data_loading_events(tr) -> list:
    """Ops the user's code ran outside every module call whose outputs no gradient reaches."""
    return [e for e in tr.data.events if e.kind == "op" and e.module is None and e.context == "user"
            and e.outputs and not any(o.requires_grad for o in e.outputs) and not any(i.requires_grad for i in e.inputs)]


def test_data_loading_outside_the_model_is_one_inputs_node_named_after_what_it_hands_on():
    tr = _step()
    g = tr.graph(collapse=True)
    ops = _data_loading_events(tr)
    assert len(ops) >= 4
    (node,) = [n for n in g.nodes if n.kind == "input" and n.n_ops]
    assert node.n_ops == len(ops) == int(node.lines[0].split(" ops:")[0])
    first, last = min(ops, key=lambda e: e.index), max(ops, key=lambda e: e.index)
    ids = {n.id: n for n in g.nodes}
    # named after the user's variables for what it hands on: the batch the model reads, the targets
    # the loss reads (through yb.view(-1))
    assert node.title.split(", ") == ["xb", "yb"], node.title
    assert {ids[e.dst].title for e in g.edges if e.src == node.id} >= {"embedding", "cross_entropy"}
    lines = sorted({e.site.lineno for e in ops})
    assert node.lines[1] == f"{first.site.short.rsplit(':', 1)[0]}:{lines[0]}-{lines[-1]}"
    full = {n.event: n.title for n in tr.graph(collapse=False, max_nodes=10 ** 6).nodes if n.event is not None}
    assert node.lines[0].endswith(f": {full[first.index]} … {full[last.index]}")
    # nothing of it is drawn twice
    assert not [n for n in g.nodes if re.fullmatch(r"input t\d+", n.title)]
    assert not [n for n in g.nodes if n.event in {e.index for e in ops}]
    assert [n for n in g.nodes if n.title == "arange"]  # the model's own data-only op is not data loading
    assert tr.summary().problems == []


def test_data_loading_with_a_cut_among_it_stays_drawn_op_by_op():
    """The targets take a trip through NumPy: the cut and the data loading connected to it are drawn
    op by op (only what is not connected to it, the index arithmetic, is folded)."""
    tr = _step(with_cut=True)
    g = tr.graph(collapse=True)
    (cut,) = [e for e in tr.data.events if e.kind == "cut" and e.module is None]
    drawn = {n.event for n in g.nodes if n.event is not None}
    assert cut.index in drawn
    feeding = [e for e in _data_loading_events(tr) if any(o.tid in {r.tid for r in cut.inputs} for o in e.outputs)]
    assert feeding and all(e.index in drawn for e in feeding)
    # the index arithmetic, not connected to it, is folded, and stands for no op connected to the cut
    (folded,) = [n for n in g.nodes if n.kind == "input" and n.n_ops]
    assert folded.n_ops <= len(_data_loading_events(tr)) - len(feeding)


def test_arithmetic_outside_the_model_that_feeds_only_other_such_code_is_not_data_loading():
    """A target network's soft update (state_dict() tensors mixed, then load_state_dict) runs outside
    every module with no gradient, like data loading, but feeds no module: it stays drawn op by op,
    and the batch still folds."""
    tr = _step(soft_update=True)
    g = tr.graph(collapse=True)
    update = [e for e in _data_loading_events(tr) if e.site.code.lstrip().startswith("target_sd[key] =")]
    assert update
    drawn = {n.event for n in g.nodes if n.event is not None}
    assert all(e.index in drawn for e in update)
    (folded,) = [n for n in g.nodes if n.kind == "input" and n.n_ops]
    assert folded.title.split(", ") == ["xb", "yb"] and folded.n_ops == len(_data_loading_events(tr)) - len(update)


@needs_dot
def test_gradscope_run_draws_a_real_programs_data_loading_as_one_node(tmp_path):
    """nanoGPT's train loop prefetches the next batch during the step (get_batch after the forward):
    under `gradscope run --out` it is one node named after the tensors it makes, and the drawing
    fits a screen with room to spare."""
    out = tmp_path / "g.dot"
    p = subprocess.run([PYTHON, "-m", "gradscope", "run", "--quiet", "--out", str(out), program_path("nanogpt")],
                       cwd=tmp_path, capture_output=True, text=True, env=subprocess_env(), timeout=240, check=False)
    assert p.returncode == 0, p.stderr[-2000:]
    src = out.read_text()
    titles = re.findall(r"label=<<b>([^<]*)</b>", src)
    assert not [t for t in titles if re.fullmatch(r"input t\d+", t)], titles
    labels = re.findall(r"label=<(<b>.*?)>\s", src)
    (loading,) = [lab for lab in labels if re.search(r">\d+ ops: ", lab)]
    assert re.search(r"nanogpt\.py:\d+-\d+", loading)
    title = re.match(r"<b>([^<]*)</b>", loading).group(1)
    assert title != "inputs" and all(re.fullmatch(r"\w+", t) for t in title.split(", ")), title
    png = tmp_path / "g.png"
    subprocess.run(["dot", "-Tpng", str(out), "-o", str(png)], check=True, timeout=120)
    w, h = struct.unpack(">II", png.read_bytes()[16:24])
    assert w <= 1600 and h <= 1600, (w, h)  # one node per op: 2406 px wide
