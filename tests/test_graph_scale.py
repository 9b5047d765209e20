"""Diagrams of real-sized models: folding tells each
block's true gradient status, no module is drawn twice or as an empty box, and the
default ``tr.graph()`` of a 20-block model, a GPT-2-, BERT- and ResNet-50-shaped step fits
a screen when rendered with the real ``dot``.

The models are built from ``torch.nn`` in ``tests/diagram_models.py`` (the originals'
module layout, small widths).
"""
from __future__ import annotations

import pathlib
import re
import shutil
import struct

import diagram_models as dm
import pytest

from gradscope.graph import GraphView, cut_label

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz `dot` binary not installed")

#: "Fits a screen": the PNG Graphviz writes at its default 96 dpi.
MAX_W, MAX_H = 2400, 1600


@pytest.fixture(scope="module")
def traces():
    cache: dict = {}

    def get(name):
        if name not in cache:
            cache[name] = {"cut12": lambda: dm.block_stack_step(20, cut_after=12),
                           "blocks": lambda: dm.block_stack_step(20),
                           "gpt2": dm.gpt2_step, "bert": dm.bert_step, "resnet": dm.resnet50_step,
                           "gpt2_cut5": lambda: dm.gpt2_step(detach_attn=5)}[name]()
        return cache[name]
    return get


def png_size(path) -> tuple:
    head = pathlib.Path(path).read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def status_of(g: GraphView, title: str) -> str:
    (n,) = [n for n in g.nodes if n.title == title]
    return n.style


def drawn_modules(g: GraphView) -> list:
    """Every place a module is drawn: module boxes (by title) and clusters (by path)."""
    out = [n.title for n in g.nodes if n.kind == "module"]
    out += [c.module for c in g.clusters if c.module]
    return out


def copies_of_folds(g: GraphView) -> set:
    """Block paths a fold stands for but must not be drawn by themselves: ``blocks.0-12
    (x13)`` covers ``blocks.1`` .. ``blocks.12``."""
    out = set()
    for label in g.folded:
        m = re.fullmatch(r"(.*?)(\d+)-(\d+) \(x\d+\)", label)
        prefix, lo, hi = m.group(1), int(m.group(2)), int(m.group(3))
        out |= {f"{prefix}{i}" for i in range(lo + 1, hi + 1)}
    return out


def assert_each_module_once(g: GraphView) -> None:
    drawn = drawn_modules(g)
    assert len(drawn) == len(set(drawn)), sorted(m for m in drawn if drawn.count(m) > 1)
    hidden = copies_of_folds(g)
    for m in drawn:
        assert not any(m == h or m.startswith(h + ".") for h in hidden), (m, g.folded)
    for n in g.nodes:  # nor a parameter of a folded copy drawn on its own
        if n.kind == "param":
            assert not any(n.title.startswith(h + ".") or f".{h}." in n.title for h in hidden), n.title
    empty = [n.label for n in g.nodes if n.kind == "module" and re.search(r"\b0 ops\b", n.label)]
    assert not empty


# --- folding splits where the gradient status changes -----------------------------------------------------------------
def test_fold_splits_where_the_gradient_status_changes(traces):
    tr = traces("cut12")
    g = tr.graph()
    assert g.folded == ["blocks.0-12 (x13)", "blocks.13-19 (x7)"]
    boxes = {n.title: n for n in g.nodes if n.kind == "module"}
    assert boxes, [n.title for n in g.nodes]
    for title, n in boxes.items():
        if title.startswith("blocks.0-12"):
            assert n.style == "module_bad" and any(line.startswith("grad None") for line in n.lines), n.lines
        if title.startswith("blocks.13-19"):
            assert n.style == "module" and any(line.startswith("grad ok") for line in n.lines), n.lines
            assert not any("None" in line for line in n.lines)
    assert any(t.startswith("blocks.0-12") for t in boxes) and any(t.startswith("blocks.13-19") for t in boxes)
    # the text view (Jupyter's text/plain) names the starved box with its status
    assert re.search(r"^  blocks\.0-12.*: grad None \(all \d+\)$", g.describe(), re.M), g.describe()
    assert not re.search(r"^  blocks\.13-19", g.describe(), re.M)
    # the cut sits between the two folds, drawn once, and nothing loops back through it
    (cut,) = g.edges_of("cut")
    (harmful,) = tr.cuts(harmful=True)
    assert cut.label == f"{cut_label(harmful)} @ {harmful.site.short}"
    # folded all the way open, every parameter node carries its blocks' status
    gf = tr.graph(collapse=True)
    assert gf.folded == g.folded
    assert status_of(gf, "blocks.0-12.attn.qkv.weight") == "param_none"
    assert status_of(gf, "blocks.13-19.attn.qkv.weight") == "param_received"
    line = next(n for n in gf.nodes if n.title == "blocks.13-19.mlp.fc2.weight").lines[1]
    assert line.startswith("grad ok |g|=") and line.endswith("(all 7)")
    assert not [n for n in gf.nodes if n.title.startswith("blocks.13-19") and n.style == "param_none"]


