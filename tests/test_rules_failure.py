"""The failure rules: ``tr.failure`` for a backward that raised (gradscope.diagnosis.rules_failure and the error
table of gradscope.diagnosis.errors), each on a real torch run: no grad_fn (the cut, the freeze, the region or the
creation that removed the history; the cut the user wrote before a gradient without create_graph), an in-place
write into a saved tensor, .numpy() of a tensor that requires grad, an inference tensor saved for backward, a
second backward, a second differentiation through once_differentiable, autograd.grad of an unused input, and an
error no rule explains (reported where it was raised). The common errors carry a PEP 678 note on the exception.

Lines are found from marker comments in this file (``# L:<tag>`` or ``# <mark>``), never hard-coded
(tests/_rules_helpers.py).
"""
from __future__ import annotations

import gc

import json
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gradscope

from _rules_helpers import Markers, _same, _note

M = Markers(__file__)
THIS = M.this
BASENAME = M.basename
line = M.line
line_of = M.line_of
site_hits = M.site_hits
assert_explains = M.assert_explains

pytestmark = pytest.mark.filterwarnings("ignore")


# --- no rule: the table of PyTorch errors the failure rules answer ---------------------------------------------------

def test_error_table_is_one_ordered_table_of_existing_handlers():
    from gradscope.diagnosis import ERRORS, REGISTRY

    assert len(ERRORS) >= 9
    for pattern, handler in ERRORS:
        assert isinstance(pattern, re.Pattern)
        assert "failure" in REGISTRY[handler].statuses, handler
    msgs = {
        "one of the variables needed for gradient computation has been modified by an inplace operation":
            "inplace_modified_saved_tensor",
        "element 0 of tensors does not require grad and does not have a grad_fn": "no_grad_fn",
        "Trying to backward through the graph a second time": "backward_twice",
        "One of the differentiated Tensors appears to not have been used in the graph.": "grad_input_unused",
        "the derivative for 'x' is not implemented.": "no_derivative",
    }
    for msg, want in msgs.items():
        assert next(h for p, h in ERRORS if p.search(msg)) == want, msg


# --- rule inplace_modified_saved_tensor: An in-place write into a tensor autograd saved for backward: the ... --------

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


def test_an_optimizer_step_between_two_backwards_suggests_running_every_backward_first():
    """Two losses from two forwards, the step after the first backward: the second backward finds a weight the
    step changed in place; the fix says to run every backward before optimizer.step()."""
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        with gradscope.trace() as tr:
            l1 = m(torch.randn(5, 3)).mean()
            l2 = m(torch.randn(5, 3)).mean()
            l1.backward()
            opt.step()  # L:f_step_between
            l2.backward()
    f = tr.failure
    assert_explains(f, "inplace_saved_tensor", "m.2.weight", "f_step_between",
                    "run backward for every loss before optimizer.step() changes the weights")


def test_a_write_into_a_detached_alias_says_it_shares_the_saved_tensors_memory():
    """The first lesson of every detach() tutorial: `z = y.detach()` is y's memory, so `z.zero_()` wrote into the y
    that sigmoid saved. The text says so, and the fix copies first (or writes out of place with real code)."""
    w = nn.Parameter(torch.linspace(-1, 1, 4))
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        with tr:
            y = torch.sigmoid(w * 2)
            z = y.detach()  # L:alias_made
            z.zero_()  # L:alias_zeroed
            y.sum().backward()
    exp = tr.why(w)
    assert_explains(exp, "inplace_saved_tensor", "z", "alias_zeroed", "copy before writing")
    assert f"`z` is `y.detach()` at {BASENAME}:{line('alias_made')}" in exp.summary, exp.summary
    assert "shares `y`'s memory" in exp.summary and "not a copy" in exp.detail, exp
    assert "`z = y.detach().clone()`" in exp.fix and "`z = torch.zeros_like(z)`" in exp.fix, exp.fix
    assert "z.zero()" not in exp.fix


def test_a_write_into_a_tensor_that_is_no_alias_says_nothing_of_shared_memory():
    w = nn.Parameter(torch.linspace(-1, 1, 4))
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        with tr:
            y = torch.sigmoid(w * 2)
            y.zero_()  # L:own_zeroed
            y.sum().backward()
    exp = tr.why(w)
    assert_explains(exp, "inplace_saved_tensor", "y", "own_zeroed", "torch.zeros_like(y)")
    assert "memory" not in exp.summary and "clone" not in exp.fix, exp


_FILLS = {  # in-place methods with no out-of-place method of the same name, as the user writes them
    "zero_": ("z.zero_()", lambda z: z.zero_()), "fill_": ("z.fill_(0.5)", lambda z: z.fill_(0.5)),
    "copy_": ("z.copy_(src)", None), "normal_": ("z.normal_()", lambda z: z.normal_()),
    "uniform_": ("z.uniform_(-1, 1)", lambda z: z.uniform_(-1, 1)), "random_": ("z.random_(0, 5)", lambda z: z.random_(0, 5)),
    "bernoulli_": ("z.bernoulli_(0.5)", lambda z: z.bernoulli_(0.5)),
    "exponential_": ("z.exponential_()", lambda z: z.exponential_()),
    "geometric_": ("z.geometric_(0.5)", lambda z: z.geometric_(0.5)), "cauchy_": ("z.cauchy_()", lambda z: z.cauchy_()),
    "log_normal_": ("z.log_normal_()", lambda z: z.log_normal_())}


@pytest.mark.parametrize("op", sorted(_FILLS))
def test_the_out_of_place_fix_of_each_fill_is_code_that_runs(op):
    """`z.zero_()` has no `z.zero()`: the suggested line is run here, and it makes a new tensor of z's shape."""
    from gradscope.diagnosis.wording import _out_of_place

    code, _ = _FILLS[op]
    fix = _out_of_place(code)
    assert fix is not None and fix.startswith("write it out-of-place: `z = "), fix
    line = fix.split("`")[1]
    z, src = torch.ones(2, 3), torch.full((2, 3), 2.0)
    env = {"torch": torch, "z": z, "src": src}
    exec(line, env)  # noqa: S102 (the suggestion must be code that runs)
    assert env["z"] is not z and env["z"].shape == z.shape, line
    assert torch.equal(z, torch.ones(2, 3))  # (the old one is untouched: out of place)
    if op == "copy_":
        assert torch.equal(env["z"], src)


def test_an_inplace_write_that_made_backward_fail_is_a_harmful_cut_and_the_same_write_after_it_is_not():
    """tr.cuts(): the in-place write into a tensor autograd saved is harmful when the backward failed because of it,
    benign when the backward had already run."""
    lin = nn.Linear(4, 4)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        with gradscope.trace() as tr:
            s = torch.sigmoid(lin(torch.randn(3, 4)))
            s += 1.0  # L:f_inplace_cut
            s.sum().backward()
    at_write = [e for e in tr.cuts() if e.site is not None and e.site.lineno == line("f_inplace_cut")]
    assert at_write and all(e.kind == "inplace" and e.verdict == "harmful" for e in at_write), at_write
    assert any(e.kind == "inplace" for e in tr.cuts(harmful=True))

    with gradscope.trace() as tr2:
        s = torch.sigmoid(lin(torch.randn(3, 4)))
        s.sum().backward()
        s += 1.0  # L:f_inplace_late
    late = [e for e in tr2.cuts() if e.site is not None and e.site.lineno == line("f_inplace_late")]
    assert all(e.verdict != "harmful" for e in late) and not tr2.cuts(harmful=True), late


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


# --- rule no_grad_fn: backward() on a result with no history: the cut (no_grad, detach, a frozen model) that ... -----

def test_module_to_is_not_the_cut_when_everything_was_frozen():
    """`model = Net().to(device)` sets each parameter's .data inside torch (Module._apply): when a freeze
    then makes backward fail, the freeze is named, not the .to() line."""
    def main():
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).to("cpu")
        model.requires_grad_(False)  # R:freeze-all
        model(torch.randn(3, 4)).sum().backward()

    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr:
            main()
    f = tr.failure
    assert f.cause == "frozen_param", f
    assert f.site.lineno == line_of("R:freeze-all")


@pytest.mark.parametrize("explicit", [True, False])
def test_an_explicit_cut_before_a_gradient_without_create_graph(explicit):
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(5, 4)
    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr:
            inner = (x @ w).pow(2).mean()
            (g,) = torch.autograd.grad(inner, w)  # inner-grad
            if explicit:
                fast = w.data - 0.1 * g  # data-cut
            else:
                fast = -0.1 * g
            (x @ fast).pow(2).mean().backward()
    exp = tr.failure
    if explicit:
        assert exp.cause == "data_attr", exp
        assert exp.site.lineno == line_of("data-cut")
        assert line_of("inner-grad") in [s.lineno for s in exp.extra_sites]
    else:
        assert exp.cause == "autograd_grad_not_backward", exp
        assert exp.site.lineno == line_of("inner-grad")


