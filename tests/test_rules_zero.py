"""The rules for an all-zero gradient (statuses ``zero`` and ``zero_node``, gradscope.diagnosis.rules_zero), each on
a real torch run or a saved trace: a write through ``.data`` into a saved tensor, zeros written after backward, a
retained activation zeroed, and per backward node what zeroed it (a hook that replaced the gradient, a tensor hook
returning zeros, an op whose backward is zero: a dead ReLU, a saturated clamp, round, sampling, padding indices,
cross entropy over one logit, a hinge that never fires).

Each test checks the cause, the site (found from a marker comment in this file: ``# L:<tag>`` or ``# <mark>``,
never hard-coded; tests/_rules_helpers.py), the names in the summary and the fix.
"""
from __future__ import annotations

import io
import json

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from rich.console import Console

import gradscope

from _rules_helpers import Markers, _TwoLayer, mlp, batch, load, case_line

M = Markers(__file__)
line_of = M.line_of
at = M.at
on_line = M.on_line
site_hits = M.site_hits
assert_explains = M.assert_explains

pytestmark = pytest.mark.filterwarnings("ignore")


# --- rule corrupting_write: A write through .data / a detached alias into a tensor autograd saved. -------------------

def _write_through_data(write):
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    s = torch.sigmoid(w * x)
    write(s)
    loss = (s * s).sum()
    loss.backward()
    return w


def test_write_through_data_into_a_saved_tensor_is_named_and_harmful():
    def write(s):
        s.data.mul_(0)  # alias-write

    with gradscope.trace() as tr:
        w = _write_through_data(write)
    assert torch.count_nonzero(w.grad) == 0
    exp = tr.why(w)
    assert exp.cause == "inplace_saved_tensor", exp
    assert exp.site.lineno == line_of("alias-write")
    assert "mul_()" in exp.summary and "`s`" in exp.summary
    harmful = [e for e in tr.cuts() if e.verdict == "harmful"]
    assert any(e.kind == "inplace" and e.site.lineno == line_of("alias-write") for e in harmful), harmful


@pytest.mark.parametrize("op", ["rsqrt", "sqrt", "exp", "tanh", "sigmoid"])
def test_a_write_into_the_result_of_an_op_whose_backward_reads_its_result_is_a_corruption(op):
    """rsqrt/sqrt/exp/tanh/sigmoid compute their gradient from their own result: zeroing that result through .data
    corrupts the gradient (all zeros for some, wrong for others), whatever the gradient's status."""
    w = nn.Parameter(torch.ones(3))
    with gradscope.trace() as tr:
        s = getattr(torch, op)(w * w + 1)
        s.data.mul_(0)  # L:result_write
        s.sum().backward()
    exp = tr.why(w)
    assert exp.cause == "inplace_saved_tensor" and site_hits(exp.site, "result_write"), exp


# What each op's backward reads, as torch computes it (checked against torch in each test below, so that the expected
# verdict is torch's own behaviour, not a copy of gradscope's tables): the result only, nothing, or its input.
_RESULT_ONLY = {
    "sigmoid": torch.sigmoid, "tanh": torch.tanh, "exp": torch.exp, "softmax": lambda a: torch.softmax(a, -1),
    "log_softmax": lambda a: torch.log_softmax(a, -1), "relu": torch.relu, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "expm1": torch.expm1, "reciprocal": torch.reciprocal}
_NOTHING = {
    "add": lambda a: a.add(1.0), "__add__": lambda a: a + 1.0, "__radd__": lambda a: 1.0 + a, "sub": lambda a: a.sub(1.0),
    "__sub__": lambda a: a - 1.0, "__rsub__": lambda a: 1.0 - a, "neg": lambda a: a.neg(), "__neg__": lambda a: -a,
    "sum": lambda a: a.sum(), "mean": lambda a: a.mean(), "view": lambda a: a.view(3, 2), "reshape": lambda a: a.reshape(6),
    "expand": lambda a: a.expand(2, 2, 3), "clone": lambda a: a.clone(), "contiguous": lambda a: a.t().contiguous(),
    "flatten": lambda a: a.flatten(), "squeeze": lambda a: a.squeeze(), "unsqueeze": lambda a: a.unsqueeze(1),
    "permute": lambda a: a.permute(1, 0), "transpose": lambda a: a.transpose(0, 1), "t": lambda a: a.t(),
    "__getitem__": lambda a: a[0], "cat": lambda a: torch.cat([a, a]), "stack": lambda a: torch.stack([a, a]),
    "to": lambda a: a.to(torch.float64), "float": lambda a: a.float(), "double": lambda a: a.double(),
    "half": lambda a: a.half()}
