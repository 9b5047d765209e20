"""Focused tests of the diagnosis rules: one real torch program per cause.

Every expected site is computed from a marker comment (``# L:<tag>``) in this file, never
hard-coded. For each cause the test checks the Explanation's cause, its site (the marked
line, or the marked line in ``site.stack``), that the summary names the tensor and the line,
and that the fix is non-empty and on topic. Then: ``tr.failure`` for the five common
backward errors (with the PEP 678 note on the raised exception), ``tr.cuts()`` verdicts,
``tr.check()``, and ``why()`` by name / unknown targets.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

import gradscope
from gradscope import UnknownTargetError

THIS = os.path.realpath(__file__)
BASENAME = os.path.basename(THIS)
_SRC = Path(THIS).read_text(encoding="utf-8").splitlines()

pytestmark = pytest.mark.filterwarnings("ignore")


def line(tag: str) -> int:
    """The line number of the (single) line of this file that ends with ``# L:<tag>``."""
    hits = [i for i, text in enumerate(_SRC, 1) if text.rstrip().endswith(f"# L:{tag}")]
    assert len(hits) == 1, f"marker L:{tag} found on lines {hits}"
    return hits[0]


def _same(a, b) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (TypeError, ValueError):
        return False


def site_hits(site, tag: str) -> bool:
    """True when ``site`` is the marked line, or the marked line is one of its stack frames."""
    if site is None:
        return False
    want = line(tag)
    if _same(site.filename, THIS) and site.lineno == want:
        return True
    return any(_same(f.filename, THIS) and f.lineno == want for f in (site.stack or ()))


def assert_explains(exp, cause: str, target: str, tag: str | None, fix_words, *, line_in_summary=True):
    """The common contract of an Explanation for a problem."""
    assert exp is not None, "no explanation"
    assert exp.cause == cause, f"cause {exp.cause!r} != {cause!r}\n{exp}"
    if tag is not None:
        assert site_hits(exp.site, tag), f"site {exp.site!r} is not line {line(tag)} (L:{tag})\n{exp}"
    assert target in exp.summary, f"summary does not name {target!r}: {exp.summary!r}"
    if tag is not None and line_in_summary:
        lines = {exp.site.lineno} | {f.lineno for f in exp.site.stack if _same(f.filename, THIS)}
        assert any(f"{BASENAME}:{n}" in exp.summary for n in lines), \
            f"summary does not name the line {BASENAME}:{line(tag)}: {exp.summary!r}"
    assert exp.fix and exp.fix.strip(), "empty fix"
    words = [fix_words] if isinstance(fix_words, str) else list(fix_words)
    low = exp.fix.lower()
    assert any(w.lower() in low for w in words), f"fix {exp.fix!r} mentions none of {words}"
    text = str(exp)
    assert cause in text


# =============================================================================================
# one focused test per cause
# =============================================================================================