@pytest.mark.parametrize("kind, cause", [("detach", "detach"), ("rewrap", "tensor_rewrap"),
                                         ("tolist", "tolist_roundtrip")])
def test_every_explicit_cut_comes_before_a_gradient_without_create_graph(kind, cause):
    """As with `.data`: a detach, a re-wrap with torch.tensor() or a tolist() round trip of the weights the user
    wrote is the cause, the autograd.grad without create_graph an extra site."""
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(5, 4)
    with pytest.raises(RuntimeError, match="does not require grad"):
        with warnings.catch_warnings(), gradscope.trace() as tr:
            warnings.simplefilter("ignore")
            inner = (x @ w).pow(2).mean()
            (g,) = torch.autograd.grad(inner, w)  # inner-grad-2
            if kind == "detach":
                fast = w.detach() - 0.1 * g  # explicit-detach
            elif kind == "rewrap":
                fast = torch.tensor(w) - 0.1 * g  # explicit-rewrap
            else:
                fast = torch.tensor(w.tolist()) - 0.1 * g  # explicit-tolist
            (x @ fast).pow(2).mean().backward()
    exp = tr.failure
    assert exp.cause == cause, exp
    assert exp.site.lineno == line_of(f"explicit-{kind}")
    assert line_of("inner-grad-2") in [s.lineno for s in exp.extra_sites]


def test_a_comparison_gate_is_not_an_explicit_cut_before_a_gradient_without_create_graph():
    """A mask computed by comparing the weights (`(w > 0).float()`) carries no gradient either, but it is not a cut
    the user wrote to stop one: the fix is create_graph=True on the autograd.grad, which is the cause."""
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(5, 4)
    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr:
            inner = (x @ w).pow(2).mean()
            (g,) = torch.autograd.grad(inner, w)  # inner-grad-3
            gate = (w > 0).float()
            fast = -0.1 * g * gate
            (x @ fast).pow(2).mean().backward()
    exp = tr.failure
    assert exp.cause == "autograd_grad_not_backward", exp
    assert exp.site.lineno == line_of("inner-grad-3")


def test_a_no_grad_region_before_a_gradient_without_create_graph():
    """A region is a cut the user wrote too: a meta-learning query loss computed inside `with torch.no_grad():`
    from fast weights (which still require grad through w) is the no_grad block, not the autograd.grad
    without create_graph further up; that one is named as an extra site."""
    w = torch.randn(4, requires_grad=True)
    x, xq = torch.randn(5, 4), torch.randn(3, 4)
    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr:
            (g,) = torch.autograd.grad((x @ w).pow(2).mean(), w)  # region-inner-grad
            fast = w - 0.1 * g
            with torch.no_grad():  # region-opened
                query = (xq @ fast).pow(2).mean()
            query.backward()
    exp = tr.failure
    assert exp.cause == "no_grad_block", exp
    assert exp.site.lineno == line_of("region-opened")
    assert line_of("region-inner-grad") in [s.lineno for s in exp.extra_sites]


def _poly_loss(logits, labels):
    onehot = F.one_hot(labels, num_classes=logits.shape[-1]).to(dtype=logits.dtype)
    pt = (onehot * F.softmax(logits, dim=-1)).sum(-1)
    return (F.cross_entropy(logits, labels, reduction="none") + (1 - pt)).mean()


def test_backward_without_grad_names_the_creation_of_its_one_floating_point_input():
    """Nothing in the loss requires grad and no cut removed it: the one floating-point tensor it was made
    from (integer labels cannot carry a gradient) was created without requires_grad: that line."""
    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr:
            scores = torch.rand([6, 4])  # made-without-grad
            labels = torch.randint(0, 4, [6])
            _poly_loss(scores, labels).backward()
    exp = tr.failure
    assert exp.cause == "requires_grad_false", exp
    assert exp.site.lineno == line_of("made-without-grad"), exp.site
    assert "scores" in exp.summary and "torch.rand(..., requires_grad=True)" in exp.fix, exp.fix

    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr2:  # two candidates: which one was meant to learn is not said by the trace
            w, x = torch.zeros(4, 2), torch.randn(3, 4)
            (x @ w).sum().backward()  # two-inputs
    assert tr2.failure.cause == "requires_grad_false"
    assert tr2.failure.site.lineno == line_of("two-inputs")


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


# --- rule numpy_of_grad_tensor: .numpy() called on a tensor that requires grad. --------------------------------------

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


# --- rule inference_tensor_saved: A tensor made under inference_mode used by an op that saves it for backward. -------

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


def test_an_inference_tensor_saved_for_backward_names_the_op_that_saved_it():
    lin = nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        with gradscope.trace() as tr:
            with torch.inference_mode():
                feats = torch.randn(4, 3) * 2
            lin(feats).sum().backward()  # L:f_inference_saver
    exp = tr.failure
    assert exp.cause == "inference_mode", exp
    assert f"linear at {BASENAME}:{line('f_inference_saver')} tried to save it for backward" in exp.summary, exp.summary


# --- rule backward_twice: A second backward through a graph whose buffers the first one freed. -----------------------

def test_a_second_backward_of_the_same_loss_is_named_at_that_backward():
    """The plain case, one loss backed twice (no state carried, no shared part built before): the second backward
    is the line."""
    w = nn.Parameter(torch.ones(3))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        with gradscope.trace() as tr:
            loss = torch.sigmoid(w * 2).sum()
            loss.backward()
            loss.backward()  # L:f_same_twice
    exp = tr.failure
    assert exp.cause == "backward_twice" and site_hits(exp.site, "f_same_twice"), exp


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


def test_the_shared_part_two_losses_run_through_is_the_last_one_that_needs_grad():
    """Both losses also share a mask that needs no gradient, made after the shared features: the text names the
    shared computation the first backward freed (the features), not the mask."""
    enc = nn.Linear(4, 4)
    x = torch.randn(6, 4)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="second time"):
        with tr:
            feats = torch.tanh(enc(x))  # L:w_shared_feats
            mask = (x > 0).float()
            loss_a = (feats * mask).sum()
            loss_b = (feats * mask).pow(2).sum()
            loss_a.backward()  # L:w_first_bw
            loss_b.backward()
    f = tr.failure
    assert f.cause == "backward_twice" and site_hits(f.site, "w_first_bw"), f
    assert f"run through `feats` (computed at {BASENAME}:{line('w_shared_feats')})" in f.summary, f.summary


def test_two_losses_built_before_the_first_backward_name_that_backward():
    """A GAN step that builds the discriminator's and the generator's losses on one fake batch, then calls
    backward on each: the first backward freed the generator's graph, so the line to change is that backward."""
    G, D = nn.Sequential(nn.Linear(3, 4), nn.Tanh()), nn.Linear(4, 1)
    bce = nn.BCEWithLogitsLoss()
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="second time"):
        with tr:
            fake = G(torch.randn(5, 3))
            real = torch.randn(5, 4)
            d_loss = bce(D(real), torch.ones(5, 1)) + bce(D(fake), torch.zeros(5, 1))
            g_loss = bce(D(fake), torch.ones(5, 1))
            d_loss.backward()  # L:w_gan_first
            g_loss.backward()
    f = tr.failure
    assert_explains(f, "backward_twice", "both losses run through `fake`", "w_gan_first",
                    "(d_loss + g_loss).backward()")
    assert any(s.lineno == line("w_gan_first") + 1 for s in f.extra_sites), f.extra_sites


def test_a_retained_first_backward_is_not_the_one_named():
    """With retain_graph=True on the first backward the graph was kept: the first backward is not the cause."""
    trunk, head = nn.Linear(4, 8), nn.Linear(8, 2)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="second time"):
        with tr:
            h = torch.relu(trunk(torch.randn(6, 4)))
            la, lb = head(h).sum(), h.pow(2).mean()
            la.backward(retain_graph=True)
            lb.backward()  # L:w_freed_by
            la.backward()
    f = tr.failure
    assert_explains(f, "backward_twice", "both losses run through `h`", "w_freed_by", "retain_graph=True")