_INPUT = {"mul": lambda a: a * a, "sin": torch.sin, "elu": F.elu, "selu": F.selu, "hardsigmoid": F.hardsigmoid,
          "__pow__": lambda a: a ** 3}
_POSITIVE = {"sqrt", "rsqrt", "reciprocal"}  # (their domain)


def _alias_write_program(name, op, into):
    """``w -> a -> op(a)``, then a write through ``.data`` into ``a`` ("input") or into the op's result ("result")
    before backward; returns w (its .grad filled)."""
    lo, hi = (0.5, 1.5) if name in _POSITIVE else (-1.5, 1.5)
    w = nn.Parameter(torch.linspace(lo, hi, 6).reshape(2, 3))
    a = w * 2
    s = op(a)
    if into == "input":
        a.data.mul_(0.5).add_(0.1)  # L:alias_write_input
    elif into == "result":
        s.data.mul_(0.5).add_(0.1)  # L:alias_write_result
    c = torch.linspace(1, 2, s.numel()).reshape(s.shape).to(s.dtype)
    (s * c).sum().backward()
    return w


def _write_changes_the_gradient(name, op, into):
    return not torch.allclose(_alias_write_program(name, op, None).grad, _alias_write_program(name, op, into).grad)


@pytest.mark.parametrize("name", sorted(_RESULT_ONLY))
def test_a_write_into_the_result_of_an_op_that_reads_its_result_is_a_corruption_and_into_its_input_is_not(name):
    op = _RESULT_ONLY[name]
    assert _write_changes_the_gradient(name, op, "result") and not _write_changes_the_gradient(name, op, "input")
    with gradscope.trace() as tr:
        w = _alias_write_program(name, op, "result")
    exp = tr.why(w)
    assert exp.cause == "inplace_saved_tensor" and site_hits(exp.site, "alias_write_result"), (name, exp)
    with gradscope.trace() as tr:
        w = _alias_write_program(name, op, "input")
    assert tr.why(w).cause == "ok", (name, tr.why(w))


@pytest.mark.parametrize("name", sorted(_NOTHING))
def test_a_write_into_the_input_of_an_op_whose_backward_reads_nothing_is_not_a_corruption(name):
    op = _NOTHING[name]
    assert not _write_changes_the_gradient(name, op, "input")
    with gradscope.trace() as tr:
        w = _alias_write_program(name, op, "input")
    assert tr.why(w).cause == "ok", (name, tr.why(w))


@pytest.mark.parametrize("name", sorted(_INPUT))
def test_a_write_into_the_input_of_an_op_that_reads_its_input_is_a_corruption_and_into_its_result_is_not(name):
    op = _INPUT[name]
    assert _write_changes_the_gradient(name, op, "input") and not _write_changes_the_gradient(name, op, "result")
    with gradscope.trace() as tr:
        w = _alias_write_program(name, op, "input")
    exp = tr.why(w)
    assert exp.cause == "inplace_saved_tensor" and site_hits(exp.site, "alias_write_input"), (name, exp)
    with gradscope.trace() as tr:
        w = _alias_write_program(name, op, "result")
    assert tr.why(w).cause == "ok", (name, tr.why(w))


def test_write_through_data_into_a_saved_tensor():
    diag, tid = load("data_write")
    exp = diag.why(tid)
    assert exp.cause == "inplace_saved_tensor" and exp.site.lineno == case_line("data-write")
    assert any(e.kind == "inplace" and diag.verdicts()[e.index] == "harmful" for e in diag.cuts())


# --- rule zeroed_after_backward: The gradient arrived non-zero, then something wrote zeros into .grad. ---------------

def test_zero_grad_set_to_none_false_before_step_is_read_as_zeros():
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        x, y = batch()
        F.mse_loss(model(x), y).backward()
        opt.zero_grad(set_to_none=False)  # L:zeros_zg
        opt.step()  # L:zeros_step
    exp = tr.why(model[0].weight)
    assert exp.cause == "set_to_none_timing" and on_line(exp.site, "zeros_zg"), exp
    assert at("zeros_step") in exp.summary and "zeros" in exp.summary, exp.summary