def test_fold_keeps_one_run_when_every_block_agrees(traces):
    g = traces("blocks").graph(collapse=True)
    assert g.folded == ["blocks.0-19 (x20)"]
    assert status_of(g, "blocks.0-19.attn.qkv.weight") == "param_received"


# --- no module is drawn twice, no box is empty ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["bert", "resnet", "gpt2", "cut12"])
@pytest.mark.parametrize("kw", [{}, {"collapse": True}, {"depth": 2, "collapse": True}])
def test_no_module_is_drawn_twice_and_no_box_is_empty(traces, name, kw):
    g = traces(name).graph(**kw)
    assert_each_module_once(g)
    # nor a box on a cycle (ResNet's one ReLU module runs three times per block)
    succ: dict = {}
    for e in g.edges:
        succ.setdefault(e.src, set()).add(e.dst)
    state: dict = {}

    def loops(n):
        state[n] = 1
        for m in succ.get(n, ()):
            if state.get(m) == 1 or (m not in state and loops(m)):
                return True
        state[n] = 2
        return False

    assert not any(n.id not in state and loops(n.id) for n in g.nodes)


@pytest.mark.parametrize("name", ["bert", "resnet"])
def test_names_with_a_root_prefix_fold_the_same(traces, name):
    """Parameter names may carry the root's name (``model.encoder.layer.0...``) while the
    ops' module paths do not: the parameters still belong to their modules and folds."""
    tr = traces(name)
    plain = tr.graph(collapse=True)
    data = tr.data
    old = {t.tid: t.name for t in data.params()}
    try:
        for t in data.params():
            t.name = "model." + t.name
        for ps in tr.summary().params:
            ps.name = "model." + ps.name if not ps.name.startswith("model.") else ps.name
        g = tr.graph(collapse=True)
    finally:
        for t in data.params():
            t.name = old[t.tid]
        for ps in tr.summary().params:
            ps.name = ps.name.removeprefix("model.")
    assert g.folded == plain.folded
    assert len(g.nodes) == len(plain.nodes)
    assert_each_module_once(g)
    params = [n.title for n in g.nodes if n.kind == "param"]
    assert params and all(t.startswith("model.") for t in params)


def test_bert_folds_its_layers_once(traces):
    g = traces("bert").graph(collapse=True)
    assert g.folded == ["encoder.layer.0-11 (x12)"]
    repeat = [c for c in g.clusters if c.kind == "repeat"]
    assert [c.label for c in repeat] == ["encoder.layer.0-11 (BertLayer) x12"]


def test_resnet_blocks_fold_after_the_downsampling_block(traces):
    g = traces("resnet").graph(collapse=True)
    assert g.folded == ["layer1.1-2 (x2)", "layer2.1-3 (x3)", "layer3.1-5 (x5)", "layer4.1-2 (x2)"]
    assert_each_module_once(g)


# ----------------------------------------------------------------------------- fits a screen
@needs_dot
@pytest.mark.parametrize("name", ["cut12", "blocks", "gpt2", "bert", "resnet"])
def test_default_graph_fits_a_screen(traces, name, tmp_path):
    tr = traces(name)
    g = tr.graph()
    w, h = png_size(g.render(tmp_path / f"{name}.png"))
    assert w <= MAX_W and h <= MAX_H, (name, w, h, len(g.nodes))
    src = g.source
    for cut in tr.cuts(harmful=True):  # every harmful cut is on the drawing, with its line
        assert f"{cut_label(cut)} @ {cut.site.short}" in src
    assert g.folded  # the repetition is said, not hidden
    assert any(re.search(r"x\d+", n.title + " ".join(n.lines)) for n in g.nodes) or \
        any(c.kind == "repeat" for c in g.clusters)