def test_the_same_loss_twice_is_not_two_losses():
    w = torch.randn(3, requires_grad=True)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="second time"):
        with tr:
            loss = (w.exp() * 2).sum()
            loss.backward()
            loss.backward()
    f = tr.failure
    assert f.cause == "backward_twice", f
    assert "both losses" not in f.summary, f


# --- rule once_differentiable: A second differentiation (create_graph=True: gradient penalty, double backward) ... ---

class _Leaky(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.where(x > 0, x, 0.2 * x)

    @staticmethod
    @torch.autograd.function.once_differentiable  # L:w_once_decorator
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
    assert [s.lineno for s in f.extra_sites] == [line("w_once_decorator")], f.extra_sites  # (the decorator next)


# --- rule grad_input_unused: autograd.grad(outputs, inputs): an input "was not used in the graph". What cut it ... ---

def _grad_through_numpy():
    x = torch.randn(4, requires_grad=True)
    y = x * 2
    z = torch.from_numpy(np.tanh(y.detach().numpy()))  # numpy-trip
    out = (z * torch.ones(4, requires_grad=True)).sum()
    return torch.autograd.grad(out, x)


def test_autograd_grad_unused_input_names_the_cut():
    with pytest.raises(RuntimeError, match="not have been used"), gradscope.trace() as tr:
        _grad_through_numpy()
    exp = tr.failure
    assert exp.cause == "numpy_roundtrip", exp
    assert exp.site.lineno == line_of("numpy-trip")
    assert exp.summary.startswith("torch.autograd.grad failed: the input `x`"), exp.summary


# --- rule unknown_error: An error no rule explains: reported where it was raised. ------------------------------------

def test_unknown_error_points_at_raising_line():
    lin = nn.Linear(3, 2)
    with pytest.raises(RuntimeError):
        with gradscope.trace() as tr:
            lin(torch.randn(4, 3, dtype=torch.float64))  # L:dtype_err
    exp = tr.failure
    assert exp.cause == "unknown"
    assert site_hits(exp.site, "dtype_err")
    assert exp.fix


def test_ddp_unfinished_reduction_names_the_parameters_the_last_backward_did_not_reach(tmp_path):
    """DDP's "Expected to have finished reduction" (the saved trace of tests/test_distributed.py's two-rank run,
    tests/fixtures/rules/reduction_unused.json): the failure names the parameters the last complete backward did
    not reach (the aux head), each explained like any starved parameter, not the ones it did reach."""
    root = Path(__file__).resolve().parents[1]
    text = (root / "tests" / "fixtures" / "rules" / "reduction_unused.json").read_text(encoding="utf-8")
    (tmp_path / "t.json").write_text(text.replace("{REPO}/", json.dumps(str(root) + os.sep)[1:-1]), encoding="utf-8")
    f = gradscope.load(tmp_path / "t.json").failure
    assert f.cause == "unused_parameter" and f.target == "aux_head.weight", f
    assert "2 parameter(s) did not receive a gradient" in f.summary and "aux_head.bias" in f.summary, f.summary
    assert "never used" in f.summary and "body.weight" not in f.summary, f.summary


def test_a_sample_from_torch_binomial_on_the_way_to_the_loss_is_named():
    """torch.binomial has no derivative: backward raises; the failure names the sampling line."""
    logits = nn.Parameter(torch.zeros(4))
    other = nn.Parameter(torch.ones(4))
    with pytest.raises(RuntimeError, match="binomial is not implemented"):
        with gradscope.trace() as tr:
            k = torch.binomial(torch.full((4,), 10.0), torch.sigmoid(logits))  # L:f_binomial
            (k.sum() * other.sum()).backward()
    f = tr.failure
    assert f.cause == "nondifferentiable_op" and site_hits(f.site, "f_binomial"), f


# --- rule anomaly_nonfinite: anomaly mode stopped backward at a NaN; the forward op whose backward first went
# non-finite is the line ---------------------------------------------------------------------------------------

class _Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 4)

    def forward(self, x):
        return self.proj(x)


def _anomaly_failure(step):
    with pytest.warns(UserWarning):  # anomaly mode's own warnings, raised plain as well
        with pytest.raises(RuntimeError, match="returned nan values"):
            with gradscope.trace() as tr:
                with torch.autograd.detect_anomaly():
                    step()
    return tr.failure


def test_anomaly_nan_from_acos_of_a_cosine_of_one_names_the_acos_line_and_the_clamp():
    """An angular loss over pairs that include each item with itself: cos = 1 exactly, acos has an infinite
    derivative there; anomaly mode names a node further on. The line is the acos, the fix clamps its input."""
    torch.manual_seed(0)
    enc = _Embed()
    x = torch.randn(5, 6)

    def step():
        z = torch.nn.functional.normalize(enc(x), dim=1)
        cos = (z @ z.t()).clamp(-1.0, 1.0)
        angle = torch.acos(cos)  # L:an_acos
        (angle ** 2).mean().backward()

    f = _anomaly_failure(step)
    assert f.cause == "nonfinite_gradient" and site_hits(f.site, "an_acos"), f
    assert "acos()" in f.summary and "clamp" in f.fix and "1 - 1e-7" in f.fix, f


def test_anomaly_nan_from_a_distance_of_zero_names_the_root_line():
    """A pairwise-distance loss whose matrix includes each item's distance to itself (0), computed as the root of a
    sum of squares: sqrt's derivative is infinite there, times the zero difference is NaN one node further on. The
    failure names the root's line, not the backward call."""
    torch.manual_seed(0)
    enc = _Embed()
    x = torch.randn(4, 6)

    def step():
        z = enc(x)
        diff = z[:, None, :] - z[None, :, :]
        dist = (diff ** 2).sum(-1).sqrt()  # L:an_norm
        torch.relu(1.0 - dist).mean().backward()  # L:an_backward

    f = _anomaly_failure(step)
    assert f.cause == "nonfinite_gradient" and site_hits(f.site, "an_norm") and not site_hits(f.site, "an_backward"), f
    assert "epsilon" in f.fix, f


# --- rule raised_here: an error whose cause is the line that raised it (rules_raised.RAISED) ------------------------
# One program per cause, each its own code shape (a trainer, a model method, a helper): the explanation names the
# cause, the line that raised, and a fix that is not "see the error message".

class _Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


def _leaf_inplace():
    m = _Scorer()
    m(torch.randn(2, 4)).sum().backward()
    for p in m.parameters():
        p.sub_(0.01 * p.grad)  # L:leaf_inplace


def _leaf_inplace_view():
    m = _Scorer()
    m.head.bias[0] = 0.0  # L:leaf_inplace_view


def _out_argument():
    m = _Scorer()
    feats = torch.empty(3, 4)
    torch.mul(m.body.weight[:3], 2.0, out=feats)  # L:out_argument


def _multi_output_view_inplace():
    m = _Scorer()
    h = m.body(torch.randn(2, 4))
    left, right = h.split(2, dim=1)
    left.tanh_()  # L:multi_output_view_inplace
    (left * right).sum().backward()


def _resize_requires_grad():
    h = _Scorer().body(torch.randn(3, 4))
    h.resize_(12)  # L:resize_requires_grad


def _detach_view_inplace():
    h = _Scorer().body(torch.randn(3, 4))
    first = h[0]
    first.detach_()  # L:detach_view_inplace


def _gradient_shape_mismatch():
    scores = _Scorer()(torch.randn(5, 4))
    scores.backward(torch.ones(5))  # L:gradient_shape_mismatch


def _gradient_count_mismatch():
    m = _Scorer()
    out = m(torch.randn(2, 4))
    losses = [out.sum(), out.mean(), (out ** 2).mean()]
    torch.autograd.backward(losses, [torch.tensor(1.0)])  # L:gradient_count_mismatch


def _integer_requires_grad():
    labels = torch.tensor([0, 1, 1])
    labels.requires_grad = True  # L:integer_requires_grad


def _requires_grad_non_leaf():
    m = _Scorer()
    feats = m.body(torch.randn(2, 4))
    feats.requires_grad_(False)  # L:requires_grad_non_leaf


def _mixed_backward_hooks():
    m = _Scorer()
    m.head.register_full_backward_hook(lambda mod, gi, go: None)
    m.head.register_backward_hook(lambda mod, gi, go: None)  # L:mixed_backward_hooks
    m(torch.randn(2, 4)).sum().backward()


def _grad_assignment_mismatch():
    m = _Scorer()
    m.head.weight.grad = torch.zeros(4, 1)  # L:grad_assignment_mismatch


class _Rescaled(nn.Linear):
    def rescale(self):
        self.weight = self.weight * 0.5  # L:parameter_assigned_tensor


def _parameter_assigned_tensor():
    _Rescaled(3, 3).rescale()