# --- rule retained_zeroed: A retained non-leaf: what reached its grad_fn node, and who zeroed it. --------------------

def test_a_retained_activation_zeroed_by_a_saturated_clamp_is_located():
    enc, head = nn.Linear(4, 4), nn.Linear(4, 1)
    with gradscope.trace() as tr:
        h = enc(torch.randn(5, 4)) - 100.0
        h.retain_grad()
        z = torch.clamp(h, min=0.1)  # L:w_ret_clamp
        head(z).sum().backward()
    exp = tr.why(h)
    assert exp.cause == "zero_gradient" and site_hits(exp.site, "w_ret_clamp")


@pytest.mark.parametrize("op", ["hardtanh", "clip"])
def test_a_saturated_clamp_of_any_spelling_gets_the_clamp_fix(op):
    lin = nn.Linear(3, 3)
    with torch.no_grad():
        lin.bias.fill_(10.0)  # every value above the range
    fns = {"hardtanh": F.hardtanh, "clip": lambda h: torch.clip(h, -1, 1)}
    with gradscope.trace() as tr:
        h = lin(torch.randn(4, 3))
        fns[op](h).sum().backward()  # L:w_any_clamp
    exp = tr.why(lin.weight)
    assert exp.cause == "zero_gradient" and site_hits(exp.site, "w_any_clamp"), exp
    assert "every one was outside the clamp range" in exp.fix, exp.fix
    assert "outside the clamp range" in exp.detail, exp.detail


def test_a_retained_activation_zeroed_by_its_own_hook_is_the_hook():
    enc, head = nn.Linear(4, 4), nn.Linear(4, 1)
    with gradscope.trace() as tr:
        h = enc(torch.randn(5, 4))
        h.retain_grad()
        h.register_hook(lambda g: g * 0.0)  # L:w_ret_hook
        head(h).sum().backward()
    exp = tr.why(h)
    assert exp.cause == "hook_modified" and site_hits(exp.site, "w_ret_hook")


# --- rule hook_replaced_gradient: A non-zero gradient arrived and a hook on the tensor replaced it. ------------------

class _ZeroingHook:
    """A hook object (not a function) whose value-returning line is not its last return."""

    def __call__(self, grad):
        try:
            return torch.zeros_like(grad)  # object-hook-zeroes
        except RuntimeError:
            print("no grad")  # (the implicit `return None` is on this line)


def test_a_hook_object_is_named_by_its_class_and_its_value_returning_line():
    m = _TwoLayer()
    m.body.weight.register_hook(_ZeroingHook())
    with gradscope.trace() as tr:
        m(torch.randn(2, 3)).sum().backward()
    exp = tr.why(m.body.weight)
    assert exp.cause == "hook_modified", exp
    assert exp.site.lineno == line_of("object-hook-zeroes"), exp.site
    assert "_ZeroingHook.__call__" in exp.summary and "object at 0x" not in exp.summary, exp.summary


def test_hook_modified():
    model = nn.Linear(4, 2)

    def clip_hook(grad):
        return grad.clamp(-0.0, 0.0)  # L:hook

    with gradscope.trace() as tr:
        model.weight.register_hook(clip_hook)
        model(torch.randn(3, 4)).pow(2).sum().backward()
    assert model.weight.grad is not None and not model.weight.grad.any()
    assert_explains(tr.why(model.weight), "hook_modified", "weight", "hook", "hook")


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


# --- rule tensor_hook_zero: A tensor hook on an intermediate result that returns zero. -------------------------------

def test_a_hook_that_zeroes_the_gradient_in_place_is_named():
    emb_layer, head = nn.Embedding(10, 4), nn.Linear(4, 1)
    with gradscope.trace() as tr:
        emb = emb_layer(torch.randint(0, 10, (3, 5)))
        emb.register_hook(lambda g: g.zero_())  # L:w_inplace_hook
        head(emb.mean(1)).sum().backward()
    exp = tr.why(emb_layer.weight)
    assert exp.cause == "hook_modified" and site_hits(exp.site, "w_inplace_hook")


# --- rule zeroing_op: The op whose backward turned a non-zero gradient into zero (a dead ReLU, a saturated ... -------