@needs_dot
@pytest.mark.parametrize("name, target", [("cut12", "embed.weight"), ("cut12", "blocks.15.mlp.fc1.weight"),
                                          ("gpt2", "transformer.wte.weight")])
def test_focused_graph_fits_a_screen_and_no_fold_spans_the_cut(traces, name, target, tmp_path):
    tr = traces(name)
    g = tr.graph(focus=target)
    w, h = png_size(g.render(tmp_path / "focus.png"))
    assert w <= MAX_W and h <= MAX_H, (name, target, w, h, len(g.nodes))
    assert [n for n in g.nodes if n.mark == "focus"]
    for label in g.folded:  # blocks 0-12 starve, 13-19 do not: no run crosses block 12 -> 13
        lo, hi = map(int, re.search(r"(\d+)-(\d+) \(x", label).groups())
        assert not (name == "cut12" and lo <= 12 < hi), label
    assert_each_module_once(g)


def assert_the_cut_story_is_drawn(tr, g: GraphView) -> None:
    """What a collapsed drawing must keep readable: every harmful cut with its line (on its edge
    and as a node), every starved parameter (itself or its module's box) red and saying "grad
    None", and a path of drawn edges from each cut to every backward root."""
    by_id = {n.id: n for n in g.nodes}
    succ: dict = {}
    for e in g.edges:
        if e.kind != "order":
            succ.setdefault(e.src, set()).add(e.dst)
    roots = [n.id for n in g.nodes if n.kind == "root"]
    assert roots
    for cut in tr.cuts(harmful=True):
        label = f"{cut_label(cut)} @ {cut.site.short}"
        assert any(e.kind == "cut" and e.label == label for e in g.edges), label
        (node,) = [n for n in g.nodes if n.kind == "cut" and n.event == cut.index]
        assert cut.site.short in node.lines
        seen, todo = {node.id}, [node.id]
        while todo:
            for m in succ.get(todo.pop(), ()):
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        assert all(r in seen for r in roots), (node.title, [by_id[i].title for i in seen])
    starved = [p.name for p in tr.summary().params if p.status == "none"]
    assert starved
    for name in starved:
        (n,) = [n for n in g.nodes if n.title == name or name.startswith(n.title + ".")]
        assert n.style in ("param_none", "module_bad") and any(x.startswith("grad None") for x in n.lines), n


def stretch_params(tr, after: int | None = None, before: int | None = None) -> list:
    """The parameters (ParamStatus) first read by an event after index ``after`` / before ``before``."""
    first_use: dict = {}
    for e in tr.data.events:
        for r in e.inputs:
            first_use.setdefault(r.tid, e.index)
    out = [p for p in tr.summary().params if p.tid in first_use and
           (after is None or first_use[p.tid] > after) and (before is None or first_use[p.tid] < before)]
    return sorted(out, key=lambda p: first_use[p.tid])


def module_span(tr, module: str) -> tuple:
    idx = [e.index for e in tr.data.events if e.module and (e.module == module or e.module.startswith(module + "."))]
    return min(idx), max(idx)


@needs_dot
def test_graph_with_a_cut_inside_attention_fits_a_screen(traces, tmp_path):
    tr = traces("gpt2_cut5")
    g = tr.graph()
    assert g.folded == ["transformer.h.0-4 (x5)", "transformer.h.6-11 (x6)"]
    assert_each_module_once(g)
    w, h = png_size(g.render(tmp_path / "g.png"))
    assert w <= MAX_W and h <= MAX_H, (w, h)
    assert_the_cut_story_is_drawn(tr, g)


