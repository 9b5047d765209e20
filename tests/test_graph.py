"""Tests for gradscope.graph: the diagram as data, its DOT source, and rendering.

Golden files: ``tests/golden/graph_<case>.dot`` hold the DOT source of the hand-built cases
in ``tests/render_cases.py``. After an intended change to the diagram, regenerate them with

    GRADSCOPE_REGEN_GOLDEN=1 pytest tests/test_graph.py tests/test_report.py

and review the diff (render one with ``dot -Tpng tests/golden/graph_numpy_mlp.dot -o /tmp/g.png``).
Tests that rasterise (SVG/PNG/PDF) need Graphviz's ``dot`` and are skipped without it; the
missing-``dot`` test runs everywhere (it empties PATH itself).
"""
from __future__ import annotations

import ast
import os
import pathlib
import re
import shutil

import pytest

import render_cases as rc
import torch

import gradscope
from gradscope.errors import DotNotFoundError, GradscopeError, UnknownTargetError
from gradscope.graph import GraphView, build_graph, cut_label, op_short
from gradscope.core.model import TraceData

GOLDEN = pathlib.Path(__file__).parent / "golden"
REGEN = os.environ.get("GRADSCOPE_REGEN_GOLDEN") == "1"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz `dot` binary not installed")


def check_golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if REGEN:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run GRADSCOPE_REGEN_GOLDEN=1 pytest and review the diff"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} differs from the golden file; if intended, regenerate (see module doc)"


def edge(g: GraphView, kind: str, label_part: str = ""):
    found = [e for e in g.edges if e.kind == kind and label_part in e.label]
    assert found, f"no {kind} edge with {label_part!r}: {[(e.kind, e.label) for e in g.edges]}"
    return found[0]


def one(g: GraphView, title: str):
    found = [n for n in g.nodes if n.title == title]
    assert len(found) == 1, f"expected one node titled {title!r}, got {[n.title for n in g.nodes]}"
    return found[0]


def has_cycle(g: GraphView) -> bool:
    succ: dict = {}
    for e in g.edges:
        succ.setdefault(e.src, []).append(e.dst)
    state: dict = {}

    def visit(n):
        state[n] = 1
        for m in succ.get(n, ()):
            if state.get(m) == 1 or (m not in state and visit(m)):
                return True
        state[n] = 2
        return False

    return any(n.id not in state and visit(n.id) for n in g.nodes)