class _OldSquare(torch.autograd.Function):
    def forward(self, x):
        return x * x

    def backward(self, g):
        return 2 * g


def _legacy_function():
    m = _Scorer()
    _OldSquare()(m.body(torch.randn(2, 4))).sum().backward()  # L:legacy_function


def _optimizer_params():
    m = _Scorer()
    torch.optim.AdamW(m.children(), lr=1e-3)  # L:optimizer_params


def _backward_in_transform():
    m = _Scorer()

    def per_sample(x):
        loss = m(x[None]).sum()
        loss.backward()  # L:backward_in_transform
        return loss

    torch.func.vmap(per_sample)(torch.randn(3, 4))


def _item_in_transform():
    m = _Scorer()

    def clipped(x):
        s = m(x[None]).sum()
        return s * 0 if s.item() > 100 else s  # L:item_in_transform

    torch.func.vmap(clipped)(torch.randn(3, 4))


def _jit_constant_requires_grad():
    temperature = torch.tensor(2.0, requires_grad=True)

    def calibrated(logits):
        return logits / temperature  # L:jit_constant_requires_grad

    torch.jit.trace(calibrated, torch.randn(2, 3))


_RAISED = {
    "leaf_inplace": (_leaf_inplace, "torch.no_grad()"),
    "leaf_inplace_view": (_leaf_inplace_view, "torch.no_grad()"),
    "out_argument": (_out_argument, "assign the result"),
    "multi_output_view_inplace": (_multi_output_view_inplace, "clone()"),
    "resize_requires_grad": (_resize_requires_grad, "reshape"),
    "detach_view_inplace": (_detach_view_inplace, ".detach()"),
    "gradient_shape_mismatch": (_gradient_shape_mismatch, "ones_like"),
    "gradient_count_mismatch": (_gradient_count_mismatch, "one gradient per output"),
    "integer_requires_grad": (_integer_requires_grad, "float"),
    "requires_grad_non_leaf": (_requires_grad_non_leaf, ".detach()"),
    "mixed_backward_hooks": (_mixed_backward_hooks, "register_full_backward_hook"),
    "grad_assignment_mismatch": (_grad_assignment_mismatch, "shape and dtype"),
    "parameter_assigned_tensor": (_parameter_assigned_tensor, "parametrize"),
    "legacy_function": (_legacy_function, ".apply("),
    "optimizer_params": (_optimizer_params, ".parameters()"),
    "backward_in_transform": (_backward_in_transform, "torch.func.grad"),
    "item_in_transform": (_item_in_transform, "torch.where"),
    "jit_constant_requires_grad": (_jit_constant_requires_grad, "input"),
}


@pytest.mark.parametrize("tag", sorted(_RAISED))
def test_an_error_raised_at_its_cause_names_the_cause_the_line_and_the_fix(tag):
    step, fix_has = _RAISED[tag]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (deprecated hooks, jit)
        try:
            step()
        except Exception as e:
            plain = type(e)
        else:
            pytest.fail("the program runs plain without the error")
        with pytest.raises(plain):
            with gradscope.trace() as tr:
                step()
    f = tr.failure
    cause = "leaf_inplace" if tag == "leaf_inplace_view" else tag
    assert f.cause == cause and site_hits(f.site, tag), f
    assert fix_has in f.fix and "see the error message" not in f.fix, f.fix
    assert f.summary.startswith(("backward", "the ", "torch.", "_")) or "failed:" in f.summary, f.summary


# --- rule plain_container_error: an error a plain container explains ----------------------------------------------

class _Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = (nn.Conv1d(2, 4, 3), nn.Conv1d(4, 4, 3))  # L:tower_tuple
        self.pool = nn.AdaptiveAvgPool1d(1)

    def forward(self, x):
        for c in self.convs:
            x = torch.relu(c(x))
        return self.pool(x).flatten(1)


def test_a_dtype_error_inside_a_layer_of_a_plain_tuple_names_the_tuple():
    """`.double()` converts the registered layers only; a conv kept in a plain tuple meets a double input."""
    model = _Tower().double()
    with pytest.raises(RuntimeError):
        with gradscope.trace() as tr:
            model(torch.randn(2, 2, 9, dtype=torch.float64)).sum().backward()
    f = tr.failure
    assert f.cause == "unregistered_container" and site_hits(f.site, "tower_tuple"), f
    assert "plain tuple" in f.summary and "nn.ModuleList" in f.fix, f


def test_an_optimizer_over_a_model_whose_layers_are_all_in_a_plain_list_names_the_list():
    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(3, 16), nn.Linear(16, 2)]  # L:policy_list

    def make_agent():
        policy = Policy()
        return policy, torch.optim.RMSprop(policy.parameters(), lr=1e-3)

    with pytest.raises(ValueError, match="empty parameter list"):
        with gradscope.trace() as tr:
            make_agent()
    f = tr.failure
    assert f.cause == "unregistered_container" and site_hits(f.site, "policy_list"), f


def test_a_dtype_error_with_registered_layers_is_not_blamed_on_a_container():
    lin = nn.Linear(3, 2)
    with pytest.raises(RuntimeError):
        with gradscope.trace() as tr:
            lin(torch.randn(4, 3, dtype=torch.float64))
    assert tr.failure.cause != "unregistered_container"


def test_backward_on_a_loss_of_tensors_made_before_the_trace_none_of_which_requires_grad():
    """The loss is computed only from tensors that existed before the traced block (predictions kept from an
    evaluation, the targets) and none requires grad: a plain requires_grad_false naming them, not "an unseen
    cut of trainable inputs" (they were never trainable)."""
    model = nn.Linear(3, 1)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    with torch.no_grad():
        kept = model(x)
    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr:
            loss = F.mse_loss(kept, y)
            loss.backward()  # loss-of-kept
    exp = tr.failure
    assert exp.cause == "requires_grad_false", exp
    assert exp.site.lineno == line_of("loss-of-kept"), exp
    assert "kept" in exp.summary and "none of the tensors" in exp.summary, exp


def test_an_inplace_write_outside_the_traced_block_is_named_as_unseen():
    """The forward and an in-place write into a saved activation ran before the traced block, which holds only
    the backward: the error is still an in-place modification of a saved tensor, reported at the backward with
    the message, saying the trace did not see the write, and the fix says what to look for."""
    lin = nn.Linear(3, 3)
    h = torch.sigmoid(lin(torch.randn(2, 3)))  # sigmoid saves its output for backward
    h.mul_(2)  # scaled in place, outside the trace
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        with gradscope.trace() as tr:
            h.sum().backward()  # unseen-write
    exp = tr.failure
    assert exp.cause == "inplace_saved_tensor" and exp.site.lineno == line_of("unseen-write"), exp
    assert "did not see the write" in exp.summary and "version" in exp.detail, exp
    assert "in-place writes" in exp.fix, exp


@pytest.mark.parametrize("n", [1, 4, 5])
def test_a_backward_on_a_frozen_model_lists_four_frozen_names_and_counts_the_rest(n):
    """Every layer frozen by one loop, then backward: the summary names up to four frozen parameters and counts
    the rest ("and 1 more" for five, nothing for four), with "was" for one and "were" for several."""
    model = nn.Sequential(*[nn.Linear(2, 2, bias=False) for _ in range(n)])
    with pytest.raises(RuntimeError, match="does not require grad"):
        with gradscope.trace() as tr:
            for p in model.parameters():
                p.requires_grad_(False)  # freeze-all
            model(torch.randn(3, 2)).sum().backward()
    exp = tr.failure
    assert exp.cause == "frozen_param" and exp.site.lineno == line_of("freeze-all"), exp
    shown = re.findall(r"\b\d\.weight\b", exp.summary)
    assert len(shown) == min(n, 4) and len(set(shown)) == len(shown), exp.summary
    assert (f"and {n - 4} more" in exp.summary) == (n > 4) and ("more" in exp.summary) == (n > 4), exp.summary
    assert ("was frozen" if n == 1 else "were frozen") in exp.summary, exp.summary


# --- anomaly_nonfinite: each op at the edge of its domain gets its own guard ---------------------------------------

def _edge_asin(h):
    s = torch.sigmoid(h) * 0 + 1.0
    return torch.asin(s)  # L:edge_asin


def _edge_div(h):
    share = (h * 0) / (h * 0).sum(dim=1, keepdim=True)  # L:edge_div
    return share


def _edge_log(h):
    p = torch.sigmoid(h) * 0  # (a probability that underflowed to 0)
    return torch.log(p)  # L:edge_log