def test_detach():
    with gradscope.trace() as tr:
        x = torch.randn(4, 3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        y = x * 2
        z = y.detach() * w  # L:detach
        z.sum().backward()
    assert x.grad is None
    assert_explains(tr.why(x), "detach", "x", "detach", "detach")
    assert tr.why(w).cause == "ok"


def test_data_attr():
    class ScaledNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(5, 5)
            self.scale = nn.Parameter(torch.ones(5))

        def forward(self, x):
            h = self.fc(x)
            return h / h.norm(dim=-1, keepdim=True) * self.scale.data  # L:data_attr

    model = ScaledNorm()
    with gradscope.trace() as tr:
        loss = model(torch.randn(6, 5)).pow(2).mean()
        loss.backward()
    assert model.scale.grad is None
    assert_explains(tr.why(model.scale), "data_attr", "scale", "data_attr", ".data")


def test_numpy_roundtrip():
    lin = nn.Linear(4, 4)
    bias = nn.Parameter(torch.zeros(4))
    with gradscope.trace() as tr:
        h = lin(torch.randn(8, 4))
        arr = np.tanh(h.detach().numpy())  # L:numpy
        loss = (torch.from_numpy(arr) + bias).pow(2).mean()
        loss.backward()
    assert lin.weight.grad is None
    assert_explains(tr.why(lin.weight), "numpy_roundtrip", "weight", "numpy", ("torch", "numpy"))


def test_item_roundtrip():
    head = nn.Linear(3, 2)
    with gradscope.trace() as tr:
        log_t = torch.zeros(1, requires_grad=True)
        t = log_t.exp().item()  # L:item
        loss = F.cross_entropy(head(torch.randn(5, 3)) / t, torch.tensor([0, 1, 0, 1, 1]))
        loss.backward()
    assert log_t.grad is None
    assert_explains(tr.why(log_t), "item_roundtrip", "log_t", "item", "item")


def test_tolist_roundtrip():
    box_head = nn.Linear(4, 4)
    cls_head = nn.Linear(4, 2)
    with gradscope.trace() as tr:
        feats = torch.randn(3, 4)
        boxes = box_head(feats)
        rows = boxes.tolist()  # L:tolist
        clipped = torch.tensor([[min(max(v, 0.0), 1.0) for v in r] for r in rows])
        loss = (clipped.sum() + cls_head(feats).pow(2).sum()) / 10
        loss.backward()
    assert box_head.weight.grad is None
    assert_explains(tr.why(box_head.weight), "tolist_roundtrip", "weight", "tolist", "tensor")


def test_tensor_rewrap():
    trunk = nn.Linear(4, 4)
    with gradscope.trace() as tr:
        task_w = torch.ones(2, requires_grad=True)
        h = trunk(torch.randn(5, 4))
        losses = torch.tensor([h.pow(2).mean(), h.abs().mean()])  # L:rewrap
        loss = (task_w * losses).sum()
        loss.backward()
    assert trunk.weight.grad is None
    assert_explains(tr.why(trunk.weight), "tensor_rewrap", "weight", "rewrap", ("stack", "cat"))


def test_no_grad_block():
    enc = nn.Linear(6, 4)
    head = nn.Linear(4, 2)
    with gradscope.trace() as tr:
        x = torch.randn(7, 6)
        with torch.no_grad():
            feats = enc(x)  # L:no_grad
        loss = F.cross_entropy(head(feats), torch.zeros(7, dtype=torch.long))
        loss.backward()
    assert enc.weight.grad is None
    assert_explains(tr.why(enc.weight), "no_grad_block", "weight", "no_grad", "no_grad")


def test_inference_mode():
    backbone = nn.Linear(6, 4)
    head = nn.Linear(4, 2)
    with gradscope.trace() as tr:
        x = torch.randn(7, 6)
        with torch.inference_mode():
            feats = backbone(x)  # L:inference
        loss = head(feats.clone()).pow(2).mean()
        loss.backward()
    assert backbone.weight.grad is None
    assert_explains(tr.why(backbone.weight), "inference_mode", "weight", "inference", "inference_mode")


def test_nondifferentiable_op():
    router = nn.Linear(4, 3)
    experts = nn.Linear(4, 3)
    with gradscope.trace() as tr:
        x = torch.randn(6, 4)
        choice = router(x).argmax(dim=-1)  # L:argmax
        out = experts(x).gather(1, choice[:, None])
        loss = out.pow(2).mean()
        loss.backward()
    assert router.weight.grad is None
    assert_explains(tr.why(router.weight), "nondifferentiable_op", "weight", "argmax",
                    ("softmax", "straight-through", "relaxation"))


def test_nondifferentiable_op_round_gives_zero_grad():
    q = nn.Linear(4, 4)
    with gradscope.trace() as tr:
        x = torch.randn(5, 4)
        y = torch.round(q(x) * 4) / 4  # L:round
        loss = (y - x).pow(2).mean()
        loss.backward()
    assert q.weight.grad is not None and not q.weight.grad.any()
    exp = tr.why(q.weight)
    assert_explains(exp, "nondifferentiable_op", "weight", "round", "straight-through")
    assert exp.status == "zero"


def test_integer_cast():
    count_head = nn.Linear(4, 1)
    other = nn.Linear(4, 1)
    with gradscope.trace() as tr:
        x = torch.randn(6, 4)
        count = count_head(x).long()  # L:int_cast
        loss = (count.float() - 3.0).pow(2).mean() + other(x).pow(2).mean()
        loss.backward()
    assert count_head.weight.grad is None
    assert_explains(tr.why(count_head.weight), "integer_cast", "weight", "int_cast", ("float", "straight-through"))


def test_requires_grad_false():
    with gradscope.trace() as tr:
        X = torch.randn(10, 3)
        y = torch.randn(10, 1)
        w = torch.zeros(3, 1)  # L:requires_grad_false
        b = torch.zeros(1, requires_grad=True)
        loss = ((X @ w + b - y) ** 2).mean()
        loss.backward()
    assert w.grad is None
    assert_explains(tr.why(w), "requires_grad_false", "w", "requires_grad_false", "requires_grad")


def test_frozen_param():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    with gradscope.trace() as tr:
        for p in model[0].parameters():
            p.requires_grad_(False)  # L:frozen
        loss = model(torch.randn(3, 4)).pow(2).mean()
        loss.backward()
    assert model[0].weight.grad is None
    assert_explains(tr.why(model[0].weight), "frozen_param", "0.weight", "frozen", "requires_grad")


def test_non_leaf_no_retain_grad():
    lin = nn.Linear(4, 4)
    with gradscope.trace() as tr:
        x = torch.randn(3, 4)
        hidden = lin(x)  # L:non_leaf
        loss = torch.tanh(hidden).sum()
        loss.backward()
    assert_explains(tr.why(hidden), "non_leaf_no_retain_grad", "hidden", "non_leaf", "retain_grad")


def test_leaf_replaced_by_to():
    net = nn.Linear(4, 1).double()
    with gradscope.trace() as tr:
        img = torch.rand(2, 4, requires_grad=True)
        img = img.double()  # L:leaf_to
        net(img).sum().backward()
    assert img.grad is None
    assert_explains(tr.why(img), "leaf_replaced_by_to", "img", "leaf_to", ("dtype", "leaf"))


def test_param_recreated():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(6, 8)
            self.head = nn.Linear(8, 10)

        def forward(self, x):
            return self.head(torch.relu(self.body(x)))

    with gradscope.trace() as tr:
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model.head = nn.Linear(8, 5)  # L:recreated
        loss = F.cross_entropy(model(torch.randn(4, 6)), torch.tensor([0, 1, 2, 3]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    stale = opt.param_groups[0]["params"][-2]
    assert stale.grad is None
    assert_explains(tr.why(stale), "param_recreated", "head", "recreated", "optimizer")


def test_unused_parameter_discarded_output():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.bn2 = nn.BatchNorm1d(4)

        def forward(self, x):
            out = self.fc(x)
            self.bn2(out)  # L:unused
            return torch.relu(out)

    block = Block()
    with gradscope.trace() as tr:
        block(torch.randn(6, 4)).sum().backward()
    assert block.bn2.weight.grad is None
    assert_explains(tr.why(block.bn2.weight), "unused_parameter", "bn2.weight", "unused", ("assign", "forward", "unused"))


def test_autograd_grad_not_backward():
    model = nn.Linear(3, 1)
    with gradscope.trace() as tr:
        loss = model(torch.randn(5, 3)).pow(2).mean()
        grads = torch.autograd.grad(loss, list(model.parameters()))  # L:autograd_grad
    assert model.weight.grad is None and grads[0] is not None
    assert_explains(tr.why(model.weight), "autograd_grad_not_backward", "weight", "autograd_grad", "backward")


def test_set_to_none_timing():
    model = nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        loss = model(torch.randn(4, 3)).pow(2).mean()
        loss.backward()
        opt.zero_grad()  # L:zero_grad
        opt.step()
    assert model.weight.grad is None
    assert_explains(tr.why(model.weight), "set_to_none_timing", "weight", "zero_grad", "zero_grad")


def test_no_backward():
    model = nn.Linear(3, 2)
    with gradscope.trace() as tr:
        loss = model(torch.randn(4, 3)).pow(2).mean()
    exp = tr.why(model.weight)
    assert_explains(exp, "no_backward", "weight", None, "backward")
    assert exp.site is None


def test_reentrant_checkpoint():
    stem = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
    head = nn.Linear(8, 2)
    with gradscope.trace() as tr:
        x = torch.randn(5, 4)
        h = checkpoint(stem, x, use_reentrant=True)  # L:checkpoint
        loss = head(h).pow(2).mean()
        loss.backward()
    assert stem[0].weight.grad is None
    assert_explains(tr.why(stem[0].weight), "reentrant_checkpoint", "weight", "checkpoint", "use_reentrant=False")


class _ScaledAct(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.save_for_backward(x, alpha)
        return torch.tanh(x) * alpha

    @staticmethod
    def backward(ctx, g):
        x, alpha = ctx.saved_tensors
        return g * alpha * (1 - torch.tanh(x) ** 2), None  # L:custom_fn


def test_custom_function():
    lin = nn.Linear(4, 4)
    with gradscope.trace() as tr:
        alpha = torch.ones(4, requires_grad=True)
        out = _ScaledAct.apply(lin(torch.randn(3, 4)), alpha)
        out.sum().backward()
    assert alpha.grad is None and lin.weight.grad is not None
    assert_explains(tr.why(alpha), "custom_function", "alpha", "custom_fn", ("return", "backward"))


def test_hook_modified():
    model = nn.Linear(4, 2)

    def clip_hook(grad):
        return grad.clamp(-0.0, 0.0)  # L:hook

    with gradscope.trace() as tr:
        model.weight.register_hook(clip_hook)
        model(torch.randn(3, 4)).pow(2).sum().backward()
    assert model.weight.grad is not None and not model.weight.grad.any()
    assert_explains(tr.why(model.weight), "hook_modified", "weight", "hook", "hook")


def test_zero_gradient_dead_relu():
    fc1 = nn.Linear(4, 8)
    fc2 = nn.Linear(8, 1)
    with torch.no_grad():
        fc1.bias.fill_(-100.0)
    with gradscope.trace() as tr:
        x = torch.randn(6, 4)
        h = torch.relu(fc1(x))  # L:dead_relu
        loss = (fc2(h) - 1.0).pow(2).mean()
        loss.backward()
    assert fc1.weight.grad is not None and not fc1.weight.grad.any()
    exp = tr.why(fc1.weight)
    assert_explains(exp, "zero_gradient", "weight", "dead_relu", ("relu", "init", "bias"))
    assert exp.status == "zero"


def test_nonfinite_gradient():
    enc = nn.Linear(3, 3)
    with gradscope.trace() as tr:
        a = enc(torch.ones(2, 3))
        dist = (a - a.detach()).pow(2).sum(-1).sqrt()  # L:sqrt0
        dist.sum().backward()
    assert not torch.isfinite(enc.weight.grad).all()
    exp = tr.why(enc.weight)
    assert_explains(exp, "nonfinite_gradient", "weight", "sqrt0", ("epsilon", "clamp", "stable"))


def test_ok():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    with gradscope.trace() as tr:
        loss = model(torch.randn(5, 4)).pow(2).mean()  # L:ok_loss
        loss.backward()
    exp = tr.why(model[0].weight)
    assert exp.ok and exp.cause == "ok" and exp.status == "received"
    assert "0.weight" in exp.summary
    assert site_hits(exp.site, "ok_loss")
    assert exp.fix


def test_unknown_error_points_at_raising_line():
    lin = nn.Linear(3, 2)
    with pytest.raises(RuntimeError):
        with gradscope.trace() as tr:
            lin(torch.randn(4, 3, dtype=torch.float64))  # L:dtype_err
    exp = tr.failure
    assert exp.cause == "unknown"
    assert site_hits(exp.site, "dtype_err")
    assert exp.fix


def test_every_cause_has_a_focused_test():
    """Adding a cause to gradscope.CAUSES needs a test here (its name quoted in this file)."""
    src = "\n".join(_SRC)
    missing = [c for c in gradscope.CAUSES if f'"{c}"' not in src]
    assert not missing, f"causes without a focused test in {BASENAME}: {missing}"


# =============================================================================================
# tr.failure for the five common backward errors, with the PEP 678 note
# =============================================================================================


def _note(exc) -> str:
    notes = getattr(exc, "__notes__", None) or []
    hits = [n for n in notes if n.startswith("gradscope:")]
    assert hits, f"no gradscope note on the exception (notes: {notes})"
    return hits[0]


def test_failure_does_not_require_grad():
    model = nn.Linear(4, 3)
    with pytest.raises(RuntimeError, match="does not require grad") as ei:
        with gradscope.trace() as tr:
            logits = model(torch.randn(5, 4)).detach()  # L:f_detach
            loss = F.cross_entropy(logits, torch.tensor([0, 1, 2, 0, 1]))
            loss.backward()
    exp = tr.failure
    assert_explains(exp, "detach", "loss", "f_detach", "detach")
    assert exp.status == "error"
    note = _note(ei.value)
    assert "detach" in note and f"{BASENAME}:{line('f_detach')}" in note


def test_failure_inplace_saved_tensor():
    lin = nn.Linear(4, 4)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as ei:
        with gradscope.trace() as tr:
            s = torch.sigmoid(lin(torch.randn(3, 4)))
            s += 1.0  # L:f_inplace
            s.sum().backward()
    exp = tr.failure
    assert_explains(exp, "inplace_saved_tensor", "s", "f_inplace", "out-of-place")
    note = _note(ei.value)
    assert "inplace_saved_tensor" in note and f"{BASENAME}:{line('f_inplace')}" in note


def test_failure_inference_tensors_cannot_be_saved():
    lin = nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward") as ei:
        with gradscope.trace() as tr:
            with torch.inference_mode():
                feats = torch.randn(4, 3) * 2  # L:f_inference
            out = lin(feats)
            out.sum().backward()
    exp = tr.failure
    assert exp.cause == "inference_mode"
    assert site_hits(exp.site, "f_inference"), exp
    assert f"{BASENAME}:{line('f_inference')}" in exp.summary
    assert "inference_mode" in exp.fix
    note = _note(ei.value)
    assert "inference_mode" in note


def test_failure_backward_twice():
    rnn = nn.RNN(2, 4, batch_first=True)
    with pytest.raises(RuntimeError, match="backward through the graph a second time") as ei:
        with gradscope.trace() as tr:
            h = torch.zeros(1, 1, 4)
            for _ in range(2):
                out, h = rnn(torch.randn(1, 3, 2), h)
                out.pow(2).mean().backward()  # L:f_twice
    exp = tr.failure
    assert exp.cause == "backward_twice"
    assert exp.site is not None and _same(exp.site.filename, THIS)
    assert f"{BASENAME}:" in exp.summary
    assert "retain_graph" in exp.fix or "detach" in exp.fix
    note = _note(ei.value)
    assert "backward_twice" in note


def test_failure_numpy_on_requires_grad():
    model = nn.Linear(3, 1)

    def pearson(pred, target):
        p = pred.squeeze(-1).numpy()  # L:f_numpy
        return float(np.corrcoef(p, target.numpy())[0, 1])

    with pytest.raises(RuntimeError, match="Can't call numpy") as ei:
        with gradscope.trace() as tr:
            pred = model(torch.randn(6, 3))
            pearson(pred, torch.randn(6))
    exp = tr.failure
    assert_explains(exp, "numpy_roundtrip", "pred", "f_numpy", "detach")
    note = _note(ei.value)
    assert "numpy_roundtrip" in note and f"{BASENAME}:{line('f_numpy')}" in note


# =============================================================================================
# cuts(): benign vs harmful
# =============================================================================================


def _cuts_at(tr, tag):
    want = line(tag)
    return [e for e in tr.cuts() if e.site is not None and _same(e.site.filename, THIS) and e.site.lineno == want]


def test_cuts_item_logging_is_benign():
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    log = []
    with gradscope.trace() as tr:
        loss = F.cross_entropy(model(torch.randn(5, 4)), torch.tensor([0, 1, 0, 1, 0]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append(loss.item())  # L:c_item
    cuts = _cuts_at(tr, "c_item")
    assert cuts and all(e.verdict == "benign" for e in cuts), [(e.op, e.verdict) for e in cuts]
    assert not tr.cuts(harmful=True)


def test_cuts_gan_detach_fake_in_d_step_is_benign():
    G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
    D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
    opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
    opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
    bce = nn.BCEWithLogitsLoss()
    with gradscope.trace() as tr:
        real = torch.randn(6, 4)
        fake = G(torch.randn(6, 2))
        d_loss = bce(D(real), torch.ones(6, 1)) + bce(D(fake.detach()), torch.zeros(6, 1))  # L:c_gan
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = bce(D(fake), torch.ones(6, 1))
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
    cuts = [e for e in _cuts_at(tr, "c_gan") if e.cut == "detach"]
    assert cuts and all(e.verdict == "benign" for e in cuts)
    assert tr.why(G[0].weight).cause == "ok"


def test_cuts_dqn_target_under_no_grad_is_benign():
    online = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    target = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    target.load_state_dict(online.state_dict())
    with gradscope.trace() as tr:
        s, s2 = torch.randn(8, 4), torch.randn(8, 4)
        a, r = torch.randint(0, 2, (8,)), torch.randn(8)
        with torch.no_grad():
            y = r + 0.99 * target(s2).max(dim=1).values  # L:c_dqn
        q = online(s).gather(1, a[:, None]).squeeze(1)
        F.smooth_l1_loss(q, y).backward()
    assert online[0].weight.grad is not None
    cuts = tr.cuts()
    assert all(e.verdict == "benign" for e in cuts), [(e.op, e.site, e.verdict) for e in cuts]
    assert not tr.cuts(harmful=True)


def test_cuts_harmful_detach():
    enc = nn.Linear(4, 4)
    head = nn.Linear(4, 2)
    with gradscope.trace() as tr:
        feats = enc(torch.randn(5, 4)).detach()  # L:c_harm
        head(feats).pow(2).mean().backward()
    cuts = _cuts_at(tr, "c_harm")
    assert cuts and cuts[0].verdict == "harmful"
    harmful = tr.cuts(harmful=True)
    assert any(e.cut == "detach" for e in harmful)


# =============================================================================================
# check(), why() by name, unknown targets
# =============================================================================================


class MLP(nn.Module):
    def __init__(self, detach=False):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)
        self.detach = detach

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.detach:
            h = h.detach()  # L:mlp_detach
        return self.fc2(h)


def _step(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = F.cross_entropy(model(torch.randn(6, 4)), torch.tensor([0, 1, 1, 0, 1, 0]))
    opt.zero_grad()
    loss.backward()
    opt.step()


def test_check_passes_on_healthy_step():
    model = MLP()
    with gradscope.trace() as tr:
        _step(model)
    tr.check()  # must not raise
    assert tr.summary().ok


def test_check_raises_on_buggy_step():
    model = MLP(detach=True)
    with gradscope.trace() as tr:
        _step(model)
    with pytest.raises(AssertionError) as ei:
        tr.check()
    msg = str(ei.value)
    assert "detach" in msg
    assert f"{BASENAME}:{line('mlp_detach')}" in msg
    assert "fc1.weight" in msg


def test_why_by_name():
    model = MLP()
    with gradscope.trace() as tr:
        _step(model)
    exp = tr.why("fc1.weight")
    assert exp.cause == "ok"
    assert "fc1.weight" in exp.summary
    assert tr.why("model.fc1.weight").target == exp.target


def test_why_unknown_name_lists_close_names():
    model = MLP()
    with gradscope.trace() as tr:
        _step(model)
    with pytest.raises(UnknownTargetError) as ei:
        tr.why("fc1.wieght")
    assert "fc1.weight" in str(ei.value)
    assert isinstance(ei.value, LookupError)


def test_why_unseen_tensor_raises_clear_error():
    model = MLP()
    with gradscope.trace() as tr:
        _step(model)
    stranger = torch.randn(7, 3, requires_grad=True)
    with pytest.raises(UnknownTargetError) as ei:
        tr.why(stranger)
    msg = str(ei.value)
    assert re.search(r"never seen", msg)
    assert "[7, 3]" in msg


# =============================================================================================
# wording: what the explanation names (scenarios of the second batch)
# =============================================================================================
def test_rewrap_names_what_was_copied_not_the_torch_module():
    head = nn.Linear(4, 4)

    class Boxes:
        def __init__(self, boxes):
            self.t = torch.tensor(boxes, dtype=torch.float32)  # L:w_rewrap

    with gradscope.trace() as tr:
        out = head(torch.randn(2, 4))
        b = Boxes(out)
        loss = (b.t * torch.ones(2, 4, requires_grad=True)).sum()
        loss.backward()
    exp = tr.why(head.weight)
    assert_explains(exp, "tensor_rewrap", "out was copied", "w_rewrap", "use `boxes` itself")
    assert "torch was copied" not in exp.summary


def test_float_of_an_expression_names_the_expression():
    scale = nn.Parameter(torch.tensor(0.5))
    w = torch.randn(3, requires_grad=True)
    with gradscope.trace() as tr:
        s = float(scale.exp())  # L:w_float
        (w * s).sum().backward()
    exp = tr.why(scale)
    assert_explains(exp, "item_roundtrip", "scale.exp() became a Python number", "w_float", "tensor")


class _GradOff:
    """A user context manager that switches grad off in __enter__ (not a `with torch.no_grad()` line)."""

    def __enter__(self):
        torch.set_grad_enabled(False)  # L:w_enter

    def __exit__(self, *exc):
        torch.set_grad_enabled(True)


def test_grad_switched_off_by_a_user_context_manager_is_named():
    enc, head = nn.Linear(4, 4), nn.Linear(4, 2)
    with gradscope.trace() as tr:
        with _GradOff():
            h = enc(torch.randn(3, 4))  # L:w_cm
        head(h).sum().backward()
    exp = tr.why(enc.weight)
    assert_explains(exp, "no_grad_block", "switched off by `torch.set_grad_enabled(False)`", "w_cm",
                    "keep grad on")
    assert f"{BASENAME}:{line('w_enter')}" in exp.summary and "_GradOff.__enter__" in exp.summary


def test_discarded_container_output_names_the_container():
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.used = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            self.aux = nn.Sequential(nn.Linear(4, 4), nn.ReLU())

        def forward(self, x):
            self.aux(x)  # L:w_dead
            return self.used(x)

    m = Two()
    with gradscope.trace() as tr:
        m(torch.randn(2, 4)).sum().backward()
    exp = tr.why(m.aux[0].weight)
    assert_explains(exp, "unused_parameter", "aux's output was never used", "w_dead", "use the output of `aux`")
    assert "aux.1" not in exp.summary


def test_embedding_of_only_padding_indices_says_so():
    emb = nn.Embedding(10, 4, padding_idx=0)
    head = nn.Linear(4, 2)
    with gradscope.trace() as tr:
        e = emb(torch.zeros(3, 5, dtype=torch.long))  # L:w_pad
        head(e.mean(1)).sum().backward()
    exp = tr.why(emb.weight)
    assert_explains(exp, "zero_gradient", "emb.weight", "w_pad", "every one is the padding index")
    assert "padding_idx" in exp.detail


def test_model_called_only_through_its_methods_is_named_from_the_callers_variable():
    class PINN(nn.Module):
        def __init__(self):
            super().__init__()
            self.u = nn.Linear(2, 1)
            self.log_nu = nn.Parameter(torch.tensor(-1.0))

        def residual(self, x):
            return self.u(x) * self.log_nu.exp()

    pinn = PINN()
    with gradscope.trace() as tr:
        pinn.residual(torch.randn(5, 2)).pow(2).mean().backward()
    names = {t.name for t in tr.data.tensors.values() if t.role == "param"}
    assert {"u.weight", "u.bias", "log_nu"} <= names, names


def test_hooks_made_in_a_loop_that_share_the_loop_variable_say_so():
    layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)])
    scales = [1.0, 0.5, 0.0]
    with gradscope.trace() as tr:
        hs = []
        for lin, mult in zip(layers, scales):
            hs.append(lin.weight.register_hook(lambda g: g * mult))  # L:w_late
        x = torch.randn(2, 3)
        for lin in layers:
            x = lin(x)
        x.sum().backward()
    for h in hs:
        h.remove()
    exp = tr.why(layers[0].weight)
    assert_explains(exp, "hook_modified", "layers.0.weight", "w_late", "lambda g, mult=mult")
    assert "`mult`" in exp.fix


def test_one_hook_with_a_closure_gets_the_usual_fix():
    lin = nn.Linear(3, 3)
    mult = 0.0
    with gradscope.trace() as tr:
        h = lin.weight.register_hook(lambda g: g * mult)  # L:w_one
        lin(torch.randn(2, 3)).sum().backward()
    h.remove()
    exp = tr.why(lin.weight)
    assert_explains(exp, "hook_modified", "lin.weight", None, "hook's arithmetic")


def test_every_parameter_detached_in_a_comprehension_is_one_explanation_for_all():
    from torch.func import functional_call

    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            params = {n: p.detach() for n, p in net.named_parameters()}  # L:w_comp
            out = functional_call(net, params, (torch.randn(5, 3),)).sum()
            out.backward()
    f = tr.failure
    assert_explains(f, "detach", "every one of 4 tensors on that line (net.0.weight", "w_comp", "drop the detach()")
    assert "were cut off" in f.summary


def test_zero_grad_of_an_optimizer_that_also_holds_the_other_models_parameters():
    G, D = nn.Linear(4, 4), nn.Linear(4, 1)
    opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(list(G.parameters()) + list(D.parameters()), lr=0.1)
    with gradscope.trace() as tr:
        fake = G(torch.randn(8, 4))
        (-D(fake).mean()).backward()  # fills G's gradients
        opt_d.zero_grad()  # L:w_two_opts
        d_loss = D(fake.detach()).mean() - D(torch.randn(8, 4)).mean()
        d_loss.backward()  # never reaches G
        opt_d.step()
        opt_g.step()
    exp = tr.why(G.weight)
    assert_explains(exp, "set_to_none_timing", "param_groups of 2 optimizers", "w_two_opts", "only the parameters of the model it trains")


def test_parameter_rewrapped_every_step_gets_an_in_place_fix():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.alpha = nn.Parameter(torch.tensor(0.5))
            self.lin = nn.Linear(3, 1)

        def forward(self, x):
            return self.lin(x) * self.alpha

    model = M()
    old = model.alpha
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        for _ in range(2):
            opt.zero_grad()
            model(torch.randn(4, 3)).pow(2).mean().backward()
            opt.step()
            model.alpha = nn.Parameter(model.alpha.clamp(0.0, 1.0))  # L:w_rewrap_step
    exp = tr.why(old)
    assert exp.cause == "param_recreated" and site_hits(exp.site, "w_rewrap_step")
    assert "with torch.no_grad(): model.alpha.clamp_(" in exp.fix


class _Refine(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.refiner = nn.Linear(4, 4)
        self.refine = False

    def _maybe_refine(self, h):
        if not self.refine:
            return h  # L:w_helper_return
        return self.refiner(h)

    def forward(self, x):
        return self._maybe_refine(self.body(x))


def test_early_return_in_a_helper_method_is_the_site():
    m = _Refine()
    with gradscope.trace() as tr:
        m(torch.randn(2, 4)).sum().backward()
    exp = tr.why(m.refiner.weight)
    assert_explains(exp, "unused_parameter", "`_maybe_refine` returned early", "w_helper_return", "condition")


def test_forward_hook_that_returns_its_input_replaces_the_output():
    net = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 1))

    def collect(mod, inp, out):
        return inp[0]  # L:w_fwd_hook

    h = net[1].register_forward_hook(collect)
    try:
        with gradscope.trace() as tr:
            net(torch.randn(3, 4)).sum().backward()
    finally:
        h.remove()
    exp = tr.why(net[1].weight)
    assert_explains(exp, "hook_modified", "a forward hook on `net.1` returns a value", "w_fwd_hook", "return None")


class _Leaky(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.where(x > 0, x, 0.2 * x)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.where(x > 0, 1.0, 0.2)  # L:w_once


def test_second_differentiation_through_once_differentiable_is_explained():
    critic = nn.Linear(3, 1)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="once_differentiable"):
        with tr:
            x = torch.randn(4, 3, requires_grad=True)
            out = critic(_Leaky.apply(x)).sum()
            (g,) = torch.autograd.grad(out, x, create_graph=True)  # L:w_penalty
            g.pow(2).sum().backward()
    f = tr.failure
    assert_explains(f, "custom_function", "decorated with @once_differentiable", "w_once", "remove @once_differentiable")
    assert f"{BASENAME}:{line('w_penalty')}" in f.summary


def test_a_hinge_that_is_zero_everywhere_is_not_called_a_dead_relu():
    emb = nn.Linear(4, 4)
    with gradscope.trace() as tr:
        a, p, n = emb(torch.randn(6, 4)), emb(torch.randn(6, 4)), emb(torch.randn(6, 4))
        d_ap, d_an = (a - p).pow(2).sum(1), (a - n).pow(2).sum(1)
        loss = F.relu(d_ap - d_an - 1e6).mean()  # L:w_hinge
        loss.backward()
    exp = tr.why(emb.weight)
    assert_explains(exp, "zero_gradient", "emb.weight", "w_hinge", "check the margin in `")
    assert "hinge" in exp.detail and "dead ReLU" not in exp.detail


def test_torch_func_grad_is_named_with_a_dict_fix():
    from torch.func import functional_call, grad

    net = nn.Linear(3, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        params = dict(net.named_parameters())
        grads = grad(lambda p: functional_call(net, p, (torch.randn(4, 3),)).pow(2).mean())(params)  # L:w_func
        opt.step()
    exp = tr.why(net.weight)
    assert_explains(exp, "autograd_grad_not_backward", "torch.func.grad", "w_func", "grads[n]")


def test_parameter_scaled_outside_its_constructor_is_not_fixed_by_retain_grad():
    class Adapter(nn.Module):
        def __init__(self):
            super().__init__()
            self.U = nn.Parameter(torch.randn(4, 2)) * 0.02  # L:w_scaled_param

        def forward(self, x):
            return x @ self.U

    with gradscope.trace() as tr:
        ad = Adapter()
        ad(torch.randn(3, 4)).sum().backward()
    exp = tr.why(ad.U)
    assert_explains(exp, "non_leaf_no_retain_grad", "is not a leaf", "w_scaled_param", "inside the Parameter")
    assert "never sees" in exp.fix


def _pseudo_batches(teacher, n):
    with torch.no_grad():  # L:w_gen_with
        for _ in range(n):
            x = torch.randn(4, 3)
            yield x, teacher(x).argmax(1)


def test_a_generator_that_yields_inside_no_grad_is_named():
    teacher, student = nn.Linear(3, 2), nn.Linear(3, 2)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            for x, y in _pseudo_batches(teacher, 1):
                F.cross_entropy(student(x), y).backward()  # L:w_gen_use
    f = tr.failure
    assert f.cause == "no_grad_block" and site_hits(f.site, "w_gen_use")
    assert f"{BASENAME}:{line('w_gen_with')}" in f.summary and "yields inside that block" in f.summary
    assert "before the yield" in f.fix


def test_a_detached_value_that_feeds_two_terms_keeps_its_detach_in_the_fix():
    actor, critic = nn.Linear(3, 2), nn.Linear(3, 1)
    with gradscope.trace() as tr:
        s = torch.randn(5, 3)
        adv = (torch.randn(5) - critic(s).squeeze(1)).detach()  # L:w_adv
        actor_loss = -(actor(s).log_softmax(1)[:, 0] * adv).mean()
        critic_loss = adv.pow(2).mean()
        (actor_loss + critic_loss).backward()
    exp = tr.why(critic.weight)
    assert_explains(exp, "detach", "was detached", "w_adv", "undetached value")
    assert "keep that detach()" in exp.fix


class _CachedBias(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Linear(2, 4)
        self.proj = nn.Linear(4, 4)
        self._bias = None

    def forward(self, x):
        if self._bias is None:
            self._bias = self.table(torch.ones(1, 2))  # L:w_cache
        return self.proj(x) + self._bias


def test_a_value_cached_under_inference_mode_and_reused_in_training_says_so():
    m = _CachedBias()
    with gradscope.trace() as tr:
        with torch.inference_mode():
            m(torch.randn(3, 4))  # a sanity/validation call fills the cache
        for _ in range(2):
            m(torch.randn(3, 4)).sum().backward()
    exp = tr.why(m.table.weight)
    assert_explains(exp, "inference_mode", "that result was cached", "w_cache", "across calls")


class _MarkedSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.round(x)
        ctx.mark_non_differentiable(out)  # L:w_mark
        return out

    @staticmethod
    def backward(ctx, g):
        return g


def test_mark_non_differentiable_on_a_float_output_is_the_site():
    enc, dec = nn.Linear(4, 4), nn.Linear(4, 1)
    with gradscope.trace() as tr:
        dec(_MarkedSTE.apply(enc(torch.randn(3, 4)))).sum().backward()
    exp = tr.why(enc.weight)
    assert_explains(exp, "nondifferentiable_op", "marks its output non-differentiable", "w_mark",
                    "remove ctx.mark_non_differentiable")


class _Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for blk in self.blocks[:-1]:  # L:w_slice
            x = blk(x)
        return x


def test_a_loop_over_part_of_a_module_list_is_the_site():
    m = _Stack()
    with gradscope.trace() as tr:
        m(torch.randn(2, 4)).sum().backward()
    exp = tr.why(m.blocks[2].weight)
    assert_explains(exp, "unused_parameter", "goes over only part of `blocks` (2 of its 3 modules ran)", "w_slice",
                    "loop over all of `blocks`")


def test_hooks_sharing_a_variable_that_never_changed_are_not_called_late_binding():
    layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
    factor = 1 // 4  # 0: integer division
    with gradscope.trace() as tr:
        hs = [lin.weight.register_hook(lambda g: g * factor) for lin in layers]  # L:w_shared_const
        x = torch.randn(2, 3)
        for lin in layers:
            x = lin(x)
        x.sum().backward()
    for h in hs:
        h.remove()
    exp = tr.why(layers[0].weight)
    assert exp.cause == "hook_modified" and "bind late" not in exp.fix


def test_a_manual_sgd_step_that_rebinds_the_leaf_under_no_grad():
    w = torch.randn(3, requires_grad=True)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            for _ in range(2):
                loss = (w * torch.randn(3)).pow(2).sum()
                loss.backward()
                with torch.no_grad():
                    w = w - 0.1 * w.grad  # L:w_sgd
    f = tr.failure
    assert_explains(f, "no_grad_block", "`w` was rebound", "w_sgd", "w -= lr * w.grad")


def _build():
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))  # L:w_build


def test_a_model_rebuilt_and_loaded_after_the_optimizer_is_a_recreated_parameter():
    model = _build()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    old = model[0].weight
    with gradscope.trace() as tr:
        state = {k: v.clone() for k, v in model.state_dict().items()}
        model = _build()  # L:w_rebuild
        model.load_state_dict(state)
        model(torch.randn(5, 3)).pow(2).mean().backward()
        opt.step()
    exp = tr.why(old)
    assert exp.cause == "param_recreated" and site_hits(exp.site, "w_rebuild")
    assert "copied" in exp.summary and "into a new parameter" in exp.summary and "load the state" in exp.fix


def test_weight_norm_applied_after_the_optimizer_is_a_recreated_parameter():
    from torch.nn.utils.parametrizations import weight_norm

    disc = nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1))
    opt = torch.optim.SGD(disc.parameters(), lr=0.1)
    old = disc[0].weight
    with gradscope.trace() as tr:
        disc[0] = weight_norm(disc[0])  # L:w_wn
        disc(torch.randn(5, 3)).mean().backward()
        opt.step()
    exp = tr.why(old)
    assert_explains(exp, "param_recreated", "moves the weight into new Parameters", "w_wn", "before creating the optimizer")