# ----------------------------------------------------------------------------- goldens
GOLDEN_CASES = {
    "numpy_mlp": (rc.numpy_mlp, {}),
    "inplace_failure": (rc.inplace_failure, {}),
    "frozen_nograd": (rc.frozen_nograd, {}),
    "blocks_collapsed": (lambda: rc.blocks(12, 6, cut_block=7), {"collapse": True}),
    "blocks_depth1": (lambda: rc.blocks(12, 6, cut_block=7), {"depth": 1, "collapse": True}),
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_dot_source_matches_golden(name):
    make, kw = GOLDEN_CASES[name]
    data, summary = make()
    check_golden(f"graph_{name}.dot", build_graph(data, summary, **kw).source)


# ----------------------------------------------------------------------------- content
def test_numpy_roundtrip_shows_the_cut_its_line_and_the_starved_params():
    data, summary = rc.numpy_mlp()
    g = build_graph(data, summary)
    cut = edge(g, "cut", "detach()")
    assert cut.label == "detach() @ model.py:25"
    assert g.node(cut.src).title == "relu" and g.node(cut.dst).title == "detach()"
    assert g.node(cut.dst).style == "cut"
    assert "h.detach().numpy()" in " ".join(g.node(cut.dst).lines)
    # the values come back through torch.from_numpy: an inferred (dotted) link from numpy()
    inf = edge(g, "inferred")
    assert g.node(inf.src).title == "numpy()" and g.node(inf.dst).title == "from_numpy"
    assert one(g, "fc1.weight").style == "param_none" and "grad None" in one(g, "fc1.weight").lines
    assert one(g, "fc1.bias").style == "param_none"
    assert one(g, "fc2.weight").style == "param_received"
    assert "grad ok |g|=0.576" in one(g, "fc2.weight").lines
    root = one(g, "loss")
    assert root.kind == "root" and root.style == "root" and ".backward() @ train.py:41" in root.lines
    # loss.item() for logging is a benign cut: grey, not red
    benign = edge(g, "benign_cut")
    assert benign.label == "item() @ train.py:42 (benign)"
    assert g.node(benign.dst).style == "cut_benign"
    assert len(g.edges_of("cut")) == 1
    # one optimizer node, after the root
    assert one(g, "SGD.step()").kind == "optimizer"
    # module clusters with their classes; the parameters sit in their module's cluster
    labels = {c.label for c in g.clusters}
    assert {"fc1 (Linear)", "fc2 (Linear)"} <= labels
    fc1 = next(c for c in g.clusters if c.label == "fc1 (Linear)")
    assert one(g, "fc1.weight").cluster == fc1.id
    # the title names the problem
    assert g.title.startswith("1 problem: fc1.weight, fc1.bias get no gradient")
    assert "numpy roundtrip @ model.py:25" in g.title
    src = g.source
    assert 'style=dashed' in src and "detach() @ model.py:25" in src and "peripheries=2" in src
    legend = dict((k, v) for k, v in g.legend)
    assert "cut" in legend and "inferred" in legend and "param_none" in legend and "param_received" in legend
    assert "nograd" not in legend  # only what the diagram uses


def test_edge_kinds_follow_requires_grad():
    data, summary = rc.numpy_mlp()
    g = build_graph(data, summary)
    by_pair = {(g.node(e.src).title, g.node(e.dst).title): e.kind for e in g.edges}
    assert by_pair[("fc1.weight", "linear")] == "autograd"
    assert by_pair[("x", "linear")] == "data"  # x needs no gradient
    assert by_pair[("detach()", "numpy()")] == "data"  # already cut: nothing more is lost
    assert by_pair[("mse_loss", "loss")] == "root"


def test_without_summary_cuts_are_still_red_and_params_use_tensorinfo():
    data, _ = rc.numpy_mlp()
    for e in data.events:  # as recorded: the diagnosis has not judged the cuts yet
        e.verdict = None
    g = build_graph(data)
    assert edge(g, "cut", "detach()").label == "detach() @ model.py:25"
    assert edge(g, "cut", "item()").label == "item() @ train.py:42"  # no verdict: not known to be benign
    assert one(g, "fc1.weight").style == "param_none"  # TensorInfo.grad is None, requires grad
    assert one(g, "fc2.weight").style == "param_received"
    assert g.title == ""


def test_grad_disabled_region_is_a_grey_cluster_and_frozen_params_are_grey():
    data, summary = rc.frozen_nograd()
    g = build_graph(data, summary)
    ng = [c for c in g.clusters if c.kind == "nograd"]
    assert [c.label for c in ng] == ["no_grad @ model.py:5"]
    # one grey box around the whole encoder (both of its module clusters), inside "encoder"
    by_id = {c.id: c for c in g.clusters}
    assert by_id[ng[0].parent].label == "encoder (Sequential)"
    wrapped = sorted(c.label for c in g.clusters if c.parent == ng[0].id)
    assert wrapped == ["0 (Linear)", "1 (ReLU)"] or wrapped == ["encoder.0 (Linear)", "encoder.1 (ReLU)"]
    assert [c.id for c in g.clusters].index(ng[0].id) < min(
        [c.id for c in g.clusters].index(c.id) for c in g.clusters if c.parent == ng[0].id)
    assert {n.style for n in g.nodes if n.title in ("linear", "relu") and "model.py:6" in n.lines} == {"nograd"}
    assert one(g, "encoder.0.weight").style == "param_frozen"
    assert one(g, "head.weight").style == "param_received"
    assert not g.edges_of("cut")  # the encoder's inputs need no grad: nothing is cut
    assert g.title == "OK: every trainable parameter got a gradient"
    assert dict(g.legend)["nograd"].startswith("grad disabled")


def test_no_grad_op_on_requires_grad_input_is_a_red_edge():
    b = rc.Builder()
    s = rc.site("m.py", 3, "y = lin(x)")
    x = b.tensor((2,), name="x", rg=True)
    op = b.ev("cut", "torch.nn.functional.linear", s, (x,), ("new",), cut="no_grad", grad_enabled=False,
              out_rg=False)
    b.ev("op", "torch.Tensor.sum", s, (b.out(op),), ("new",), out_shape=())
    g = build_graph(b.data())
    e = edge(g, "cut")
    assert e.label == "linear under no_grad @ m.py:3"
    assert g.node(e.dst).style == "cut"


def test_inplace_write_and_backward_failure_are_marked():
    data, summary = rc.inplace_failure()
    g = build_graph(data, summary)
    mul = one(g, "mul_ (in-place)")
    assert mul.style == "inplace_bad"  # it is the failure's evidence
    assert "h.mul_(2)" in mul.lines
    exc = one(g, "RuntimeError")
    assert exc.kind == "exception" and any("modified by an inplace" in line for line in exc.lines)
    raised = edge(g, "raised")
    assert g.node(raised.src).kind == "root" and g.node(raised.dst) is exc
    assert one(g, "loss").style == "root_failed"
    # the in-place op writes h: the linear of fc2 reads h from the mul_ node
    lin2 = [n for n in g.nodes if n.title == "linear" and "model.py:12" in n.lines][0]
    assert any(e.src == mul.id and e.dst == lin2.id for e in g.edges)


def test_context_other_than_user_is_ignored_but_optimizer_step_is_one_node():
    data, summary = rc.numpy_mlp()
    n0 = len(build_graph(data, summary).nodes)
    b_events = list(data.events)
    from gradscope.core.model import Event
    from gradscope.core.model import Site

    s = Site("sgd.py", 1, "step", "p.add_(g)")
    for i in range(5):  # optimizer internals and an init op: not drawn
        b_events.append(Event(len(b_events), "inplace", "torch.Tensor.add_", s, (), (), False, False, None,
                              "optimizer"))
    b_events.append(Event(len(b_events), "op", "torch.nn.init.normal_", s, (), (), True, False, None, "init"))
    b_events.append(Event(len(b_events), "grad_set", "torch.Tensor.grad", s))
    data2 = TraceData(events=b_events, tensors=data.tensors, backwards=data.backwards)
    g = build_graph(data2, summary)
    assert len(g.nodes) == n0
    assert len([n for n in g.nodes if n.kind == "optimizer"]) == 1
    assert not g.find("add_") and not g.find("normal_")


def test_ids_are_stable_and_in_event_order_and_output_is_deterministic():
    data, summary = rc.numpy_mlp()
    g1 = build_graph(data, summary)
    assert [n.id for n in g1.nodes] == [f"n{i}" for i in range(len(g1.nodes))]
    events = [n.event for n in g1.nodes if n.event is not None]
    assert events == sorted(events)
    # the same trace saved and loaded gives byte-identical DOT
    data2 = TraceData.from_json(data.to_json())
    assert build_graph(data2, summary).source == g1.source
    assert "0x" not in g1.source and not re.search(r"\bat 0x", g1.source)


def test_dot_is_identical_across_processes_and_hash_seeds():
    import subprocess
    import sys

    code = ("import sys; sys.path.insert(0, {tests!r}); import render_cases as rc; "
            "from gradscope.graph import build_graph; "
            "print(build_graph(*rc.blocks(12, 6, cut_block=7), depth=1, collapse=True).source, end='')")
    code = code.format(tests=str(pathlib.Path(__file__).parent))
    outs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                check=True, cwd=str(pathlib.Path(__file__).parent.parent)).stdout)
    assert len(outs) == 1
    assert outs.pop() == (GOLDEN / "graph_blocks_depth1.dot").read_text(encoding="utf-8")