def _cut_and_zero_weight():
    p = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    gate = (x > p).float()  # cut-compare-2
    weight = torch.zeros(3)  # zero-weight-made
    loss = (gate + p * weight).sum()  # zero-weight
    loss.backward()
    return p


def test_a_zero_weight_and_a_comparison_are_both_named():
    with gradscope.trace() as tr:
        p = _cut_and_zero_weight()
    exp = tr.why(p)
    assert exp.cause == "zero_gradient"
    # (the product's other factor is zero: the product, then where that factor was made)
    assert exp.site.lineno == line_of("zero-weight")
    assert [s.lineno for s in exp.extra_sites] == [line_of("zero-weight-made"), line_of("cut-compare-2")]


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


def test_embedding_of_only_padding_indices_says_so():
    emb = nn.Embedding(10, 4, padding_idx=0)
    head = nn.Linear(4, 2)
    with gradscope.trace() as tr:
        e = emb(torch.zeros(3, 5, dtype=torch.long))  # L:w_pad
        head(e.mean(1)).sum().backward()
    exp = tr.why(emb.weight)
    assert_explains(exp, "zero_gradient", "emb.weight", "w_pad", "every one is the padding index")
    assert "padding_idx" in exp.detail


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


_TO_LOSS = {  # each arithmetic step a hinge can reach its loss through (the recorded op name: its call)
    "mean": lambda h: h.mean(), "sum": lambda h: h.sum(), "add": lambda h: torch.add(h, 1.0).sum(),
    "__add__": lambda h: (h + 1.0).sum(), "__radd__": lambda h: (1.0 + h).sum(), "mul": lambda h: torch.mul(h, 2.0).sum(),
    "__mul__": lambda h: (h * 2.0).sum(), "__rmul__": lambda h: (2.0 * h).sum(), "div": lambda h: torch.div(h, 2.0).sum(),
    "__truediv__": lambda h: (h / 2.0).sum(), "sub": lambda h: torch.sub(h, 1.0).sum(),
    "__sub__": lambda h: (h - 1.0).sum(), "__rsub__": lambda h: (1.0 - h).sum(),
    "pow": lambda h: torch.pow(h + 1.0, 2).sum(),
    "__pow__": lambda h: ((h + 1.0) ** 2).sum()}  # (a square of the bare hinge is zeroed by the square too)


@pytest.mark.parametrize("step", sorted(_TO_LOSS))
def test_a_hinge_reaches_its_loss_through_each_arithmetic_step(step):
    """A relu that is 0 everywhere and reaches the backward root through one arithmetic step or reduction is a
    hinge of the loss (its margin is the fix), not a dead activation."""
    emb = nn.Linear(4, 4)
    with gradscope.trace() as tr:
        h = F.relu(emb(torch.randn(6, 4)).sum(1) - 1e6)  # L:w_hinge_step
        loss = _TO_LOSS[step](h)
        loss.backward()
    exp = tr.why(emb.weight)
    assert exp.cause == "zero_gradient" and site_hits(exp.site, "w_hinge_step"), (step, exp)
    assert "hinge" in exp.detail and "check the margin in `" in exp.fix, (step, exp.detail)


def test_a_relu_that_reaches_its_loss_through_a_layer_is_not_a_hinge():
    """(The control: a relu whose output goes through another layer is an activation.)"""
    emb, head = nn.Linear(4, 4), nn.Linear(4, 1)
    with gradscope.trace() as tr:
        h = F.relu(emb(torch.randn(6, 4)) - 1e6)  # L:w_dead_act
        head(h).sum().backward()
    exp = tr.why(emb.weight)
    assert exp.cause == "zero_gradient" and site_hits(exp.site, "w_dead_act"), exp
    assert "hinge" not in exp.detail, exp.detail


def test_a_hinge_that_reaches_the_loss_through_arithmetic_and_a_power_is_still_a_hinge():
    """(relu(...) + 1) ** 2 averaged: the relu still feeds the loss through arithmetic and reductions only."""
    emb = nn.Linear(4, 4)
    with gradscope.trace() as tr:
        a, p, n = emb(torch.randn(6, 4)), emb(torch.randn(6, 4)), emb(torch.randn(6, 4))
        d_ap, d_an = (a - p).pow(2).sum(1), (a - n).pow(2).sum(1)
        loss = (F.relu(d_ap - d_an - 1e6) + 1.0).pow(2).mean()
        loss.backward()
    exp = tr.why(emb.weight)
    assert exp.cause == "zero_gradient", exp
    assert "hinge" in exp.detail and "dead ReLU" not in exp.detail, exp.detail