def test_cross_entropy_over_a_single_logit_is_named():
    net = nn.Linear(4, 1)
    with gradscope.trace() as tr:
        out = net(torch.randn(6, 4))
        loss = F.cross_entropy(out, torch.rand(6, 1))  # L:w_one_logit
        loss.backward()
    exp = tr.why(net.weight)
    assert_explains(exp, "zero_gradient", "net.weight", "w_one_logit", "BCEWithLogitsLoss")
    assert "size 1" in exp.detail


def test_a_forward_hook_adapter_skipped_by_calling_forward_directly():
    class Adapter(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.Linear(4, 2, bias=False)
            self.up = nn.Linear(2, 4, bias=False)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone, self.head = nn.Linear(4, 4), nn.Linear(4, 1)

    model, adapter = Model(), Adapter()
    h = model.backbone.register_forward_hook(lambda m, i, o: o + adapter.up(adapter.down(i[0])))
    try:
        with gradscope.trace() as tr:
            feats = model.backbone.forward(torch.randn(3, 4))  # L:w_direct
            model.head(feats).sum().backward()
    finally:
        h.remove()
    exp = tr.why(adapter.down.weight)
    assert_explains(exp, "unused_parameter", "skips its hooks", "w_direct", "not its .forward(x)")


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def test_an_optimizer_built_over_a_second_instance_is_blamed_at_that_line():
    with gradscope.trace() as tr:
        model = _Net()
        opt = torch.optim.SGD(_Net().parameters(), lr=0.1)  # L:w_second
        loss = F.cross_entropy(model(torch.randn(8, 4)), torch.randint(0, 2, (8,)))
        opt.zero_grad()
        loss.backward()
        opt.step()
    exp = tr.why(opt.param_groups[0]["params"][0])
    assert_explains(exp, "param_recreated", "second Linear instance", "w_second",
                    "in `opt = torch.optim.SGD(_Net().parameters(), lr=0.1)`, pass the parameters of the Linear that runs")


def test_variable_rewrap_is_reported_at_its_own_line():
    from torch.autograd import Variable

    enc, head = nn.Linear(4, 4), nn.Linear(4, 2)
    with gradscope.trace() as tr:
        feats = enc(torch.randn(8, 4))
        feats = Variable(feats, requires_grad=True)  # L:w_variable
        F.cross_entropy(head(feats), torch.randint(0, 2, (8,))).backward()
    exp = tr.why(enc.weight)
    assert_explains(exp, "tensor_rewrap", "feats was copied", "w_variable", "use `feats` itself")


def test_one_backward_per_head_on_a_shared_trunk_suggests_one_backward():
    trunk, heads = nn.Linear(4, 8), [nn.Linear(8, 2) for _ in range(2)]
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="second time"):
        with tr:
            feats = torch.relu(trunk(torch.randn(6, 4)))  # L:w_trunk
            for h in heads:
                F.cross_entropy(h(feats), torch.randint(0, 2, (6,))).backward()
    f = tr.failure
    assert_explains(f, "backward_twice", "feeds more than one loss", "w_trunk", "add the losses and call backward once")