def test_focus_keeps_only_the_paths_from_the_tensor_to_the_loss():
    data, summary = rc.numpy_mlp()
    w1 = next(t.tid for t in data.params() if t.name == "fc1.weight")
    g = build_graph(data, summary, focus=w1)
    titles = [n.title for n in g.nodes]
    for expected in ("fc1.weight", "linear", "relu", "detach()", "numpy()", "from_numpy", "mse_loss", "loss"):
        assert expected in titles
    # not on a path from fc1.weight: the other parameters, the inputs, logging
    for absent in ("fc2.weight", "fc1.bias", "x", "y", "item()"):
        assert absent not in titles
    assert one(g, "fc1.weight").mark == "focus"
    assert edge(g, "cut").label == "detach() @ model.py:25"  # the cut is on the focus path
    assert "focus: fc1.weight" in g.title
    assert "penwidth=3" in g.source


def test_focus_on_an_unused_parameter_says_so():
    b = rc.Builder()
    s = rc.site("m.py", 1, "loss = (w * 2).sum()")
    w = b.param("w", (3,))
    unused = b.param("head.bias", (3,), "none")
    m = b.ev("op", "torch.Tensor.mul", s, (w,), ("new",))
    sm = b.ev("op", "torch.Tensor.sum", s, (b.out(m),), ("new",), out_shape=())
    b.ev("backward", "Tensor.backward", s, (b.out(sm),), ())
    data = b.data()
    g = build_graph(data, focus=unused)
    assert g.notes == ["head.bias has no data path to the backward root"]
    assert "not used" in one(g, "head.bias").lines
    assert [n.title for n in g.nodes if n.kind == "root"] == ["loss"]