def test_cross_entropy_over_a_single_logit_is_named():
    net = nn.Linear(4, 1)
    with gradscope.trace() as tr:
        out = net(torch.randn(6, 4))
        loss = F.cross_entropy(out, torch.rand(6, 1))  # L:w_one_logit
        loss.backward()
    exp = tr.why(net.weight)
    assert_explains(exp, "zero_gradient", "net.weight", "w_one_logit", "BCEWithLogitsLoss")
    assert "size 1" in exp.detail


def test_torch_normal_sampling_is_nondifferentiable_with_a_reparameterisation_fix():
    mu = nn.Parameter(torch.zeros(3))
    log_sigma = nn.Parameter(torch.zeros(3))
    with gradscope.trace() as tr:
        w = torch.normal(mu, log_sigma.exp())  # L:w_normal
        (w * torch.randn(3)).sum().backward()
    exp = tr.why(mu)
    assert exp.cause == "nondifferentiable_op" and site_hits(exp.site, "w_normal") and "randn_like" in exp.fix


#: ops whose backward is zero by definition (sampling, rounding): a zero gradient through one is a
#: non-differentiable op, whatever the recorder called the call
_ZERO_BY_DEFINITION = ["round", "round_", "sign", "sgn", "floor", "ceil", "trunc", "fix", "floor_divide", "__floordiv__",
                       "bernoulli", "bernoulli_", "poisson", "heaviside", "normal", "binomial", "multinomial"]


@pytest.mark.parametrize("op", [*_ZERO_BY_DEFINITION, "relu"])
def test_a_zeroing_op_the_recorder_did_not_mark_is_judged_by_its_name(op, tmp_path):
    """A saved trace whose zeroing node ran a plain op (no zero_grad_op mark: another recorder version, or a call
    torch made): sampling and rounding ops are non-differentiable, a relu that zeroed it is a zero gradient.
    (torch.binomial has no derivative on this PyTorch: this is the only way its name reaches the rule.)"""
    logits = nn.Parameter(torch.zeros(4))
    with gradscope.trace() as tr:
        k = torch.poisson(torch.sigmoid(logits) * 3)
        (k * torch.ones(4, requires_grad=True)).sum().backward()
    tr.save(tmp_path / "t.json")
    doc = json.loads((tmp_path / "t.json").read_text())
    ev = next(e for e in doc["events"] if e["op"] == "torch.poisson")
    ev.update(kind="op", cut=None, op=f"torch.Tensor.{op}")
    (tmp_path / "t.json").write_text(json.dumps(doc))
    exp = gradscope.load(tmp_path / "t.json").why("logits")
    assert exp.status == "zero" and op in exp.summary, exp
    assert exp.cause == ("zero_gradient" if op == "relu" else "nondifferentiable_op"), exp


def test_two_backwards_whose_gradients_cancel_blame_no_hook():
    """`out.backward(retain_graph=True)` then `(-out).backward()`: non-zero gradients arrived and summed to zero in
    .grad. No hook was registered, so none is blamed: the zero is reported without a made-up site."""
    m = nn.Linear(3, 1)
    x = torch.randn(4, 3)
    with gradscope.trace() as tr:
        out = m(x).mean()
        out.backward(retain_graph=True)
        (-out).backward()
    assert float(m.weight.grad.abs().sum()) == 0.0
    exp = tr.why(m.weight)
    assert exp.status == "zero" and exp.cause == "zero_gradient" and "hook" not in str(exp), exp


@pytest.mark.xfail(strict=True, reason="bug: a torch.autograd.grad call after zero_grad(set_to_none=False) makes "
                   "verdict.cleared_after_use give up (its 'cleared, then the next gradient came from autograd.grad' "
                   "case), and no zero rule names the recorded zero_grad(): 'the trace did not record which operation "
                   "zeroed it'; without the autograd.grad call the same step is 'ok, zeroed for the next step'")