def test_healthy_modules_after_and_before_the_cut_are_one_node_each(traces):
    """The modules after the cut's module (all fine) are one node saying how many modules, ops and
    parameters it stands for and their status; so are the ones before it (the starved layer, which
    runs before the cut, stays drawn on its own)."""
    tr = traces("gpt2_cut5")
    g = tr.graph()
    (cut,) = tr.cuts(harmful=True)
    first, last = module_span(tr, cut.module)
    summaries = {n.lines[-1]: n for n in g.nodes if n.lines and n.lines[-1].endswith("drawn as one")}
    assert set(summaries) == {"after the cut, drawn as one", "before the cut, drawn as one"}, [n.title for n in g.nodes]
    for where, ps in (("after", stretch_params(tr, after=last)), ("before", stretch_params(tr, before=first))):
        node = summaries[f"{where} the cut, drawn as one"]
        fine = [p for p in ps if p.status == "received"]
        assert fine and all(p.status in ("received", "none") for p in ps)
        assert node.kind == "module" and node.lines[0].endswith(f", {len(fine)} params"), node.lines
        assert re.fullmatch(r"\d+ modules, \d+ ops, \d+ params", node.lines[0])
        assert node.lines[1] == f"grad ok (all {len(fine)})"
        lo, hi = node.title.split(" … ")  # named by the modules it runs from and to (a fold by its range)
        lo, hi = re.sub(r"\.(\d+)-\d+$", r".\1", lo), re.sub(r"\.\d+-(\d+)$", r".\1", hi)
        assert fine[0].name.startswith(lo + ".") and fine[-1].name.startswith(hi + "."), (node.title, fine[-1].name)
    # the loss op stays drawn, fed by the summary of what runs after the cut
    after = summaries["after the cut, drawn as one"]
    (loss_op,) = [n for n in g.nodes if any(e.src == n.id and by_kind(g, e.dst) == "root" for e in g.edges)]
    assert any(e.src == after.id and e.dst == loss_op.id for e in g.edges)
    # drawn in full, every one of those modules is there
    full = tr.graph(collapse=False, max_nodes=10 ** 6)
    assert not [n for n in full.nodes if n.lines and n.lines[-1].endswith("drawn as one")]


def by_kind(g: GraphView, node_id: str) -> str:
    return next(n.kind for n in g.nodes if n.id == node_id)


def test_parallel_branches_that_run_the_same_ops_are_drawn_once(traces):
    """The three heads' reshapes (q, k, v: view then transpose each, side by side from one split to
    one attention call) are one node that says x3 and the lines they stand for."""
    tr = traces("gpt2_cut5")
    (cut,) = tr.cuts(harmful=True)
    full = tr.graph(collapse=False, max_nodes=10 ** 6)
    # the real drawing: in the cut's module, which ops sit between the fork and the join
    by_id = {n.id: n for n in full.nodes}
    succ, pred = {}, {}
    for e in full.edges:
        succ.setdefault(e.src, set()).add(e.dst)
        pred.setdefault(e.dst, set()).add(e.src)
    in_mod = {n.id for n in full.nodes if n.event is not None and tr.data.events[n.event].module == cut.module}
    (fork,) = [i for i in in_mod if len(succ.get(i, ())) == 3 and all(s in in_mod for s in succ[i])]
    chains = []
    for s in sorted(succ[fork], key=lambda i: by_id[i].event):
        chain = [s]
        while len(pred[succ[chain[-1]].copy().pop()]) == 1:
            chain.append(succ[chain[-1]].copy().pop())
        chains.append(chain)
    titles = {tuple(by_id[i].title for i in c) for c in chains}
    assert len(titles) == 1 and len({next(iter(succ[c[-1]])) for c in chains}) == 1  # same ops, one join
    lines = sorted({int(by_id[i].lines[0].rsplit(":", 1)[1]) for c in chains for i in c})
    g = tr.graph()
    (node,) = [n for n in g.nodes if n.title.endswith(" (x3)")]
    assert node.kind == "op" and node.title == " → ".join(next(iter(titles))) + " (x3)"
    assert node.lines[0] == f"{by_id[fork].lines[0].rsplit(':', 1)[0]}:{lines[0]}-{lines[-1]}"
    ids = {n.id: n for n in g.nodes}
    assert {ids[e.src].title for e in g.edges if e.dst == node.id} == {by_id[fork].title}
    for t in next(iter(titles)):  # no copy of those ops is drawn beside it
        assert not [n for n in g.nodes if n.title == t and n.cluster == node.cluster]