def test_focus_on_an_unknown_tensor_raises():
    data, summary = rc.numpy_mlp()
    with pytest.raises(UnknownTargetError, match="focus=999"):
        build_graph(data, summary, focus=999)


def test_repeated_blocks_fold_but_the_block_with_the_cut_stays():
    data, summary = rc.blocks(12, 6, cut_block=7)
    full = build_graph(data, summary, collapse=False)
    g = build_graph(data, summary, collapse=True)
    assert g.folded == ["blocks.0-6 (x7)", "blocks.8-11 (x4)"]
    repeat = sorted(c.label for c in g.clusters if c.kind == "repeat")
    assert repeat == ["blocks.0-6 (Block) x7", "blocks.8-11 (Block) x4"]
    assert any(c.label == "blocks.7 (Block)" for c in g.clusters)
    assert len(g.nodes) < len(full.nodes) / 2
    assert edge(g, "cut").label == "detach() @ model.py:60"
    # folded parameters are named for the whole range and keep their status
    assert one(g, "blocks.0-6.attn.w0").style == "param_none"
    assert one(g, "blocks.8-11.mlp.w1").style == "param_received"
    # one copy is drawn: no edge from a copy back into itself
    assert not has_cycle(g)
    # the folded block stands for all its copies' ops
    lin = [n for n in g.nodes if n.title == "linear" and n.n_ops == 7]
    assert lin, [(n.title, n.n_ops) for n in g.nodes]