def test_a_gradient_zeroed_by_zero_grad_is_named_there_also_when_autograd_grad_logs_a_norm_afterwards():
    """backward, step, zero_grad(set_to_none=False), then torch.autograd.grad to log a gradient norm (it writes
    no .grad): the zeros in .grad come from that zero_grad() line, which the explanation names."""
    m = nn.Linear(3, 1)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(4, 3)
    with gradscope.trace() as tr:
        m(x).pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=False)  # L:zeroed_for_next_step
        torch.autograd.grad(m(x).pow(2).mean(), [m.weight])
    exp = tr.why(m.weight)
    assert at("zeroed_for_next_step") in exp.summary, exp


# --- rule cancelled_uses: several uses' gradients cancel exactly (correct code) ------------------------------------

class _Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2))
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(self.body(x))


def test_a_critic_loss_that_is_a_difference_of_means_gives_its_last_bias_an_exact_zero_by_design():
    torch.manual_seed(0)
    critic = _Critic()
    opt = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
    real, fake = torch.randn(16, 2), torch.randn(16, 2) + 1.0
    with gradscope.trace() as tr:
        opt.zero_grad()
        loss = critic(fake).mean() - critic(real).mean()  # L:w_wgan_loss
        loss.backward()
        opt.step()
    assert torch.count_nonzero(critic.out.bias.grad) == 0  # (the reason this rule exists)
    exp = tr.why(critic.out.bias)
    assert_explains(exp, "gradient_cancelled", "its 2 uses in `loss`", "w_wgan_loss", "nothing to fix")
    assert "cancel exactly" in exp.summary and "not a cut" in exp.summary, exp.summary
    tr.check()  # correct code: no problem
    assert not tr.problems()
    out = io.StringIO()
    tr.report(console=Console(file=out, width=120, color_system=None))
    row = next(line for line in out.getvalue().splitlines() if line.startswith("out.bias"))
    assert "✓ zero" in row and "its uses cancel (by design)" in row, row
    assert "without a healthy gradient" not in out.getvalue()


def test_a_loss_that_cancels_for_every_parameter_is_still_a_problem():
    torch.manual_seed(0)
    critic = _Critic()
    x = torch.randn(4, 2)
    with gradscope.trace() as tr:
        loss = critic(x).mean() - critic(x).mean()  # identically zero: nothing learns
        loss.backward()
    assert all(torch.count_nonzero(p.grad) == 0 for p in critic.parameters())
    exp = tr.why(critic.out.bias)
    assert exp.cause != "gradient_cancelled", exp
    with pytest.raises(AssertionError, match="gradient problem"):
        tr.check()


def test_a_hook_that_zeroes_a_gradient_its_uses_sent_is_the_hook_not_a_cancellation():
    torch.manual_seed(0)
    critic = _Critic()
    real, fake = torch.randn(16, 2), torch.randn(16, 2) + 1.0
    with gradscope.trace() as tr:
        critic.body[0].bias.register_hook(lambda g: torch.zeros_like(g))  # L:w_zero_hook
        loss = critic(fake).mean() - 2 * critic(real).mean()
        loss.backward()
    exp = tr.why(critic.body[0].bias)
    assert exp.cause == "hook_modified" and site_hits(exp.site, "w_zero_hook"), exp
    with pytest.raises(AssertionError):
        tr.check()


# --- rule piecewise_linear_curvature: a second derivative of a ReLU network is zero ----------------------------------

class _Pinn(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(1, 16), nn.Linear(16, 1)
        self.act = act
        self.k = nn.Parameter(torch.tensor(0.7))

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))  # L:w_pinn_act


def _second(u, x):
    g = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
    return torch.autograd.grad(g.sum(), x, create_graph=True)[0]


@pytest.mark.parametrize("act", ["relu", "tanh"])
def test_a_pde_term_built_from_the_second_derivative_of_a_relu_network_names_the_activation(act):
    torch.manual_seed(0)
    pinn = _Pinn(torch.relu if act == "relu" else torch.tanh)
    opt = torch.optim.Adam(pinn.parameters(), lr=1e-3)
    x = torch.rand(32, 1, requires_grad=True)
    with gradscope.trace() as tr:
        u = pinn(x)
        residual = _second(u, x) * pinn.k - u  # (u_xx * k = u)
        opt.zero_grad()
        residual.pow(2).mean().backward()
        opt.step()
    if act == "tanh":  # smooth: the second derivative is not zero, the coefficient learns
        assert torch.count_nonzero(pinn.k.grad) == 1
        tr.check()
        return
    assert torch.count_nonzero(pinn.k.grad) == 0
    exp = tr.why(pinn.k)
    assert_explains(exp, "zero_gradient", "second derivative", "w_pinn_act", "smooth activation")
    assert "only nonlinearity is relu" in exp.summary, exp.summary