def _edge_sqrt(h):
    return torch.sqrt(h * 0)  # L:edge_sqrt


def _edge_atanh(h):
    r = torch.tanh(h) * 0 + 1.0
    return torch.atanh(r)  # L:edge_atanh


def _edge_pow(h):
    return (h * 0) ** 0.5  # L:edge_pow


_EDGES = {"asin": (_edge_asin, "1 - 1e-7"), "div": (_edge_div, "denominator"), "log": (_edge_log, "log space"),
          "sqrt": (_edge_sqrt, "inside the root"), "atanh": (_edge_atanh, "atanh("),
          "pow": (_edge_pow, "base away from 0")}


@pytest.mark.parametrize("op", sorted(_EDGES))
def test_anomaly_nan_at_the_edge_of_an_ops_domain_names_its_line_and_its_own_guard(op):
    edge, guard = _EDGES[op]
    enc = _Embed()

    def step():
        edge(enc(torch.randn(3, 6))).mean().backward()

    f = _anomaly_failure(step)
    assert f.cause == "nonfinite_gradient" and site_hits(f.site, f"edge_{op}"), f
    assert f"{op}()" in f.summary and guard in f.fix, (f.summary, f.fix)


def test_a_freeze_loop_over_named_modules_in_a_scripts_top_level_code_says_so(tmp_path):
    # the loop is found around the freeze in module-level code too (after a function definition, which does not
    # enclose it)
    script = tmp_path / "freeze_script.py"
    script.write_text(
        "import torch\nimport torch.nn as nn\nimport gradscope\n\n\n"
        "def helper(x):\n    return x\n\n\n"
        "model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))\n"
        "tr = gradscope.trace()\n"
        "try:\n"
        "    with tr:\n"
        "        for name, m in model.named_modules():\n"
        "            if not name.startswith('1'):\n"
        "                m.requires_grad_(False)\n"
        "        model(torch.randn(3, 4)).sum().backward()\n"
        "except RuntimeError:\n"
        "    pass\n")
    import runpy

    freeze = script.read_text().splitlines().index("                m.requires_grad_(False)") + 1
    f = runpy.run_path(str(script), run_name="__main__")["tr"].failure
    assert f.cause == "frozen_param" and f.site.lineno == freeze and f.site.code == "m.requires_grad_(False)", f
    assert "a loop over named_modules() meets the whole model first" in f.summary, f.summary


def test_a_hidden_state_repackaged_with_clone_is_named_at_the_clone_line():
    # clone() copies the values but keeps the graph: the second step's backward runs into the first's freed graph;
    # the line to change is where the state is carried into the next step
    rnn, head = nn.GRU(3, 4, batch_first=True), nn.Linear(4, 1)

    def repackage(h):
        return h.clone()  # L:w_clone_carry

    h = torch.zeros(1, 2, 4)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        with tr:
            for _ in range(3):
                h = repackage(h)
                out, h = rnn(torch.randn(2, 5, 3), h)
                head(out).pow(2).mean().backward()
    f = tr.failure
    assert_explains(f, "backward_twice", "used again", "w_clone_carry", "instead of `h.clone()`")
    assert f.fix.startswith("use `h.detach()`"), f.fix
    assert any("rnn(" in (s.code or "") for s in f.extra_sites), f.extra_sites  # where it was computed


class _Dyn(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)

    def forward(self, s, a):
        return s + self.net(torch.cat([s, a], -1))[:, :3].sum(-1, keepdim=True)


def test_a_phase_freeze_undone_after_the_step_is_not_blamed_beside_a_numpy_cut():
    # a world model frozen while the policy learns through it (grad switched back on after the step): the policy's
    # actions went through np.clip
    import numpy as np

    dyn, policy = _Dyn(), nn.Linear(3, 1)

    def policy_step(s):
        dyn.requires_grad_(False)
        ret = 0.0
        for _ in range(3):
            a = torch.from_numpy(np.clip(policy(s).detach().numpy(), -1, 1))  # L:w_np_clip
            s = dyn(torch.cat([s, a], -1)[:, :3], a)[:, :3].repeat(1, 3)[:, :3]
            ret = ret + s.pow(2).sum()
        (-ret).backward()
        dyn.requires_grad_(True)

    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            policy_step(torch.randn(5, 3))
    f = tr.failure
    assert_explains(f, "numpy_roundtrip", "each of the 3 times the line ran", "w_np_clip", "`torch.clamp(...)`")


def test_a_student_frozen_by_mistake_beside_a_detached_teacher_is_the_freeze():
    student, teacher = nn.Linear(4, 2), nn.Linear(4, 2)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            student.requires_grad_(False)  # L:w_student_frozen
            x = torch.randn(3, 4)
            target = teacher(x).detach()  # (the teacher must not train: correct)
            F.mse_loss(student(x), target).backward()
    f = tr.failure
    assert f.cause == "frozen_param" and site_hits(f.site, "w_student_frozen"), f


# --- rule raised_upstream: raised at one line, caused at an earlier one ----------------------------------------

def _run_failing(fn, exc=RuntimeError):
    tr = gradscope.trace()
    with pytest.raises(exc) as info:
        with tr:
            fn()
    return tr.failure, str(info.value)


def test_backward_of_a_per_sample_loss_names_the_line_that_kept_it_per_sample():
    head = nn.Linear(4, 3)

    def step():
        x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
        losses = F.cross_entropy(head(x), y, reduction="none")  # L:w_per_sample
        weights = torch.rand(6)
        (losses * weights).backward()  # L:w_nonscalar_backward

    f, msg = _run_failing(step)
    assert "scalar outputs" in msg
    assert_explains(f, "nonscalar_backward", "holds [6] values, not one", "w_per_sample", "`.mean()`")
    assert any(s.lineno == line("w_nonscalar_backward") for s in f.extra_sites), f.extra_sites


def test_retain_grad_on_an_input_batch_names_where_the_batch_was_made():
    net = nn.Linear(4, 2)

    def load():
        return torch.randn(3, 4)

    def saliency():
        img = load()  # L:w_img_made
        img.retain_grad()
        net(img).sum().backward()

    f, _ = _run_failing(saliency)
    assert_explains(f, "retain_grad_no_grad", "`img` does not require grad", "w_img_made", "requires_grad_()")


def test_a_hook_on_features_computed_under_no_grad_names_the_no_grad_block():
    enc, head = nn.Linear(4, 4), nn.Linear(4, 1)

    def gradcam():
        x = torch.randn(2, 4)
        with torch.no_grad():  # L:w_cam_no_grad
            feats = enc(x)
        feats.register_hook(lambda g: g)
        head(feats).sum().backward()

    f, _ = _run_failing(gradcam)
    assert_explains(f, "hook_on_no_grad_tensor", "grad was switched off there", "w_cam_no_grad",
                    "outside torch.no_grad()")


@pytest.mark.parametrize("change", ["size", "dtype"])
def test_a_hook_that_changes_a_gradients_size_or_dtype_names_its_registration(change):
    enc, head = nn.Linear(4, 4), nn.Linear(4, 1)

    def step():
        h = enc(torch.randn(5, 4))
        if change == "size":
            h.register_hook(lambda g: g.mean(0))  # L:w_hook_reduces
        else:
            h.register_hook(lambda g: g.double())  # L:w_hook_casts
        head(h).sum().backward()

    f, msg = _run_failing(step)
    assert f"changed the {'size' if change == 'size' else 'type'} of value" in msg
    assert_explains(f, "hook_changed_gradient", f"another {change}", "w_hook_reduces" if change == "size"
                    else "w_hook_casts", "same shape and dtype")


def test_autograd_grad_of_an_input_that_does_not_require_grad_names_where_it_was_made():
    critic = nn.Linear(4, 1)

    def penalty():
        real = torch.randn(6, 4)  # L:w_real_made
        out = critic(real).sum()
        torch.autograd.grad(out, real, create_graph=True)

    f, _ = _run_failing(penalty)
    assert_explains(f, "input_not_requiring_grad", "`real` does not require grad", "w_real_made", "requires_grad_()")


def test_a_cut_a_comprehension_ran_for_three_tensors_names_all_three():
    w1, w2, w3 = (nn.Parameter(torch.randn(2)) for _ in range(3))
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            frozen = [p.detach() for p in (w1, w2, w3)]  # L:w_three_detached
            sum(f.sum() for f in frozen).backward()
    f = tr.failure
    assert f.cause == "detach" and site_hits(f.site, "w_three_detached"), f
    assert "every one of 3 tensors on that line (w1, w2, w3)" in f.summary, f.summary