def test_depth_collapses_modules_into_boxes_but_opens_the_path_to_the_cut():
    data, summary = rc.blocks(12, 6, cut_block=7)
    g = build_graph(data, summary, depth=1, collapse=False)  # boxes only, no folding
    boxes = {n.title: n for n in g.nodes if n.kind == "module"}
    # "blocks" holds the cut, so it stays open: its blocks are boxes, blocks.7 is opened further
    assert "blocks" not in boxes
    assert {"embed", "head", "blocks.0", "blocks.6", "blocks.8", "blocks.11", "blocks.7.attn"} <= set(boxes)
    assert "blocks.7" not in boxes
    assert boxes["blocks.3"].style == "module_bad"  # its parameters get no gradient
    assert "grad None (all 2)" in boxes["blocks.3"].lines  # in the words of the parameter nodes
    assert boxes["blocks.9"].style == "module" and "6 ops, 2 params" in boxes["blocks.9"].lines
    assert boxes["embed"].lines == ("Linear", "1 op, 1 param", "grad None")
    assert "grad ok (all 2)" in boxes["blocks.9"].lines
    cut = edge(g, "cut")
    assert g.node(cut.dst).title == "detach()" and cut.label == "detach() @ model.py:60"
    # blocks.7.mlp runs on both sides of the cut (linear -> detach() -> gelu): as one box it
    # would sit on a cycle, so it is opened and the cut leaves its linear
    assert g.node(cut.src).title == "linear"
    clusters = {c.id: c for c in g.clusters}
    assert clusters[g.node(cut.src).cluster].label == "mlp"
    assert not has_cycle(g)
    assert clusters[g.node(cut.dst).cluster].label == "blocks.7 (Block)"
    # every op is accounted for: in a box or drawn
    drawn = len([n for n in g.nodes if n.event is not None])
    assert sum(b.n_ops for b in boxes.values()) + drawn == len([e for e in data.events if e.kind in ("op", "cut")])
    assert g.depth == 1 and g.collapsed
    assert len(g.nodes) < 30
    # folding and depth together: the repeated blocks become one box each side of the cut
    gf = build_graph(data, summary, depth=1, collapse=True)
    assert {"blocks.0-6 (x7)", "blocks.8-11 (x4)"} <= {n.title for n in gf.nodes if n.kind == "module"}
    assert edge(gf, "cut").label == "detach() @ model.py:60"


def test_max_nodes_hides_ops_honestly():
    data, summary = rc.blocks(40, 6, cut_block=30)
    g = build_graph(data, summary, max_nodes=30, collapse=False)
    assert len(g.nodes) <= 30
    hidden = [n for n in g.nodes if n.kind == "hidden"]
    assert len(hidden) == 1
    drawn_ops = {n.event for n in g.nodes if n.event is not None}
    user_ops = [e for e in data.events if e.kind in ("op", "cut")]
    assert g.hidden == len([e for e in user_ops if e.index not in drawn_ops])
    assert hidden[0].title.startswith(f"{g.hidden} ops")
    assert edge(g, "cut").label == "detach() @ model.py:60"  # never hidden


def test_big_trace_defaults_to_a_collapsed_view_with_the_cut_visible():
    data, summary = rc.blocks(60, 6, cut_block=45)
    assert len([e for e in data.events if e.kind == "op"]) > 300
    g = build_graph(data, summary)
    assert len(g.nodes) <= 150
    assert g.collapsed
    assert edge(g, "cut").label == "detach() @ model.py:60"
    small = build_graph(*rc.numpy_mlp())
    assert not small.collapsed and not small.folded


def test_collapsed_view_leaves_out_benign_dead_ends_and_says_so():
    data, summary = rc.numpy_mlp()
    g = build_graph(data, summary, collapse=True)
    assert not g.edges_of("benign_cut") and not g.find("item()")
    assert g.notes == ["1 benign cut (e.g. .item() for logging) not drawn; collapse=False draws them"]
    assert "(1 benign cut not drawn)" in g.title
    assert edge(g, "cut").label == "detach() @ model.py:25"


def test_invalid_arguments():
    data, summary = rc.numpy_mlp()
    with pytest.raises(ValueError, match="depth"):
        build_graph(data, summary, depth=0)
    with pytest.raises(ValueError, match="max_nodes"):
        build_graph(data, summary, max_nodes=2)
    with pytest.raises(GradscopeError, match=r"unknown extension \.bmp"):
        build_graph(data, summary).render("/tmp/x.bmp")


def test_labels():
    from gradscope.core.model import Event

    assert op_short("torch.nn.functional.linear") == "linear"
    assert op_short("torch.Tensor.__getitem__") == "getitem"
    assert op_short("torch.Tensor.requires_grad.__set__") == ".requires_grad ="
    assert cut_label(Event(0, "cut", "torch.Tensor.detach", None, cut="detach")) == "detach()"
    assert cut_label(Event(0, "cut", "torch.Tensor.data", None, cut="data")) == ".data"
    assert cut_label(Event(0, "cut", "torch.Tensor.__array__", None, cut="numpy")) == "np.asarray"
    assert cut_label(Event(0, "cut", "torch.Tensor.__float__", None, cut="item")) == "float()"
    assert cut_label(Event(0, "cut", "torch.tensor", None, cut="rewrap")) == "torch.tensor()"