def test_a_layer_kept_in_a_plain_list_gets_gradients_but_no_optimizer_holds_it():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(4, 4)
            self.extra = [nn.Linear(4, 4)]  # a plain list: not registered

        def forward(self, x):
            return self.extra[0](self.inp(x))

    m = M()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        opt.zero_grad()
        m(torch.randn(3, 4)).sum().backward()
        opt.step()
    exp = tr.why(m.extra[0].weight)
    assert exp.cause == "ok" and "no optimizer in the trace holds" in exp.summary and "nn.ModuleList" in exp.fix
    assert "no optimizer" not in tr.why(m.inp.weight).summary


def test_optimizer_step_under_a_graph_retained_across_steps_suggests_detaching_the_state():
    rnn = nn.RNN(3, 4, batch_first=True)
    opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="inplace"):
        with tr:
            h = torch.zeros(1, 2, 4)
            for _ in range(2):
                out, h = rnn(torch.randn(2, 5, 3), h)
                out.pow(2).mean().backward(retain_graph=True)
                opt.step()  # L:w_retained_step
    f = tr.failure
    assert_explains(f, "inplace_saved_tensor", "modified", "w_retained_step", "detach the carried state every step")


def test_student_run_inside_the_teachers_no_grad_block_is_not_the_teachers_freeze():
    teacher, student = nn.Linear(4, 3), nn.Linear(4, 3)
    teacher.requires_grad_(False)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            x = torch.randn(5, 4)
            with torch.no_grad():
                t_logits = teacher(x)
                s_logits = student(x)  # L:w_student
            F.kl_div(s_logits.log_softmax(1), t_logits.softmax(1), reduction="batchmean").backward()
    f = tr.failure
    assert f.cause == "no_grad_block" and site_hits(f.site, "w_student")