def test_a_zero_grad_called_through_another_name_is_still_said_to_be_zero_grad():
    net = nn.Linear(3, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    reset = opt.zero_grad
    with gradscope.trace() as tr:
        net(torch.randn(4, 3)).sum().backward()
        reset()  # L:w_reset_alias
        opt.step()
    exp = tr.why(net.weight)
    assert exp.cause == "set_to_none_timing" and site_hits(exp.site, "w_reset_alias"), exp
    assert "then zero_grad() at" in exp.summary and "`.grad = None`" not in exp.summary, exp.summary


def test_a_float64_target_from_numpy_names_where_it_was_made():
    import numpy as np

    clf = nn.Linear(4, 1)

    def step():
        x = torch.randn(6, 4)
        labels = torch.from_numpy(np.random.default_rng(0).integers(0, 2, (6, 1)).astype(np.float64))  # L:w_f64
        F.binary_cross_entropy(torch.sigmoid(clf(x)), labels).backward()

    f, msg = _run_failing(step)
    assert "Found dtype Double but expected Float" in msg
    assert_explains(f, "dtype_mismatch", "`labels` is float64", "w_f64", ".float()")


def test_a_cached_slice_of_the_weights_taken_under_no_grad_and_written_later_names_the_slice():
    net = nn.Linear(3, 2)

    def step():
        with torch.no_grad():
            row = net.weight[1]  # L:w_cached_row
        out = net(torch.randn(4, 3))
        row.add_(1.0)
        out.sum().backward()

    f, msg = _run_failing(step)
    assert "created in no_grad mode" in msg
    assert_explains(f, "no_grad_view_inplace", "a view taken under no_grad", "w_cached_row", "torch.no_grad()")


def test_a_squared_error_kept_per_sample_names_the_prediction_through_the_arithmetic():
    net = nn.Linear(3, 1)

    def step():
        x, y = torch.randn(5, 3), torch.randn(5, 1)
        pred = net(x)  # L:w_pred_per_sample
        (((pred - y) ** 2) * 0.5).backward()

    f, _ = _run_failing(step)
    assert f.cause == "nonscalar_backward" and site_hits(f.site, "w_pred_per_sample"), f


def test_an_accumulator_made_by_expand_and_written_through_a_slice_names_the_expand():
    lin = nn.Linear(4, 4)

    def step():
        acc = torch.zeros(1, 4).expand(6, 4)  # L:w_expand_acc
        feats = lin(torch.randn(6, 4))
        acc[:, :2] += feats[:, :2]
        acc.sum().backward()

    f, msg = _run_failing(step)
    assert "refers to a single memory location" in msg
    assert_explains(f, "inplace_on_expanded", "`acc` was made by expanding", "w_expand_acc", ".clone()")
    assert any(s.lineno == line("w_expand_acc") + 2 for s in f.extra_sites), f.extra_sites


def test_an_in_place_write_into_a_buffer_from_repeat_is_not_blamed_on_expand():
    """repeat() makes real copies: writing into them is fine, and nothing is explained as an expand."""
    lin = nn.Linear(4, 4)
    tr = gradscope.trace()
    with tr:
        acc = torch.zeros(1, 4).repeat(6, 1)
        acc += lin(torch.randn(6, 4))
        acc.sum().backward()
    assert tr.failure is None
    assert tr.why(lin.weight).cause == "ok"


def test_a_backbone_group_beside_all_parameters_names_the_groups():
    """Discriminative learning rates: the head's group built from model.parameters() lists the backbone again."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone, self.head = nn.Linear(4, 8), nn.Linear(8, 2)

    net = Net()

    def step():
        param_groups = [  # L:w_groups
            {"params": net.backbone.parameters(), "lr": 1e-4},
            {"params": net.parameters(), "lr": 1e-2},
        ]
        torch.optim.AdamW(param_groups)

    f, msg = _run_failing(step, exc=ValueError)
    assert "more than one parameter group" in msg
    assert_explains(f, "param_in_two_groups", "`param_groups`", "w_groups", "named_parameters()")


def test_a_weight_moved_to_a_dtype_after_requires_grad_names_that_move():
    """A hand-made embedding table: requires_grad=True and then .to(float64): the optimizer gets the copy."""
    def step():
        table = torch.zeros(10, 3).normal_().requires_grad_()
        emb = table.to(torch.float64)  # L:w_moved_table
        torch.optim.Adam([emb, torch.zeros(3, requires_grad=True)], lr=1e-3)

    f, msg = _run_failing(step, exc=ValueError)
    assert "non-leaf" in msg
    assert_explains(f, "optimize_non_leaf", "`emb` is not a leaf", "w_moved_table", "requires_grad_()")


def test_a_checkpointed_block_with_a_random_branch_names_the_checkpoint():
    """Stochastic depth inside a checkpointed layer: the recomputation draws another coin and skips other ops."""
    from torch.utils.checkpoint import checkpoint

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.flips = nn.Linear(4, 4), iter([True, False])

        def forward(self, x):
            if next(self.flips):  # a coin that comes up differently when backward recomputes
                return x + torch.tanh(self.fc(x)) * torch.sigmoid(x)
            return x + self.fc(x)

    layer = Layer()

    def step():
        h = checkpoint(layer, torch.randn(3, 4), use_reentrant=False)  # L:w_ckpt_coin
        h.pow(2).sum().backward()

    tr = gradscope.trace()
    with pytest.raises(torch.utils.checkpoint.CheckpointError):
        with tr:
            step()
    assert_explains(tr.failure, "checkpoint_recompute_mismatch", "computed something else", "w_ckpt_coin",
                    "depend only on its tensor inputs")


def test_ddp_over_a_weight_shared_layer_checkpointed_per_use_names_the_checkpoint():
    """ALBERT-style sharing through a list of the same layer, each use under a reentrant checkpoint."""
    import tempfile

    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.checkpoint import checkpoint

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(4, 4)

        def forward(self, h):
            for layer in [self.layer] * 3:
                h = torch.relu(checkpoint(layer, h, use_reentrant=True))  # L:w_ddp_ckpt
            return h

    tr = gradscope.trace()
    with tempfile.TemporaryDirectory() as d:  # (a FileStore removes its file when it goes)
        dist.init_process_group("gloo", store=dist.FileStore(f"{d}/store", 1), rank=0, world_size=1)
        try:
            model = DDP(Encoder(), find_unused_parameters=True)
            with pytest.raises(RuntimeError, match="mark a variable ready only once"):
                with tr:
                    model(torch.randn(2, 4, requires_grad=True)).sum().backward()
        finally:
            # (DDP's reducer must go before its process group: a gloo group destroyed by the reducer's last reference
            # joins its worker threads holding the GIL, torch issue #56297)
            model = None
            gc.collect()
            dist.destroy_process_group()
    assert_explains(tr.failure, "ddp_marked_twice", "ready twice", "w_ddp_ckpt", "use_reentrant=False")


def _gan_g_first():
    """A GAN step on one fake batch with one optimizer each, G's step first; D's loss takes the fake batch in
    without detach()."""
    G, D = nn.Sequential(nn.Linear(3, 4), nn.Tanh()), nn.Sequential(nn.Linear(4, 1))
    opt_g, opt_d = torch.optim.Adam(G.parameters()), torch.optim.Adam(D.parameters())
    bce = nn.BCEWithLogitsLoss()
    ones, zeros = torch.ones(5, 1), torch.zeros(5, 1)
    fake = G(torch.randn(5, 3))
    loss_g = bce(D(fake), ones)
    loss_d = bce(D(torch.randn(5, 4)), ones) + bce(D(fake), zeros)  # L:w_d_on_fake
    for opt, loss in [(opt_g, loss_g), (opt_d, loss_d)]:
        opt.zero_grad()
        loss.backward()
        opt.step()


def _gan_d_first():
    """The usual order: D's step (its loss on the fake batch without detach()), then G's loss and step."""
    G, D = nn.Sequential(nn.Linear(3, 4), nn.Tanh()), nn.Sequential(nn.Linear(4, 1))
    opt_g, opt_d = torch.optim.Adam(G.parameters()), torch.optim.Adam(D.parameters())
    bce = nn.BCEWithLogitsLoss()
    fake = G(torch.randn(5, 3))
    opt_d.zero_grad()
    loss_d = bce(D(torch.randn(5, 4)), torch.ones(5, 1)) + bce(D(fake), torch.zeros(5, 1))  # L:w_d_first_fake
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    bce(D(fake), torch.ones(5, 1)).backward()
    opt_g.step()


@pytest.mark.parametrize("step, tag, earlier", [(_gan_g_first, "w_d_on_fake", False),
                                                (_gan_d_first, "w_d_first_fake", True)], ids=["g_first", "d_first"])
def test_a_discriminator_loss_on_the_undetached_fake_batch_names_that_use(step, tag, earlier):
    """Whichever step runs first, the line to change is where D's loss takes `fake` in: it trains D only, and
    its backward into G freed (or needed) G's graph."""
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="second time"):
        with tr:
            step()
    f = tr.failure
    assert_explains(f, "backward_twice", "takes `fake` in", tag, "fake.detach()")
    assert ("the earlier loss" in f.summary) == earlier, f.summary