def test_renderers_never_import_torch():
    pkg = pathlib.Path(__file__).parent.parent / "gradscope"
    render = sorted(p.relative_to(pkg).as_posix() for p in (pkg / "render").glob("*.py"))
    assert {"render/backend.py", "render/dot.py", "render/build.py"} <= set(render)
    for name in ("graph.py", *render):
        tree = ast.parse((pkg / name).read_text(encoding="utf-8"))
        roots = set()
        for node in tree.body:  # module level: what importing the module loads
            if isinstance(node, ast.Import):
                roots |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots.add(node.module.split(".")[0])
        assert "torch" not in roots, name
        assert "graphviz" not in roots, f"{name} must import graphviz lazily"
        if name.startswith("render/") and name != "render/backend.py":  # only the backend runs Graphviz
            text = (pkg / name).read_text(encoding="utf-8")
            assert "import subprocess" not in text and ".pipe(format=" not in text, name


# ----------------------------------------------------------------------------- rendering
def test_dot_file_needs_no_binary(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    data, summary = rc.numpy_mlp()
    g = build_graph(data, summary)
    out = g.render(tmp_path / "d.dot")
    assert pathlib.Path(out).read_text(encoding="utf-8") == g.source


def test_missing_dot_raises_one_clear_error_and_still_writes_the_dot_file(tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no `dot` (and no graphviz-pure) anywhere
    data, summary = rc.numpy_mlp()
    g = build_graph(data, summary)
    target = tmp_path / "diagram.png"
    with pytest.raises(DotNotFoundError) as ei:
        g.render(target)
    msg = str(ei.value)
    assert "`dot` program is not installed" in msg
    for hint in ("apt-get install graphviz", "brew install graphviz", "conda install -c conda-forge graphviz"):
        assert hint in msg
    dot_path = tmp_path / "diagram.dot"
    assert str(dot_path) in msg
    assert dot_path.read_text(encoding="utf-8") == g.source
    assert not target.exists()
    assert "\n" not in msg  # one message, one line
    # Jupyter falls back to text: the summary, the install hint and the DOT source
    bundle = g._repr_mimebundle_()
    assert set(bundle) == {"text/plain"}
    assert "apt-get install graphviz" in bundle["text/plain"] and "digraph gradscope" in bundle["text/plain"]


def test_graphviz_pure_is_used_when_dot_is_missing(tmp_path, monkeypatch):
    """NOTE [graphviz-pure]: with no `dot` but a `graphviz-pure` program, svg/png still work."""
    exe = shutil.which("graphviz-pure")
    if exe is None:
        pytest.skip("graphviz-pure not installed (pip install graphviz-pure)")
    only = tmp_path / "bin"
    only.mkdir()
    (only / "graphviz-pure").symlink_to(exe)
    monkeypatch.setenv("PATH", str(only))
    g = build_graph(*rc.numpy_mlp())
    svg = pathlib.Path(g.render(tmp_path / "d.svg")).read_text(encoding="utf-8")
    assert "detach() @ model.py:25" in svg and "fc1.weight" in svg
    assert pathlib.Path(g.render(tmp_path / "d.png")).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(DotNotFoundError):  # graphviz-pure has no PDF output
        g.render(tmp_path / "d.pdf")
    assert (tmp_path / "d.dot").exists()


@needs_dot
@pytest.mark.parametrize("ext, magic", [("svg", b"<?xml"), ("png", b"\x89PNG\r\n\x1a\n"), ("pdf", b"%PDF-")])
def test_render_real_files(tmp_path, ext, magic):
    data, summary = rc.numpy_mlp()
    g = build_graph(data, summary)
    out = pathlib.Path(g.render(tmp_path / f"diagram.{ext}"))
    blob = out.read_bytes()
    assert blob.startswith(magic), blob[:20]
    assert len(blob) > 2000
    if ext == "svg":
        text = blob.decode("utf-8")
        assert "<svg" in text
        assert "detach() @ model.py:25" in text
        assert "fc1.weight" in text and "grad None" in text
        assert "#cb181d" in text  # the starved parameter's red border
        assert 'stroke-dasharray' in text  # the dashed cut edge
    assert not (tmp_path / "diagram.dot").exists()  # nothing else left behind


@needs_dot
def test_repr_mimebundle_is_svg_with_text():
    data, summary = rc.numpy_mlp()
    bundle = build_graph(data, summary)._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
    assert "detach() @ model.py:25" in bundle["image/svg+xml"]
    assert "cut: detach() @ model.py:25" in bundle["text/plain"]
    assert "fc1.weight: grad None" in bundle["text/plain"]


@needs_dot
@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden_graphs_are_valid_dot(tmp_path, name):
    make, kw = GOLDEN_CASES[name]
    g = build_graph(*make(), **kw)
    svg = pathlib.Path(g.render(tmp_path / "g.svg")).read_text(encoding="utf-8")
    assert svg.count("class=\"node\"") == len(g.nodes) + (1 if g.legend else 0)
    assert svg.count("class=\"edge\"") == len([e for e in g.edges if e.kind != "order"])


# ----------------------------------------------------------------------------- real traces
torch = pytest.importorskip("torch")


class _NumpyMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.fc2 = torch.nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.from_numpy(h.detach().numpy())  # CUT-LINE
        return self.fc2(h)


CUT_LINE = next(i for i, line in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1)
                if line.rstrip().endswith("# CUT-LINE") and "from_numpy" in line)


def _trace_numpy_mlp():
    import gradscope

    model = _NumpyMLP()
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return tr


def test_real_trace_numpy_roundtrip():
    tr = _trace_numpy_mlp()
    g = build_graph(tr.data, tr.summary())
    cut = edge(g, "cut")
    assert cut.label == f"detach() @ test_graph.py:{CUT_LINE}"
    assert one(g, "fc1.weight").style == "param_none"
    assert one(g, "fc1.bias").style == "param_none"
    assert one(g, "fc2.weight").style == "param_received"
    inf = edge(g, "inferred")
    assert g.node(inf.src).title == "numpy()"
    assert [n.kind for n in g.nodes].count("root") == 1
    assert [n.kind for n in g.nodes].count("optimizer") == 1
    assert not any("sgd" in n.label.lower() and n.kind != "optimizer" for n in g.nodes)  # internals not drawn
    # focus through the public entry point, by tensor
    w1 = tr.data.params()[0].tid
    gf = build_graph(tr.data, tr.summary(), focus=w1)
    assert "fc2.weight" not in [n.title for n in gf.nodes]
    assert edge(gf, "cut").label == cut.label


def test_trace_graph_method_uses_this_module():
    tr = _trace_numpy_mlp()
    g = tr.graph()
    assert isinstance(g, GraphView)
    assert edge(g, "cut").label == f"detach() @ test_graph.py:{CUT_LINE}"


@needs_dot
def test_real_trace_renders_png_and_svg(tmp_path):
    tr = _trace_numpy_mlp()
    g = build_graph(tr.data, tr.summary())
    assert pathlib.Path(g.render(tmp_path / "d.png")).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = pathlib.Path(g.render(tmp_path / "d.svg")).read_text(encoding="utf-8")
    assert f"detach() @ test_graph.py:{CUT_LINE}" in svg


def test_multi_step_trace_draws_the_last_step_by_default():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        for _ in range(3):
            loss = model(torch.randn(5, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    last = tr.graph()
    every = tr.graph(all_steps=True)
    assert any("last of 3 training steps" in n for n in last.notes)
    assert sum(1 for n in last.nodes if n.kind == "root") == 1
    assert sum(1 for n in every.nodes if n.kind == "root") == 3
    assert len(last.nodes) < len(every.nodes)
    # the previous step's optimizer update belongs to that step: the last step shows one update
    (opt,) = [n for n in last.nodes if n.kind == "optimizer"]
    assert not any(line.startswith("x") for line in opt.lines), opt.lines
    (opt_all,) = [n for n in every.nodes if n.kind == "optimizer"]
    assert "x3" in opt_all.lines