def test_a_value_written_into_an_integer_buffer_is_an_integer_cast():
    net = nn.Linear(3, 1)
    y = torch.randint(0, 5, (4,))
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            x = torch.randn(4, 3)
            preds = torch.zeros_like(y)
            for i in range(4):
                preds[i] = net(x[i]).squeeze() * 10  # L:w_intbuf
            ((preds - y).float() ** 2).mean().backward()
    f = tr.failure
    assert f.cause == "integer_cast" and site_hits(f.site, "w_intbuf")


class _Proto(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.protos = nn.Parameter(torch.randn(3, 4))

    @torch.no_grad()
    def normed(self):
        return F.normalize(self.protos, dim=-1)  # L:w_decorated

    def forward(self, x):
        return self.enc(x) @ self.normed().t()


def test_a_no_grad_decorated_helper_called_from_forward_gets_a_decorator_fix():
    m = _Proto()
    with gradscope.trace() as tr:
        m(torch.randn(2, 4)).sum().backward()
    exp = tr.why(m.protos)
    assert_explains(exp, "no_grad_block", "protos", "w_decorated", "remove @torch.no_grad() from `_Proto.normed`")


def test_a_freeze_loop_over_named_modules_that_froze_the_whole_model_says_so():
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            for name, m in model.named_modules():
                if not name.startswith("1"):
                    m.requires_grad_(False)  # L:w_freeze_all
            model(torch.randn(3, 4)).sum().backward()
    f = tr.failure
    assert_explains(f, "frozen_param", "froze every parameter in the step", "w_freeze_all", "named_parameters()")


class _Scale:
    """A gradient hook written as a class."""

    def __init__(self, k):
        self.k = k

    def __call__(self, g):
        return g * self.k  # L:w_hook_obj


def test_a_hook_written_as_a_callable_object_is_named_at_its_return():
    lin = nn.Linear(3, 2)
    with gradscope.trace() as tr:
        h = lin.weight.register_hook(_Scale(0.0))
        lin(torch.randn(4, 3)).sum().backward()
    h.remove()
    exp = tr.why(lin.weight)
    assert exp.cause == "hook_modified" and site_hits(exp.site, "w_hook_obj")


def test_a_reflected_comparison_is_shown_as_the_operator_the_user_wrote():
    window = nn.Parameter(torch.tensor(2.0))
    w = torch.randn(5, requires_grad=True)
    with gradscope.trace() as tr:
        dist = torch.arange(5.0)
        mask = torch.where(dist <= window, 1.0, 0.0)  # L:w_cmp
        (w * mask).sum().backward()
    exp = tr.why(window)
    assert_explains(exp, "nondifferentiable_op", "the comparison `<=`", "w_cmp", "relaxation")
    assert "ge()" not in exp.summary


def test_a_frozen_tied_weight_names_its_other_name():
    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(10, 4)
            self.lm_head = nn.Linear(4, 10, bias=False)
            self.lm_head.weight = self.wte.weight

        def forward(self, ids):
            return self.lm_head(self.wte(ids))

    model = LM()
    with gradscope.trace() as tr:
        model.wte.weight.requires_grad = False  # L:w_tied_freeze
        model(torch.randint(0, 10, (2, 3)))
    exp = tr.why(model.lm_head.weight)
    assert exp.cause == "frozen_param" and "`lm_head.weight` is the same Parameter" in exp.summary


def test_torch_normal_sampling_is_nondifferentiable_with_a_reparameterisation_fix():
    mu = nn.Parameter(torch.zeros(3))
    log_sigma = nn.Parameter(torch.zeros(3))
    with gradscope.trace() as tr:
        w = torch.normal(mu, log_sigma.exp())  # L:w_normal
        (w * torch.randn(3)).sum().backward()
    exp = tr.why(mu)
    assert exp.cause == "nondifferentiable_op" and site_hits(exp.site, "w_normal") and "randn_like" in exp.fix


def test_a_hook_that_zeroes_the_gradient_in_place_is_named():
    emb_layer, head = nn.Embedding(10, 4), nn.Linear(4, 1)
    with gradscope.trace() as tr:
        emb = emb_layer(torch.randint(0, 10, (3, 5)))
        emb.register_hook(lambda g: g.zero_())  # L:w_inplace_hook
        head(emb.mean(1)).sum().backward()
    exp = tr.why(emb_layer.weight)
    assert exp.cause == "hook_modified" and site_hits(exp.site, "w_inplace_hook")


def test_a_loss_rebuilt_with_torch_tensor_from_item_values_names_the_item():
    net = nn.Linear(3, 1)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            running = 0.0
            for _ in range(2):
                loss = net(torch.randn(4, 3)).pow(2).mean()
                running += loss.item()  # L:w_running
            loss = torch.tensor(running / 2)
            loss.backward()
    f = tr.failure
    assert f.cause == "item_roundtrip" and site_hits(f.site, "w_running")


def test_a_parameter_unfrozen_after_the_optimizer_was_built_from_trainable_ones_says_so():
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 1))
    with gradscope.trace() as tr:
        for p in model[0].parameters():
            p.requires_grad = False
        opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
        for p in model[0].parameters():
            p.requires_grad = True  # L:w_unfreeze
        opt.zero_grad()
        model(torch.randn(3, 4)).sum().backward()
        opt.step()
    exp = tr.why(model[0].weight)
    assert exp.cause == "ok" and "unfrozen only later" in exp.summary and "add_param_group" in exp.fix
    assert f"{BASENAME}:{line('w_unfreeze')}" in exp.summary