def test_a_loss_module_that_keeps_one_loss_per_task_names_the_line_inside_it():
    """A multi-task criterion whose forward returns its weighted per-task vector: the line to change (a sum) is
    inside the criterion's forward; the caller's line stays in the site's stack."""
    class Weighted(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(2))

        def forward(self, a, b):
            return torch.stack([a, b]) * torch.exp(-self.w) + self.w  # L:w_per_task

    net, crit = nn.Linear(3, 2), Weighted()

    def step():
        out = net(torch.randn(4, 3))
        total = crit(out[:, 0].pow(2).mean(), out[:, 1].abs().mean())  # L:w_crit_call
        total.backward()

    f, _ = _run_failing(step)
    assert_explains(f, "nonscalar_backward", "holds [2] values", "w_per_task", ".sum()")
    assert any(fr.lineno == line("w_crit_call") for fr in f.site.stack), f.site.stack


def test_a_memory_bank_that_keeps_the_step_s_embeddings_with_their_graph_names_where_it_keeps_them():
    """Contrastive learning with a memory bank updated after the loss: the next step's loss reads the bank, whose
    rows still carry the previous step's graph. The line to change is the update (store them detached)."""
    enc = nn.Linear(4, 3)
    opt = torch.optim.SGD(enc.parameters(), lr=0.1)
    bank = [torch.zeros(6, 3)]

    def train():
        for _ in range(2):
            z = F.normalize(enc(torch.randn(2, 4)), dim=1)
            loss = -(z @ bank[0].t()).logsumexp(1).mean() + z.pow(2).sum()
            bank[0] = torch.cat([z, bank[0]])[:6]  # L:w_bank_update
            opt.zero_grad()
            loss.backward()
            opt.step()

    f, _ = _run_failing(train)
    assert_explains(f, "backward_twice", "keeps `z` with its graph", "w_bank_update", "z.detach()")
    # (the next step's use of the bank comes next)
    assert [x.lineno for x in f.extra_sites] == [line("w_bank_update") - 1], f.extra_sites


def test_a_target_computed_once_through_a_layer_names_the_call_before_the_loop():
    """Feature matching against a target computed once, before the loop, by a layer whose own lines run every
    step: the line to change is that call, not the layer's line."""
    feat = nn.Linear(4, 4)
    x = torch.randn(3, 4, requires_grad=True)
    opt = torch.optim.SGD([x], lr=0.1)

    def train():
        target = feat(torch.randn(3, 4))  # L:w_target_once
        for _ in range(2):
            opt.zero_grad()
            F.mse_loss(feat(x), target).backward()
            opt.step()

    f, _ = _run_failing(train)
    assert_explains(f, "backward_twice", "computed once", "w_target_once", "torch.no_grad()")


def test_a_discriminator_frozen_for_the_generator_step_and_never_unfrozen_is_named_beside_a_no_grad_fake():
    """The second step's discriminator loss has no history: its fake batch was made under no_grad (meant), and D
    was frozen for G's step after its optimizer had stepped it, and never unfrozen. The freeze is the cause."""
    G, D = nn.Linear(2, 3), nn.Linear(3, 1)
    opt_g, opt_d = torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(D.parameters(), lr=0.1)

    def train():
        for _ in range(2):
            with torch.no_grad():
                fake = G(torch.randn(4, 2))
            d_loss = F.softplus(-D(torch.randn(4, 3))).mean() + F.softplus(D(fake)).mean()
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
            D.requires_grad_(False)  # L:w_d_left_frozen
            g_loss = F.softplus(-D(G(torch.randn(4, 2)))).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()

    f, msg = _run_failing(train)
    assert "does not require grad" in msg
    assert_explains(f, "frozen_param", "never unfrozen", "w_d_left_frozen", "requires_grad_(True)")


def test_a_custom_function_that_saves_its_dimension_for_backward_names_that_save():
    """A hand-written softmax that passes its int dim to save_for_backward: TypeError at apply(); the line to
    change is the save in forward."""
    class Softmax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, dim):
            y = torch.softmax(x, dim)
            ctx.save_for_backward(y, dim)  # L:w_save_dim
            return y

        @staticmethod
        def backward(ctx, g):
            y, dim = ctx.saved_tensors
            return y * (g - (g * y).sum(dim, keepdim=True)), None

    lin = nn.Linear(3, 3)
    f, msg = _run_failing(lambda: Softmax.apply(lin(torch.randn(2, 3)), 1).sum().backward(), exc=TypeError)
    assert "save_for_backward can only save variables" in msg
    assert_explains(f, "save_for_backward_non_tensor", "passes a Python int (argument 1)", "w_save_dim", "attributes of ctx")


def test_torch_func_grad_of_a_per_sample_squared_error_names_the_prediction_through_the_arithmetic():
    """torch.func.grad over a loss function that forgot its mean: the error is raised at the grad(...) call; the
    line that made the result non-scalar is found back through the element-wise arithmetic."""
    from torch.func import functional_call, grad

    net = nn.Linear(3, 1)
    x, y = torch.randn(5, 3), torch.randn(5, 1)

    def loss_fn(params):
        pred = functional_call(net, params, (x,))  # L:w_func_pred
        return (pred - y) ** 2 * 0.5

    f, msg = _run_failing(lambda: grad(loss_fn)(dict(net.named_parameters())))
    assert "to return a scalar Tensor" in msg
    assert_explains(f, "nonscalar_backward", "holds [5, 1] values", "w_func_pred", ".mean()")


def test_deepcopy_of_a_model_that_keeps_its_last_attention_map_names_where_it_keeps_it():
    """An EMA copy made with copy.deepcopy of a model that stores its attention weights for visualisation."""
    import copy

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k = nn.Linear(4, 4), nn.Linear(4, 4)

        def forward(self, x):
            self.attn_map = torch.softmax(self.q(x) @ self.k(x).t(), -1)  # L:w_attn_cached
            return self.attn_map @ x

    model = Attn()

    def step():
        model(torch.randn(3, 4)).sum().backward()
        copy.deepcopy(model)

    f, msg = _run_failing(step)
    assert "deepcopy protocol" in msg
    assert_explains(f, "deepcopy_non_leaf", "`self.attn_map`", "w_attn_cached", ".detach()")