def test_a_hand_written_relu_network_with_transposed_weights_is_still_piecewise_linear():
    torch.manual_seed(0)
    w1, w2 = nn.Parameter(torch.randn(8, 1)), nn.Parameter(torch.randn(1, 8))
    k = nn.Parameter(torch.tensor(0.3))
    x = torch.rand(16, 1, requires_grad=True)
    with gradscope.trace() as tr:
        u = torch.relu(x @ w1.t()) @ w2.t()  # L:w_manual_relu
        (_second(u, x) * k - u).pow(2).mean().backward()
    assert torch.count_nonzero(k.grad) == 0
    exp = tr.why(k)
    assert exp.cause == "zero_gradient" and site_hits(exp.site, "w_manual_relu"), exp


_LINEAR_STEPS = {  # an op of rules_zero._LINEAR between the relu and the output: the network stays piecewise linear
    "index_select": lambda h: h.index_select(1, torch.arange(8)),
    "gather": lambda h: h.gather(1, torch.arange(8).repeat(16, 1)),
    "narrow": lambda h: h.narrow(1, 0, 4),
    "repeat": lambda h: h.repeat(1, 2),
    "select": lambda h: h.select(1, 3)[:, None],
    "expand": lambda h: h[:, :1].expand(16, 8),
    "chunk": lambda h: h.chunk(2, dim=1)[0],
    "split": lambda h: h.split(4, dim=1)[1],
    "flatten": lambda h: h[:, None].flatten(1),
    "contiguous": lambda h: h.t().contiguous().t(),
}


@pytest.mark.parametrize("op", sorted(_LINEAR_STEPS))
def test_a_relu_network_through_an_indexing_or_shaping_op_is_still_piecewise_linear(op):
    """Each of these ops is linear in its input: a second derivative through them and a relu is still zero, and
    the line to look at is the network's (checked against torch: k.grad is exactly zero)."""
    torch.manual_seed(0)
    w1 = nn.Parameter(torch.randn(8, 1))
    k = nn.Parameter(torch.tensor(0.3))
    x = torch.rand(16, 1, requires_grad=True)
    with gradscope.trace() as tr:
        u = _LINEAR_STEPS[op](torch.relu(x @ w1.t())).sum(1, keepdim=True)  # L:w_linear_step
        (_second(u, x) * k - u).pow(2).mean().backward()
    assert torch.count_nonzero(k.grad) == 0
    exp = tr.why(k)
    assert exp.cause == "zero_gradient" and site_hits(exp.site, "w_linear_step"), exp


def test_a_product_with_an_all_false_mask_names_where_the_mask_was_made():
    """A padding mask from a length threshold that no sample passes: every position is masked, and the
    features' gradient is zero through the product. The line to look at is where the mask was made."""
    enc = nn.Linear(3, 4)
    with gradscope.trace() as tr:
        lengths = torch.tensor([3, 5, 2])
        keep = (lengths > 10).float()[:, None]  # L:z_all_false_mask
        feats = enc(torch.randn(3, 3))
        (feats * keep).sum().backward()  # L:z_all_false_product
    exp = tr.why(enc.weight)
    M.assert_explains(exp, "zero_gradient", "multiplied by `keep`", "z_all_false_product", "masks everything")
    assert exp.extra_sites and exp.extra_sites[0].lineno == M.line("z_all_false_mask"), exp.extra_sites


def _clip_rows(g, keep):
    return g * keep  # L:z_delegate_return


def test_a_hook_lambda_that_calls_a_helper_names_the_helper_s_return():
    """A gradient hook written as `lambda g: _clip_rows(g, keep)` with the arithmetic in the helper: the line to
    look at is the helper's return, not the lambda."""
    emb = nn.Embedding(4, 3)
    keep = torch.zeros(4, 1)  # (the mask keeps nothing: inverted)
    emb.weight.register_hook(lambda g: _clip_rows(g, keep))
    with gradscope.trace() as tr:
        emb(torch.tensor([0, 1, 2])).sum().backward()
    M.assert_explains(tr.why(emb.weight), "hook_modified", "weight", "z_delegate_return", "return None")