def test_a_detach_followed_by_logging_the_loss_is_the_detach_not_the_logging():
    enc, head = nn.Linear(4, 4), nn.Linear(4, 2)
    with gradscope.trace() as tr:
        feats = enc(torch.randn(6, 4)).detach()  # L:w_det_log
        loss = F.cross_entropy(head(feats), torch.randint(0, 2, (6,)))
        loss.backward()
        logged = loss.item()
    exp = tr.why(enc.weight)
    assert_explains(exp, "detach", "was detached", "w_det_log", "detach")


def test_a_retained_activation_zeroed_by_a_saturated_clamp_is_located():
    enc, head = nn.Linear(4, 4), nn.Linear(4, 1)
    with gradscope.trace() as tr:
        h = enc(torch.randn(5, 4)) - 100.0
        h.retain_grad()
        z = torch.clamp(h, min=0.1)  # L:w_ret_clamp
        head(z).sum().backward()
    exp = tr.why(h)
    assert exp.cause == "zero_gradient" and site_hits(exp.site, "w_ret_clamp")


def test_a_retained_activation_zeroed_by_its_own_hook_is_the_hook():
    enc, head = nn.Linear(4, 4), nn.Linear(4, 1)
    with gradscope.trace() as tr:
        h = enc(torch.randn(5, 4))
        h.retain_grad()
        h.register_hook(lambda g: g * 0.0)  # L:w_ret_hook
        head(h).sum().backward()
    exp = tr.why(h)
    assert exp.cause == "hook_modified" and site_hits(exp.site, "w_ret_hook")


def test_not_trained_target_network_under_no_grad():
    """A parameter no optimizer holds, used only under no_grad (a DQN target network): not a problem."""
    online, target = nn.Linear(4, 3), nn.Linear(4, 3)
    target.load_state_dict(online.state_dict())
    opt = torch.optim.SGD(online.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        q = online(torch.randn(8, 4)).max(1).values
        with torch.no_grad():
            nxt = target(torch.randn(8, 4)).max(1).values  # L:w_target
        loss = F.mse_loss(q, 1.0 + 0.9 * nxt)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert target.weight.grad is None and target.weight.requires_grad
    exp = tr.why(target.weight)
    assert_explains(exp, "not_trained", "target.weight", "w_target", "optimizer")
    assert "no optimizer in the trace holds it" in exp.summary
    tr.check()  # not starved: the step does not train it
    assert not tr.cuts(harmful=True)