def test_deepcopy_of_a_vocoder_with_the_old_weight_norm_names_where_it_was_applied():
    import copy

    def step():
        net = nn.Sequential(nn.utils.weight_norm(nn.Linear(3, 3)), nn.Tanh())  # L:w_old_weight_norm
        net(torch.randn(2, 3)).sum().backward()
        copy.deepcopy(net)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (weight_norm's deprecation)
        f, msg = _run_failing(step)
    assert "deepcopy protocol" in msg
    assert_explains(f, "deepcopy_non_leaf", "old torch.nn.utils.weight_norm", "w_old_weight_norm", "parametrizations")


def test_an_in_place_add_on_a_hooked_block_s_output_names_that_add():
    """A gradient-logging hook on a block (register_full_backward_hook), then a residual added in place to the
    block's output in the user's own code: the in-place line is the cause."""
    block = nn.Linear(4, 4)
    block.register_full_backward_hook(lambda m, gi, go: None)

    def step():
        x = torch.randn(2, 4)
        y = block(x)
        y += x  # L:w_hooked_iadd
        y.sum().backward()

    f, msg = _run_failing(step)
    assert "BackwardHookFunction" in msg
    assert_explains(f, "backward_hook_inplace", "full backward hook", "w_hooked_iadd", "out-of-place")


def _set_requires_grad(nets, flag):
    for net in nets:
        for p in net.parameters():
            p.requires_grad = flag


def test_a_generator_left_frozen_by_a_helper_beside_a_discriminator_frozen_for_this_step_names_the_left_one():
    """pix2pix-style `set_requires_grad(nets, flag)`: the D step freezes G (and never unfreezes it), the G step
    freezes D for itself. G's loss has no history: the freeze left from the D step is the cause, named at the
    call that passed False; D's freeze, made for this step, is not."""
    G, D = nn.Linear(2, 3), nn.Linear(3, 1)
    opt_g, opt_d = torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(D.parameters(), lr=0.1)

    def d_step():
        _set_requires_grad([D], True)
        _set_requires_grad([G], False)  # L:w_g_left_frozen
        d_loss = F.softplus(D(G(torch.randn(4, 2)))).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()

    def g_step():
        _set_requires_grad([D], False)
        g_loss = F.softplus(-D(G(torch.randn(4, 2)))).mean()
        opt_g.zero_grad()
        g_loss.backward()

    def train():
        d_step()
        g_step()

    f, _ = _run_failing(train)
    assert_explains(f, "frozen_param", "never unfrozen", "w_g_left_frozen", "requires_grad_(True)")
    assert "D.weight" not in f.summary, f.summary


def test_a_feature_net_frozen_in_its_constructor_beside_a_no_grad_around_the_model_output_names_the_no_grad():
    """A perceptual loss whose feature network freezes itself in __init__ (meant); the step computes the features
    of the model's output under no_grad too (the bug). The no_grad block is the cause, not the freeze."""
    class Features(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Linear(4, 4)
            self.requires_grad_(False)

        def forward(self, x):
            return torch.relu(self.conv(x))

    model, feats = nn.Linear(4, 4), Features()

    def step():
        out = model(torch.randn(3, 4))
        with torch.no_grad():  # L:w_nograd_output_feats
            target, pred = feats(torch.randn(3, 4)), feats(out)
        F.l1_loss(pred, target).backward()

    f, _ = _run_failing(step)
    assert_explains(f, "no_grad_block", "cut off from autograd", "w_nograd_output_feats", "no_grad")


def test_a_recurrent_state_kept_in_an_attribute_names_the_line_that_keeps_it():
    """A streaming GRU cell that keeps its state on the module between calls: the line to change is where the
    state is kept (store it detached)."""
    class Streaming(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell, self.h = nn.GRUCell(3, 4), torch.zeros(2, 4)

        def forward(self, x):
            h = self.cell(x, self.h)  # L:w_state_read
            self.h = h  # L:w_state_kept
            return h.sum()

    model = Streaming()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def train():
        for _ in range(2):
            opt.zero_grad()
            model(torch.randn(2, 3)).backward()
            opt.step()

    f, _ = _run_failing(train)
    assert_explains(f, "backward_twice", "is kept for the next step in `self.h`", "w_state_kept", "h.detach()")
    assert [s.lineno for s in f.extra_sites] == [line("w_state_read")], f.extra_sites  # (where the kept state came in)


def test_a_simulator_state_kept_on_an_object_between_windows_names_that_line():
    """Truncated backpropagation through a simulator: each window starts from the state the last one kept on the
    environment object; it is kept with its graph."""
    class Env:
        def __init__(self):
            self.x = torch.ones(1, 2)

        def step(self, x, u):
            return x + 0.1 * torch.tanh(u)

    ctrl, env = nn.Linear(2, 2), Env()
    opt = torch.optim.SGD(ctrl.parameters(), lr=0.1)

    def train():
        for _ in range(2):
            x = env.x
            cost = 0.0
            for _ in range(3):
                x = env.step(x, ctrl(x))
                cost = cost + x.pow(2).sum()
            env.x = x  # L:w_env_kept
            opt.zero_grad()
            cost.backward()
            opt.step()

    f, _ = _run_failing(train)
    assert_explains(f, "backward_twice", "is kept for the next step in `env.x`", "w_env_kept", "x.detach()")


def test_the_first_argument_of_a_call_is_read_as_written_and_not_guessed():
    from gradscope.diagnosis.common import _first_arg

    assert _first_arg("t = torch.tensor(boxes, dtype=torch.float32)", "torch.tensor(") == "boxes"
    assert _first_arg("t = torch.tensor(f(a, b)[0])", "torch.tensor(") == "f(a, b)[0]"
    assert _first_arg("t = torch.tensor(data=boxes)", "torch.tensor(") is None  # (a keyword: no positional first)
    assert _first_arg("t = torch.tensor(" + "a" * 61 + ")", "torch.tensor(") is None  # (too long to quote)
    assert _first_arg("t = torch.tensor()", "torch.tensor(") is None
    assert _first_arg("t = x + 1", "torch.tensor(") is None


def test_a_backward_error_the_block_caught_is_the_traces_failure():
    """`try: loss.backward() except RuntimeError: ...` inside the block: nothing leaves it, but the step's last
    backward failed; that failure is explained (not the detach() that made the alias, "never received back")."""
    w = nn.Parameter(torch.linspace(-1, 1, 4))
    caught = []
    with gradscope.trace() as tr:
        y = torch.sigmoid(w * 2)
        z = y.detach()
        z.zero_()  # L:caught_write
        try:
            y.sum().backward()
        except RuntimeError as e:
            caught.append(e)
    assert caught and tr.data.exception is not None and tr.data.meta.get("exception_caught") is True
    exp = tr.why(w)
    assert_explains(exp, "inplace_saved_tensor", "z", "caught_write", "copy before writing")
    assert tr.failure is not None and tr.failure.cause == "inplace_saved_tensor"


def test_a_caught_backward_error_followed_by_a_backward_that_ran_is_no_failure():
    """The step went on after the caught error (a second backward ran): no failure is made up."""
    w = nn.Parameter(torch.linspace(-1, 1, 4))
    with gradscope.trace() as tr:
        y = torch.sigmoid(w * 2)
        y.detach().zero_()
        try:
            y.sum().backward()
        except RuntimeError:
            pass
        torch.sigmoid(w * 2).sum().backward()  # L:caught_then_ok
    assert tr.data.exception is None and "exception_caught" not in tr.data.meta
    assert tr.failure is None and tr.why(w).cause == "ok"


def test_a_backward_that_fails_because_every_parameter_was_frozen_before_the_trace_names_their_use():
    m = nn.Linear(3, 1)
    m.requires_grad_(False)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            loss = m(torch.randn(2, 3)).sum()  # L:frozen_use
            loss.backward()
    f = tr.failure
    assert f.cause == "frozen_param" and site_hits(f.site, "frozen_use"), f
    assert "m.weight, m.bias" in f.summary and "requires_grad=False" in f.summary and "unfreeze" in f.fix, f


def test_an_optimizer_given_a_computed_tensor_names_where_that_tensor_was_made_not_another_computed_one():
    """`can't optimize a non-leaf Tensor`: the tensor the optimizer's line passes (`w`) was made by `.double()`
    after requires_grad=True; a later computed tensor (`h`) that requires grad is not the one."""
    tr = gradscope.trace()
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        with tr:
            w = torch.randn(4, 2, requires_grad=True).double()  # L:w_nonleaf_made
            h = w * 2  # L:w_nonleaf_other
            torch.optim.SGD([w], lr=0.1)
    assert h.requires_grad and not h.is_leaf
    f = tr.failure
    assert f.cause == "optimize_non_leaf" and f.site.lineno == line("w_nonleaf_made"), f


def test_a_carried_state_without_a_name_gets_a_fix_that_is_code():
    """The carried state is `states[-1]`'s value, which no variable names (the trace labels it by the expression
    that made it): the fix writes `<state> = <state>.detach()`, never an assignment to an expression."""
    lin = nn.Linear(4, 4)
    states = [torch.zeros(2, 4)]
    with gradscope.trace() as tr:
        try:
            for _ in range(2):
                states.append(torch.tanh(lin(states[-1])))
                states[-1].sum().backward()
        except RuntimeError:
            pass
    f = tr.failure
    assert f is not None and f.cause == "backward_twice", f
    assert "`<state> = <state>.detach()`" in f.fix, f.fix
    assert "torch.tanh(lin(states[-1])) =" not in f.fix


def test_a_state_accumulated_with_plus_equals_is_named_by_its_variable():
    """`total_loss += loss` (an int 0 plus a tensor: a new tensor each step) carried into the next backward: the text
    and the fix name `total_loss`, the variable the augmented assignment writes."""
    lin = nn.Linear(3, 1)
    total_loss = 0
    with gradscope.trace() as tr:
        try:
            for _ in range(2):
                loss = lin(torch.ones(2, 3)).pow(2).mean()
                total_loss += loss
                total_loss.backward()
        except RuntimeError:
            pass
    f = tr.failure
    assert f is not None and f.cause == "backward_twice", f
    assert "`total_loss` was computed" in f.summary, f.summary
    assert "`total_loss = total_loss.detach()`" in f.fix, f.fix