@needs_dot
def test_two_cuts_inside_attention_each_keep_their_story_and_the_stretches_between_are_one_node(tmp_path):
    """Detaches in blocks 3 and 8: the stretch before the first cut's module, the one between the
    two, and the one after the last are one healthy node each; both cuts, their lines, both starved
    layers and the paths to the loss stay drawn; still too tall, the ops from each cut through its
    module are laid out left to right, and the drawing fits a screen."""
    tr = dm.gpt2_step(detach_attn=(3, 8))
    g = tr.graph()
    assert_the_cut_story_is_drawn(tr, g)
    assert_each_module_once(g)
    wheres = sorted(n.lines[-1] for n in g.nodes if n.lines and n.lines[-1].endswith("drawn as one"))
    assert wheres == ["after the last cut, drawn as one", "before the first cut, drawn as one",
                      "between the cuts, drawn as one"]
    cuts = sorted(tr.cuts(harmful=True), key=lambda c: c.index)
    (a_first, a_last), (b_first, b_last) = module_span(tr, cuts[0].module), module_span(tr, cuts[1].module)
    between = [p for p in stretch_params(tr, after=a_last, before=b_first) if p.status == "received"]
    (node,) = [n for n in g.nodes if n.lines and n.lines[-1] == "between the cuts, drawn as one"]
    assert node.lines[1] == f"grad ok (all {len(between)})"
    for n in g.nodes:
        if n.lines and n.lines[-1].endswith("drawn as one"):
            assert not any("None" in x for x in n.lines), n.lines
    # each cut starts a row: the chain through its own module, drawn left to right, so it fits a screen
    assert len(g.rows) == 2
    ids = {n.id: n for n in g.nodes}
    for row, cut in zip(sorted(g.rows, key=lambda r: ids[r[0]].event), cuts):
        assert ids[row[0]].kind == "cut" and ids[row[0]].event == cut.index and len(row) >= 3
        assert len({ids[i].cluster for i in row}) == 1
        assert all(any(e.src == a and e.dst == b for e in g.edges) for a, b in zip(row, row[1:]))
        assert "{rank=same; " + "; ".join(row) + "}" in g.source
    w, h = png_size(g.render(tmp_path / "two.png"))
    assert w <= MAX_W and h <= MAX_H, (w, h)


def test_a_weight_replaced_by_a_tied_one_is_not_drawn_as_starved():
    """lm_head.weight = wte.weight inside the traced block: lm_head's first weight left the model; the
    diagram (whose header says every parameter is fine) must not draw it as a red 'grad None' node."""
    import torch
    import torch.nn as nn

    import gradscope

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(10, 4)
            self.lm_head = nn.Linear(4, 10, bias=False)
            self.lm_head.weight = self.wte.weight

        def forward(self, idx):
            return self.lm_head(self.wte(idx))

    with gradscope.trace() as tr:
        LM()(torch.tensor([[1, 2, 3]])).sum().backward()
    src = tr.graph().source
    assert "grad None" not in src and "not used" not in src, src
    assert tr.summary().problems == []


def test_a_cut_inside_a_module_draws_far_runs_of_plain_ops_as_one_node(traces):
    """With a detach inside block 5's attention, the block stays open; a straight run of plain ops away
    from the cut and its neighbours is one node that says how many ops it holds and which."""
    g = traces("gpt2_cut5").graph()
    runs = [n for n in g.nodes if n.title.endswith(" ops") and n.kind == "op"]
    assert runs and all(n.n_ops >= 3 and " … " in n.lines[0] for n in runs), [n.title for n in g.nodes]
    assert any(n.title == "detach()" for n in g.nodes)  # the cut itself stays drawn


def test_a_target_network_no_optimizer_trains_is_drawn_not_trained_not_starved():
    """A DQN step: the target network runs under no_grad and no optimizer holds it (its parameters
    still require grad). The summary has no problem for it, so the diagram must not draw its
    parameters as red 'grad None': they are 'not trained', in the frozen look, with a legend entry."""
    import copy

    import torch
    import torch.nn as nn

    import gradscope

    policy = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    target = copy.deepcopy(policy)
    opt = torch.optim.SGD(policy.parameters(), lr=0.1)
    s, s2 = torch.randn(5, 4), torch.randn(5, 4)
    with gradscope.trace() as tr:
        with torch.no_grad():
            nxt = target(s2).max(1).values
        q = policy(s).max(1).values
        loss = nn.functional.smooth_l1_loss(q, 0.9 * nxt)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert tr.summary().problems == []
    for view in (tr.graph(collapse=False), tr.graph()):
        src = view.source
        assert "grad None" not in src, src
        nodes = {n.title: n for n in view.nodes if n.kind == "param"}
        drawn_target = [n for t, n in nodes.items() if t.startswith("target.")]
        assert all(n.style == "param_untrained" and "not trained" in n.lines for n in drawn_target), nodes
        if drawn_target:
            assert "not trained by this step" in src
    full = tr.graph(collapse=False)
    assert any(n.title.startswith("target.") for n in full.nodes if n.kind == "param"), [n.title for n in full.nodes]
    assert any(n.title.startswith("policy.") and n.style == "param_received" for n in full.nodes if n.kind == "param")
