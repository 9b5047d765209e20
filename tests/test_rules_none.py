"""The rules for a missing gradient (status ``none``, gradscope.diagnosis.rules_none; the unused-parameter rules
of the same status are in tests/test_rules_unused.py), each on a real torch run or a saved trace (tests/fixtures):
a cut on the data path (detach, .data, NumPy/item/tolist round trips, a re-wrap, no_grad and inference_mode
regions reported at the line that opened them, non-differentiable ops and integer casts; every cut on the way is
named, the main one first), non-leaves, buffers, replaced and frozen parameters, an unfreeze that did not reach a
parameter, a manual update that rebound the leaf, tensors created without requires_grad, a failed or missing
backward, autograd.grad instead of backward, a hook that cleared .grad, a clear before the read that needed it
(named at the clear and at the read), a custom backward that sent None.

Each test checks the cause, the site (found from a marker comment in this file: ``# L:<tag>`` or ``# <mark>``,
never hard-coded; tests/_rules_helpers.py), the user's names in the summary and the fix.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

import gradscope

from _rules_helpers import Markers, _TwoLayer, mlp, batch, load, case_line, _rule_case
from test_rules_received import loop_clip, loop_logger, loop_tutorial

M = Markers(__file__)
THIS = M.this
BASENAME = M.basename
line = M.line
line_of = M.line_of
at = M.at
on_line = M.on_line
site_hits = M.site_hits
stack_lines = M.stack_lines
assert_explains = M.assert_explains

pytestmark = pytest.mark.filterwarnings("ignore")


# --- rule to_copy_is_not_a_leaf: The name was rebound to a .to()/.double() copy of a leaf that requires grad. --------

def test_leaf_replaced_by_to():
    net = nn.Linear(4, 1).double()
    with gradscope.trace() as tr:
        img = torch.rand(2, 4, requires_grad=True)
        img = img.double()  # L:leaf_to
        net(img).sum().backward()
    assert img.grad is None
    assert_explains(tr.why(img), "leaf_replaced_by_to", "img", "leaf_to", ("dtype", "leaf"))


# --- rule non_leaf: A non-leaf without retain_grad(): PyTorch fills .grad of leaves only. ----------------------------

def test_non_leaf_no_retain_grad():
    lin = nn.Linear(4, 4)
    with gradscope.trace() as tr:
        x = torch.randn(3, 4)
        hidden = lin(x)  # L:non_leaf
        loss = torch.tanh(hidden).sum()
        loss.backward()
    assert_explains(tr.why(hidden), "non_leaf_no_retain_grad", "hidden", "non_leaf", "retain_grad")


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


# --- rule buffer: A buffer of the model (state, not a parameter). ----------------------------------------------------

class _WithBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("offsets", torch.arange(3).float())

    def forward(self, x):
        return self.lin(x) + self.offsets


@pytest.mark.parametrize("freeze_loop", [False, True])
def test_a_buffer_is_explained_as_a_buffer(freeze_loop):
    with gradscope.trace() as tr:
        m = _WithBuffer()
        if freeze_loop:  # a loop over the state dict also "freezes" the buffer: it is still not a frozen parameter
            for t in m.state_dict(keep_vars=True).values():
                t.requires_grad_(False)
            m.lin.weight.requires_grad_(True)
            m.lin.bias.requires_grad_(True)
        m(torch.randn(2, 3)).sum().backward()
    exp = tr.why(m.offsets)
    assert exp.cause != "frozen_param"
    assert "buffer" in exp.summary and "nn.Parameter" in exp.fix
    assert "requires_grad=True" not in exp.fix


# --- rule param_replaced: The parameter left the model: its module path now holds another parameter (or ... ----------

def _train_once(m, opt, x):
    opt.zero_grad()
    m(x).sum().backward()
    opt.step()


@pytest.mark.parametrize("also", ["frozen", "cleared"])
def test_a_parameter_that_left_the_model_is_the_replacement(also):
    m = _TwoLayer()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(2, 3)
    with gradscope.trace() as tr:
        _train_once(m, opt, x)  # the step before the replacement fills every .grad
        old = m.head.weight
        if also == "frozen":
            for p in m.parameters():
                p.requires_grad = False
            m.body.weight.requires_grad_(True)
        m.head = nn.Linear(3, 1)  # head-replaced
        opt.zero_grad()  # clears the old head's .grad: the next backward cannot fill it
        _train_once(m, opt, x)  # (a second call of the same step: a different stack than the first)
    assert old.grad is None
    exp = tr.why(old)
    assert exp.cause == "param_recreated", exp
    assert exp.site.lineno == line_of("head-replaced")
    assert "head" in exp.summary
    # the body parameter that stayed in the model is not read as replaced
    assert tr.why(m.body.weight).cause != "param_recreated"


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


def test_a_parameter_replaced_by_a_fresh_nn_parameter_gets_the_rebuild_the_optimizer_fix():
    """A new nn.Parameter made from new values (not a re-wrap of the old ones) after the optimizer was built: the
    fix is to give the optimizer the new parameter, not to change the values in place."""
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
        logged = model.alpha.item()  # (a cut just before: not what made the new parameter)
        model.alpha = nn.Parameter(torch.tensor(1.0))  # L:w_fresh_param
        opt.zero_grad()
        model(torch.randn(4, 3)).pow(2).mean().backward()
        opt.step()
    exp = tr.why(old)
    assert exp.cause == "param_recreated" and site_hits(exp.site, "w_fresh_param"), exp
    assert "replaced by a new Parameter" in exp.summary, exp.summary
    assert "add_param_group" in exp.fix and "in place" not in exp.fix and "clamp_" not in exp.fix, exp.fix


def test_a_parameter_that_left_the_model_is_its_replacement_even_when_frozen():
    exp = _rule_case("param_replaced")
    assert (exp.cause, exp.rule) == ("param_recreated", "param_replaced")
    assert exp.site.code.startswith("m.head = nn.Linear(")
    # the same trace with the parameter still in the model: its freeze explains it, not a replacement
    kept = _rule_case("param_replaced", drop_left_model=True)
    assert kept.cause == "frozen_param" and kept.rule != "param_replaced", kept


# --- rule unfreeze_kept_away: An unfreeze ran, but a condition around it kept it from this parameter. ----------------

def _unfreeze(model, flag):
    for p in model.parameters():
        if p.requires_grad:  # unfreeze-guard
            p.requires_grad = flag  # unfreeze-set


def _unfreeze_subset(model):
    for p in model.head.parameters():
        p.requires_grad_(True)  # unfreeze-subset


@pytest.mark.parametrize("how, mark", [("guard", "unfreeze-guard"), ("subset", "unfreeze-subset")])
def test_an_unfreeze_that_did_not_reach_a_parameter(how, mark):
    m = _TwoLayer()
    m.body.weight.requires_grad_(False)
    with gradscope.trace() as tr:
        if how == "guard":
            _unfreeze(m, True)
        else:
            _unfreeze_subset(m)
        m(torch.randn(2, 3)).sum().backward()
    exp = tr.why(m.body.weight)
    assert exp.cause == "frozen_param", exp
    assert "body.weight" in exp.summary and f":{line_of(mark)}" in exp.summary
    if how == "guard":  # the condition is the site
        assert exp.site.lineno == line_of(mark), exp
        assert f":{line_of('unfreeze-set')}" in exp.summary and "`if p.requires_grad:`" in exp.summary
    else:  # no condition to show: the freeze stays the cause, and the text says the unfreeze did not reach it
        assert exp.site.lineno != line_of(mark)
        assert "did not reach body.weight" in exp.summary


def test_guard_that_kept_an_unfreeze_away():
    diag, tid = load("guarded_unfreeze")
    exp = diag.why(tid)
    assert exp.cause == "frozen_param" and exp.site.lineno == case_line("unfreeze-guard")


# --- rule frozen_in_trace: Frozen (requires_grad=False) by a call the trace saw. -------------------------------------

def test_frozen_param():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    with gradscope.trace() as tr:
        for p in model[0].parameters():
            p.requires_grad_(False)  # L:frozen
        loss = model(torch.randn(3, 4)).pow(2).mean()
        loss.backward()
    assert model[0].weight.grad is None
    assert_explains(tr.why(model[0].weight), "frozen_param", "0.weight", "frozen", "requires_grad")


def _freeze_backbone_step(train_backbone_too):
    torch.manual_seed(0)
    backbone, head = nn.Sequential(nn.Linear(8, 16), nn.ReLU()), nn.Linear(16, 2)
    params = list(head.parameters()) + (list(backbone.parameters()) if train_backbone_too else [])
    opt = torch.optim.Adam(params, lr=1e-3)
    with gradscope.trace() as tr:
        for p in backbone.parameters():
            p.requires_grad_(False)  # L:w_freeze_backbone
        opt.zero_grad()
        F.cross_entropy(head(backbone(torch.randn(4, 8))), torch.tensor([0, 1, 0, 1])).backward()
        opt.step()
    return tr, backbone


def test_an_intended_freeze_of_what_no_optimizer_holds_is_frozen_not_trained_everywhere():
    """A pretrained backbone frozen on purpose (the optimizer holds only the head): one verdict on every surface.
    The step is OK, the freeze is benign, the table counts nothing as unhealthy and says "not trained" with the
    freeze's line, and the JSON agrees."""
    import io
    from rich.console import Console
    from gradscope.cli import trace_json

    tr, backbone = _freeze_backbone_step(False)
    s = tr.summary()
    assert s.ok and s.problems == [] and s.harmful_cuts == [], s.problems
    assert all(e.verdict == "benign" for e in tr.cuts()) and len(tr.cuts()) == 2
    out = io.StringIO()
    tr.report(console=Console(file=out, width=100, force_terminal=False))
    text = out.getvalue()
    assert "without a healthy gradient" not in text and "Cuts that stop gradients" not in text, text
    assert f"not trained @ {BASENAME}:{line('w_freeze_backbone')}" in text, text
    doc = trace_json(tr)
    assert doc["ok"] and all(c["verdict"] == "benign" for c in doc["cuts"]) and doc["problems"] == []
    assert tr.why(backbone[0].weight).cause == "frozen_param"  # (why still says what froze it)


def test_a_freeze_of_what_the_optimizer_holds_is_harmful_everywhere():
    tr, backbone = _freeze_backbone_step(True)
    s = tr.summary()
    assert not s.ok and any(p.cause == "frozen_param" for p in s.problems), s.problems
    assert all(e.verdict == "harmful" for e in tr.cuts()) and len(tr.cuts()) == 2
    import io
    from rich.console import Console

    out = io.StringIO()
    tr.report(console=Console(file=out, width=100, force_terminal=False))
    assert "2 without a healthy gradient" in out.getvalue() and "Cuts that stop gradients" in out.getvalue()


def test_a_freeze_loop_that_froze_only_some_parameters_does_not_say_it_froze_every_one():
    """A loop over named_modules() that freezes the first layer only: the freeze is named, and the text does not
    say the line froze every parameter (nor suggest freezing by parameter name)."""
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    with gradscope.trace() as tr:
        for name, m in model.named_modules():
            if name.startswith("0"):
                m.requires_grad_(False)  # L:w_freeze_part
        model(torch.randn(3, 4)).sum().backward()
    exp = tr.why(model[0].weight)
    assert_explains(exp, "frozen_param", "0.weight", "w_freeze_part", "requires_grad")
    assert "every parameter" not in exp.summary and "named_parameters()" not in exp.fix, exp
    assert tr.why(model[1].weight).cause == "ok"


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


# --- rule manual_update_rebind: `w = w - lr * w.grad` under no_grad rebound the name to a new tensor. ----------------

def _manual_update():
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    (w * x).sum().backward()
    with torch.no_grad():
        w = w - 0.1 * w.grad  # manual-update
    return w


def test_manual_update_under_no_grad_is_a_rebind_not_a_missing_requires_grad():
    with gradscope.trace() as tr:
        w = _manual_update()
    exp = tr.why(w)
    assert exp.cause == "no_grad_block", exp
    assert exp.site.lineno == line_of("manual-update")
    assert "rebound" in exp.summary and "`w -= lr * w.grad`" in exp.fix


# --- rule created_without_requires_grad: A tensor created without requires_grad. -------------------------------------

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


# --- rule backward_failed: The backward that should have reached it raised. ------------------------------------------

def test_a_leaf_whose_backward_failed_is_explained_by_the_failure():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="inplace"):
        with gradscope.trace() as tr:
            y = x.sigmoid()
            y.mul_(2)  # R:leaf-inplace
            y.sum().backward()
    exp = tr.why(x)
    assert exp.cause == "inplace_saved_tensor" and exp.site.lineno == line_of("R:leaf-inplace"), exp
    assert exp.summary.startswith("x.grad is None: the backward that should have reached it failed."), exp.summary


# --- rule no_backward: No backward ran inside the trace. -------------------------------------------------------------

def test_no_backward():
    model = nn.Linear(3, 2)
    with gradscope.trace() as tr:
        loss = model(torch.randn(4, 3)).pow(2).mean()
    exp = tr.why(model.weight)
    assert_explains(exp, "no_backward", "weight", None, "backward")
    assert exp.site is None


# --- rule autograd_grad_only: Gradients were computed with torch.autograd.grad / torch.func.grad only. ---------------

def test_autograd_grad_not_backward():
    model = nn.Linear(3, 1)
    with gradscope.trace() as tr:
        loss = model(torch.randn(5, 3)).pow(2).mean()
        grads = torch.autograd.grad(loss, list(model.parameters()))  # L:autograd_grad
    assert model.weight.grad is None and grads[0] is not None
    assert_explains(tr.why(model.weight), "autograd_grad_not_backward", "weight", "autograd_grad", "backward")


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


# --- rule post_accumulate_hook_cleared: A post-accumulate-grad hook cleared .grad after backward filled it. ----------

def test_framework_hook_that_steps_and_clears_grad():
    m = _TwoLayer()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)

    def step_in_backward(p):
        opt.step()
        p.grad = None  # hook-clears

    for p in m.parameters():
        p.register_post_accumulate_grad_hook(step_in_backward)
    with gradscope.trace() as tr:
        m(torch.randn(2, 3)).sum().backward()
    assert m.body.weight.grad is None
    exp = tr.why(m.body.weight)
    assert exp.cause == "hook_modified", exp
    assert exp.site.lineno == line_of("hook-clears")
    assert "`step_in_backward`" in exp.summary


def test_a_hook_that_clears_a_gradient_says_the_norm_that_arrived():
    v = nn.Parameter(torch.ones(3))
    v.register_post_accumulate_grad_hook(lambda p: setattr(p, "grad", None))
    with gradscope.trace() as tr:
        (v * 2.0).sum().backward()
    exp = tr.why(v)
    assert exp.cause == "hook_modified" and "backward delivered a gradient (norm 3.46)" in exp.summary, exp


@pytest.mark.xfail(strict=True, reason="bug: a zero gradient that a post-accumulate hook cleared is explained as "
                   "unused_parameter ('its result was never used afterwards'), not as the hook that cleared it")
def test_a_hook_that_clears_a_zero_gradient_is_named_and_gives_no_norm():
    w = nn.Parameter(torch.ones(3))
    w.register_post_accumulate_grad_hook(lambda p: setattr(p, "grad", None))
    with gradscope.trace() as tr:
        torch.relu(w - 10.0).sum().backward()  # (a zero gradient)
    exp = tr.why(w)
    assert exp.cause == "hook_modified" and "backward delivered a gradient, but" in exp.summary, exp


# --- rule cleared_before_read: Cleared (zero_grad / .grad = None) after backward and read cleared afterwards. --------

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


def test_a_clear_before_the_step_is_not_called_shared_when_another_optimizer_holds_other_parameters():
    """A GAN's discriminator step with zero_grad() between backward and step: only the discriminator's optimizer
    holds D; the generator's optimizer (other parameters) does not make it "in the param_groups of 2 optimizers"."""
    G, D = nn.Linear(4, 4), nn.Linear(4, 1)
    opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        fake = G(torch.randn(8, 4))
        g_loss = -D(fake).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        d_loss = D(fake.detach()).mean() - D(torch.randn(8, 4)).mean()
        d_loss.backward()
        opt_d.zero_grad()  # L:w_d_clear
        opt_d.step()
    exp = tr.why(D.weight)
    assert_explains(exp, "set_to_none_timing", "D.weight", "w_d_clear", "zero_grad")
    assert "param_groups" not in exp.summary and "optimizers" not in exp.summary, exp.summary


def test_only_reads_that_find_a_cleared_grad_are_recorded(tmp_path):
    """The standard loop records no read events; a read after a clear is one event per line, and an
    optimizer step lists the parameters it found cleared. Both survive save/load."""
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        loop_logger(model, opt, 2)
        loop_clip(model, opt, 2)
        x, y = batch()
        F.mse_loss(model(x), y).backward()
        opt.zero_grad()
        logged = [p.grad for p in model.parameters()]  # L:late_read
        opt.step()  # L:late_read_step
    assert logged == [None] * 4
    reads = [e for e in tr.events if e.kind == "grad_read"]
    assert len(reads) == 1 and on_line(reads[0].site, "late_read") and len(reads[0].inputs) == 4
    steps = [e for e in tr.events if e.kind == "optimizer_step"]
    assert len(steps) == 5 and [bool(e.detail.get("found_none")) for e in steps] == [False] * 4 + [True]
    tr.save(tmp_path / "t.json")
    back = gradscope.load(tmp_path / "t.json")
    exp = back.why("0.weight")
    assert exp.cause == "set_to_none_timing" and at("late_read") in exp.summary, exp


def test_zero_grad_between_backward_and_step_names_the_clear_and_the_step():
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        x, y = batch()
        F.mse_loss(model(x), y).backward()
        opt.zero_grad()  # L:bad_zg
        opt.step()  # L:bad_step
    exp = tr.why(model[0].weight)
    assert exp.cause == "set_to_none_timing" and on_line(exp.site, "bad_zg"), exp
    assert at("bad_zg") in exp.summary and at("bad_step") in exp.summary, exp.summary
    assert "opt.step()" in exp.summary and "found None" in exp.summary
    assert [p.cause for p in tr.problems()] == ["set_to_none_timing"]
    with pytest.raises(AssertionError, match="set_to_none_timing"):
        tr.check()


def test_zero_grad_before_clipping_names_the_clipping_line():
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        x, y = batch()
        F.mse_loss(model(x), y).backward()
        opt.zero_grad()  # L:clip_zg
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # L:clip_read
    exp = tr.why(model[2].weight)
    assert exp.cause == "set_to_none_timing" and on_line(exp.site, "clip_zg"), exp
    assert at("clip_read") in exp.summary and "clipping" in exp.summary, exp.summary
    reads = [e for e in tr.events if e.kind == "grad_read"]
    assert reads and all(on_line(e.site, "clip_read") and e.context == "clip" for e in reads)


def test_grad_none_before_a_manual_update_names_both_lines():
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    with gradscope.trace() as tr:
        loss = (w * torch.randn(3)).sum()
        loss.backward()
        w.grad = None  # L:manual_clear
        with torch.no_grad():
            if w.grad is not None:  # L:manual_read
                w -= 0.1 * w.grad
    exp = tr.why(w)
    assert exp.cause == "set_to_none_timing" and on_line(exp.site, "manual_clear"), exp
    assert at("manual_read") in exp.summary and "found None" in exp.summary, exp.summary
    assert ".grad = None" in exp.summary


def test_multi_step_bug_in_the_last_step_only():
    """Steps 1-2 clear after the step (fine); step 3 clears before it: reported, at step 3's read."""
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        loop_tutorial(model, opt, 2)
        x, y = batch()
        F.mse_loss(model(x), y).backward()
        opt.zero_grad()  # L:late_zg
        opt.step()  # L:late_step
    exp = tr.why(model[0].weight)
    assert exp.cause == "set_to_none_timing" and on_line(exp.site, "late_zg"), exp
    assert at("late_step") in exp.summary


# --- rule backward_node_sent_none: The backward graph reached the leaf: the node that sent it nothing (a custom ... ---

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


# --- rule reached_only_by_autograd_grad: Backward ran, but what it fed was differentiated only by ... ----------------

def test_a_loss_differentiated_only_by_autograd_grad_is_named_although_another_backward_ran():
    """A hand-rolled two-stage pipeline: the last stage's loss goes through torch.autograd.grad (to send the
    input gradient upstream), the first stage's output through .backward(): the last stage's weights get
    no .grad, and no cut is to blame."""
    stages = [nn.Linear(4, 6), nn.Linear(6, 2)]
    with gradscope.trace() as tr:
        act = stages[0](torch.randn(3, 4))
        recv = act.detach().requires_grad_(True)
        loss = stages[1](recv).pow(2).mean()
        (g,) = torch.autograd.grad(loss, [recv])  # grad-only
        act.backward(g)
    assert stages[0].weight.grad is not None and stages[1].weight.grad is None
    exp = tr.why(stages[1].weight)
    assert exp.cause == "autograd_grad_not_backward", exp
    assert exp.site.lineno == line_of("grad-only"), exp.site
    assert "`loss`" in exp.summary and "loss.backward()" in exp.fix, exp
    assert tr.why(stages[0].weight).cause == "ok"


# --- rule data_cut: A cut on the data path to a backward root (detach, no_grad, a NumPy round trip ...). -------------

def _with_block():
    w = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    with torch.no_grad():  # region-with
        y = x * w  # op-in-with
    loss = (y * b).sum()
    loss.backward()
    return w


class _Decorated(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 3)
        self.head = nn.Linear(3, 1)

    @torch.no_grad()  # region-decorator
    def features(self, x):
        return self.body(x)  # op-in-decorated

    def forward(self, x):
        return self.head(self.features(x))


def _decorated():
    m = _Decorated()
    m(torch.randn(2, 3)).sum().backward()
    return m.body.weight


def _set_grad_enabled_call():
    w = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    torch.set_grad_enabled(False)  # region-call
    try:
        y = w * 2  # op-after-call
    finally:
        torch.set_grad_enabled(True)
    (y * b).sum().backward()
    return w


def _inference_block():
    w = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    with torch.inference_mode():  # region-inference
        y = (w * 2).clone()  # op-in-inference
    (y.clone() * b).sum().backward()
    return w


@pytest.mark.parametrize("make, cause, opener, op", [
    (_with_block, "no_grad_block", "region-with", "op-in-with"),
    (_decorated, "no_grad_block", "region-decorator", "op-in-decorated"),
    (_set_grad_enabled_call, "no_grad_block", "region-call", "op-after-call"),
    (_inference_block, "inference_mode", "region-inference", "op-in-inference"),
], ids=["with", "decorator", "set_grad_enabled", "inference_mode"])
def test_region_cause_is_reported_at_the_region_opener(make, cause, opener, op):
    with gradscope.trace() as tr:
        out = make()
    exp = tr.why(out)
    assert exp.cause == cause, exp
    assert exp.site.filename == THIS and exp.site.lineno == line_of(opener), exp
    # the op that ran inside the region stays visible as evidence: in the site's stack and in the text
    assert line_of(op) in stack_lines(exp.site), exp.site.stack
    assert f":{line_of(op)}" in exp.summary and f":{line_of(opener)}" in exp.summary, exp.summary


def _multi_line_argmax():
    w = torch.randn(4, 3, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    pred = torch.randn(4, 3) * w
    loss = torch.nn.functional.mse_loss(  # statement-start
        b,
        pred.argmax(
            dim=1).float(),  # argmax-line
    )
    loss.backward()
    return w


def test_multi_line_statement_is_reported_at_its_first_line():
    with gradscope.trace() as tr:
        w = _multi_line_argmax()
    exp = tr.why(w)
    assert exp.cause == "nondifferentiable_op"
    assert exp.site.lineno == line_of("statement-start"), exp.site
    assert exp.site.code.startswith("loss = torch.nn.functional.mse_loss(") and "argmax(dim=1).float()" in exp.site.code
    assert "#" not in exp.site.code  # comments of the inner lines are not code
    assert f":{line_of('statement-start')} " in exp.summary
    assert line_of("argmax-line") - 1 in stack_lines(exp.site)  # the line the argmax ran on stays in the stack


def _losses_rewrapped():
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    loss_cls = (a * 2).sum()
    loss_box = (b * 3).sum()
    both = torch.Tensor([loss_cls, loss_box])  # rewrap
    (both.sum() * torch.ones(1, requires_grad=True)).sum().backward()
    return a


def test_rewrap_of_a_list_of_tensors_gets_a_stack_fix_from_the_users_list():
    with warnings.catch_warnings(), gradscope.trace() as tr:
        warnings.simplefilter("ignore")  # (torch warns about converting a grad-requiring tensor to a number)
        a = _losses_rewrapped()
    exp = tr.why(a)
    assert exp.cause == "tensor_rewrap"
    assert exp.site.lineno == line_of("rewrap")
    assert "`torch.stack([loss_cls, loss_box])`" in exp.fix, exp.fix


def _detach_then_log():
    w = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    loss = ((w * x).sum() - 1).pow(2).detach()  # detached-loss
    total = loss + (b * x).sum()
    logged = loss.item()  # logged
    total.backward()
    return w, logged


def test_detach_then_logging_blames_the_detach():
    with gradscope.trace() as tr:
        w, _ = _detach_then_log()
    exp = tr.why(w)
    assert exp.cause == "detach", exp
    assert exp.site.lineno == line_of("detached-loss")


def _two_cuts():
    p = torch.randn(3, requires_grad=True)
    x = torch.randn(3)
    gate = (x > p).float()  # cut-compare
    scaled = p.detach() * 2  # cut-detach
    loss = (gate * scaled * torch.ones(3, requires_grad=True)).sum()
    loss.backward()
    return p


def test_every_cut_on_the_way_is_named_main_one_first():
    with gradscope.trace() as tr:
        p = _two_cuts()
    exp = tr.why(p)
    assert exp.cause == "nondifferentiable_op"
    assert exp.site.lineno == line_of("cut-compare")
    assert [s.lineno for s in exp.extra_sites] == [line_of("cut-detach")]
    assert f":{line_of('cut-detach')}" in exp.summary and "p.detach()" in exp.summary
    assert exp.summary.startswith("p.grad is None: p went through the comparison `>`"), exp.summary


def test_a_single_cut_names_no_other():
    with gradscope.trace() as tr:
        w = _detach_then_log()[0]
    assert tr.why(w).extra_sites == []


class _Mixer(nn.Module):
    """Per-channel scales kept as one-element parameters and packed into one tensor by the legacy
    constructor (its values go through Python floats: no recorded lineage links the new tensor back)."""

    def __init__(self, legacy):
        super().__init__()
        self.legacy = legacy
        self.scales = nn.ParameterList([nn.Parameter(torch.tensor([0.5])) for _ in range(3)])
        self.proj = nn.Linear(3, 3)

    def forward(self, x):
        if self.legacy:
            w = torch.FloatTensor([self.scales[0], self.scales[1], self.scales[2]])  # MIXER-LEGACY
        else:
            w = torch.Tensor([s for s in self.scales])  # MIXER-REWRAP
        return self.proj(x * w.view(1, -1))


@pytest.mark.parametrize("legacy", [True, False])
def test_a_legacy_constructor_of_parameters_is_a_rewrap_not_an_item_call(legacy):
    """The cause is the mechanism the user wrote: torch.Tensor([p, q]) / torch.FloatTensor([...]) of tensors is a re-wrap (torch
    calls float() on each internally; the user wrote no .item()), with a torch.stack fix, also when no
    recorded path links the new tensor back to the parameters."""
    m = _Mixer(legacy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with gradscope.trace() as tr:
            m(torch.randn(2, 3)).pow(2).mean().backward()
    assert m.scales[0].grad is None and m.proj.weight.grad is not None
    exp = tr.why(m.scales[0])
    assert exp.cause == "tensor_rewrap", (exp.cause, exp.summary)
    assert exp.site.lineno == line_of("MIXER-LEGACY" if legacy else "MIXER-REWRAP")
    assert "torch.stack(" in exp.fix and ".item()" not in exp.fix, exp.fix


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


def test_the_path_of_a_cut_lists_the_ops_from_the_parameter_to_the_loss_not_the_module_calls():
    """The explanation's path: the target, each op on the way (the cut one marked, not flowing), the root; the
    module calls around them (fc1, fc2, the model) are not steps of their own."""
    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 2)

        def forward(self, x):
            h = torch.relu(self.fc1(x)).detach()  # L:path_detach
            return self.fc2(h)

    m = MLP()
    with gradscope.trace() as tr:
        m(torch.randn(3, 4)).sum().backward()
    exp = tr.why(m.fc1.weight)
    assert exp.cause == "detach", exp
    steps = [(s.label, s.op, s.flows) for s in exp.path]
    assert steps == [("fc1.weight", None, True), ("linear", "torch.nn.functional.linear", True),
                     ("relu", "torch.relu", True), ("detach", "torch.Tensor.detach", False),
                     ("linear", "torch.nn.functional.linear", True), ("sum", "torch.Tensor.sum", True),
                     ("m(torch.randn(3, 4)).sum()", None, True)], steps
    cut = exp.path[3]
    assert cut.note == "cut: detach()" and site_hits(cut.site, "path_detach"), cut


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


def test_a_numpy_round_trip_says_where_the_value_came_back():
    """The value that left autograd through NumPy came back through torch.from_numpy: the summary says so, with the
    line it was first used on and how the two were linked."""
    lin = nn.Linear(4, 4)
    bias = nn.Parameter(torch.zeros(4))
    with gradscope.trace() as tr:
        h = lin(torch.randn(8, 4))
        arr = np.tanh(h.detach().numpy())
        loss = (torch.from_numpy(arr) + bias).pow(2).mean()  # L:numpy_back
        loss.backward()
    exp = tr.why(lin.weight)
    assert exp.cause == "numpy_roundtrip", exp
    assert f"came back through from_numpy (first used at {at('numpy_back')}; linked by matching shape)" in exp.summary, \
        exp.summary


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


def test_variable_rewrap_is_reported_at_its_own_line():
    from torch.autograd import Variable

    enc, head = nn.Linear(4, 4), nn.Linear(4, 2)
    with gradscope.trace() as tr:
        feats = enc(torch.randn(8, 4))
        feats = Variable(feats, requires_grad=True)  # L:w_variable
        F.cross_entropy(head(feats), torch.randint(0, 2, (8,))).backward()
    exp = tr.why(enc.weight)
    assert_explains(exp, "tensor_rewrap", "feats was copied", "w_variable", "use `feats` itself")


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


def test_a_distribution_sample_is_named_as_the_library_call_that_ran_without_gradient():
    """Normal(mu, 1).sample() runs under no_grad inside torch.distributions: the cut is that call (not the
    normal() op inside it), with the rsample() fix."""
    mu = nn.Parameter(torch.zeros(3))
    other = nn.Parameter(torch.ones(3))
    with gradscope.trace() as tr:
        z = torch.distributions.Normal(mu, 1.0).sample()  # L:w_sample
        (z * other).sum().backward()
    exp = tr.why(mu)
    assert_explains(exp, "nondifferentiable_op", "Normal.sample()", "w_sample", ".rsample()")
    assert "which runs without gradient" in exp.summary, exp.summary


def test_a_detach_followed_by_logging_the_loss_is_the_detach_not_the_logging():
    enc, head = nn.Linear(4, 4), nn.Linear(4, 2)
    with gradscope.trace() as tr:
        feats = enc(torch.randn(6, 4)).detach()  # L:w_det_log
        loss = F.cross_entropy(head(feats), torch.randint(0, 2, (6,)))
        loss.backward()
        logged = loss.item()
    exp = tr.why(enc.weight)
    assert_explains(exp, "detach", "was detached", "w_det_log", "detach")


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


class _Q(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc(x)


def test_a_model_the_step_never_called_is_not_trained_and_named_by_its_variable():
    """A target network the step does not use at all (synced later): not a problem, and its parameters are called
    by the variable that holds the model (``target.fc.weight``), not by a trace-local number."""
    online, target = _Q(), _Q()
    opt = torch.optim.SGD(online.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        opt.zero_grad()
        online(torch.randn(2, 3)).sum().backward()
        opt.step()
    exp = tr.why(target.fc.weight)
    assert exp.cause == "not_trained", exp
    assert exp.summary.startswith("target.fc.weight.grad is None"), exp.summary
    assert "the step never used it" in exp.summary and "never used by any torch call" in exp.detail, exp
    assert "module `target.fc` was never called" in exp.detail, exp.detail
    tr.check()


def test_region_opener_is_the_site_and_the_op_stays_in_its_stack():
    diag, tid = load("region_with")
    exp = diag.why(tid)
    assert exp.cause == "no_grad_block"
    assert exp.site.lineno == case_line("with-line")
    assert case_line("op-in-with") in [f.lineno for f in exp.site.stack]


def test_multi_line_statement_at_its_first_line():
    diag, tid = load("multi_line")
    exp = diag.why(tid)
    assert exp.cause == "nondifferentiable_op"
    assert exp.site.lineno == case_line("statement-start")
    assert exp.site.code == "loss = torch.nn.functional.mse_loss(b, pred.argmax(dim=1).float(),)"


def test_every_cut_is_named():
    diag, tid = load("two_cuts")
    exp = diag.why(tid)
    assert (exp.site.lineno, [s.lineno for s in exp.extra_sites]) == (case_line("cut-compare"), [case_line("cut-detach")])


@pytest.mark.parametrize("legacy", [False, pytest.param(True, marks=pytest.mark.xfail(strict=True, reason=(
    "bug: the deprecated torch.nn.utils.weight_norm is explained as tensor_rewrap at typing_extensions.py (its "
    "deprecation wrapper's line), not as param_recreated at the user's line")))], ids=["parametrizations", "nn.utils"])
def test_a_weight_norm_applied_after_the_optimizer_is_named_by_its_function(legacy):
    """weight_norm (torch.nn.utils.parametrizations', or the older torch.nn.utils one) applied to a layer after its
    optimizer was built: the explanation names the function that moved the weight, at the user's line."""
    from torch.nn.utils import parametrizations

    wn = torch.nn.utils.weight_norm if legacy else parametrizations.weight_norm
    disc = nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1))
    opt = torch.optim.SGD(disc.parameters(), lr=0.1)
    old = disc[0].weight
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the legacy one is deprecated)
        with gradscope.trace() as tr:
            disc[0] = wn(disc[0])  # L:w_param_fn
            disc(torch.randn(5, 3)).mean().backward()
            opt.step()
    exp = tr.why(old)
    assert_explains(exp, "param_recreated", "went through weight_norm()", "w_param_fn", "before creating the optimizer")


@pytest.mark.xfail(strict=True, reason="bug: verdict.bad_read counts any later backward whose graph reaches the "
                   "leaf as a refill (`tid in leaf_grads`), also one that left its .grad None "
                   "(backward(inputs=<other params>)): the clear then reads as 'cleared after use', cause ok")
def test_a_clear_before_the_step_is_the_cause_also_when_a_backward_restricted_to_other_params_ran_between():
    """A GAN step: G's backward, G's zero_grad() too early, D's backward restricted to D's parameters
    (`inputs=`), D's step, then G's step, which finds G's gradients cleared. D's backward reaches G's leaves in
    the graph but fills nothing there, so it is no refill: the clear is the cause."""
    G, D = nn.Linear(4, 4), nn.Linear(4, 1)
    opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        z, real = torch.randn(8, 4), torch.randn(8, 4)
        g_loss = -D(G(z)).mean()
        g_loss.backward()
        opt_g.zero_grad()  # L:g_clear_early
        d_loss = D(G(z)).mean() - D(real).mean()
        d_loss.backward(inputs=list(D.parameters()))
        opt_d.step()
        opt_g.step()
    assert G.weight.grad is None
    exp = tr.why(G.weight)
    assert exp.cause == "set_to_none_timing" and on_line(exp.site, "g_clear_early"), exp


def test_a_non_leaf_made_before_the_trace_is_still_a_non_leaf():
    """`w = torch.randn(..., requires_grad=True) * 0.01` before the traced block (the classic scaled init): the
    trace never saw what computed w, yet w is not a leaf, and that is the answer (no site to name)."""
    w = torch.randn(3, 2, requires_grad=True) * 0.01
    x = torch.randn(4, 3)
    with gradscope.trace() as tr:
        (x @ w).pow(2).mean().backward()
    exp = tr.why(w)
    assert exp.cause == "non_leaf_no_retain_grad" and "`w` is not a leaf" in exp.summary, exp
    assert "w.retain_grad()" in exp.fix, exp


class _PairScale(torch.autograd.Function):
    """A custom Function that takes its tensors in a tuple: apply() cannot see them."""

    @staticmethod
    def forward(ctx, pair, k):
        a, b = pair
        return a * k + b

    @staticmethod
    def backward(ctx, g):
        return None, None


def test_tensors_passed_to_a_custom_function_inside_a_tuple_are_the_apply_line():
    lin = nn.Linear(3, 3)
    w = nn.Parameter(torch.ones(3))
    with gradscope.trace() as tr:
        h = lin(torch.randn(2, 3))
        y = _PairScale.apply((h, w), 2.0)  # L:w_nested_apply
        assert not y.requires_grad  # (what the user sees)
        (y.sum() * torch.ones((), requires_grad=True)).backward()
    exp = tr.why(lin.weight)
    assert_explains(exp, "custom_function", "inside a tuple, list or dict argument", "w_nested_apply",
                    "pass each tensor as its own argument")
    assert "_PairScale" in exp.summary, exp.summary


def test_the_backward_that_fails_after_a_custom_function_got_its_tensors_in_a_tuple_names_the_apply_line():
    lin = nn.Linear(3, 3)
    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            h = lin(torch.randn(2, 3))
            y = _PairScale.apply([h, h], 3.0)  # L:w_nested_apply_fail
            y.sum().backward()
    f = tr.failure
    assert_explains(f, "custom_function", "inside a tuple, list or dict argument", "w_nested_apply_fail",
                    "pass each tensor as its own argument")


@pytest.mark.parametrize("back", ["as_tensor", "tensor", "from_numpy", "derived"])
def test_values_that_left_through_numpy_and_came_back_by_any_factory_are_the_harmful_cut(back):
    import numpy as np

    lin = nn.Linear(3, 1)
    w = torch.ones(1, requires_grad=True)
    with gradscope.trace() as tr:
        v = lin(torch.randn(4, 3)).squeeze(-1)
        v_np = v.detach().numpy()  # L:w_np_left
        t = {"as_tensor": lambda: torch.as_tensor(v_np), "tensor": lambda: torch.tensor(v_np),
             "from_numpy": lambda: torch.from_numpy(v_np),
             "derived": lambda: torch.as_tensor(np.clip(v_np, -1, 1))}[back]()
        ((t * w) ** 2).mean().backward()
    exp = tr.why(lin.weight)
    assert exp.cause == "numpy_roundtrip" and site_hits(exp.site, "w_np_left"), exp
    assert [c.verdict for c in tr.cuts()] == ["harmful", "harmful"], [(c.op, c.verdict) for c in tr.cuts()]


class _Q2(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, s):
        return self.net(s)


def test_a_target_network_filled_by_load_state_dict_is_not_where_the_online_network_lost_its_gradient():
    # the target's no_grad forward is its own (a separate model by design); the online network's loss was rebuilt
    # from Python floats
    torch.manual_seed(0)
    with gradscope.trace() as tr:
        q, q_target = _Q2(), _Q2()
        q_target.load_state_dict(q.state_dict())
        opt = torch.optim.SGD(q.parameters(), lr=0.1)
        s, s2, r = torch.randn(6, 4), torch.randn(6, 4), torch.randn(6)
        q_sa = q(s).max(1).values
        with torch.no_grad():
            y = r + 0.9 * q_target(s2).max(1).values
        tds = [q_sa[i].item() - y[i].item() for i in range(6)]  # L:w_td_items
        loss = torch.tensor(sum(t * t for t in tds) / 6, requires_grad=True)
        opt.zero_grad()
        loss.backward()
        opt.step()
    exp = tr.why(q.net[0].weight)
    assert exp.cause == "item_roundtrip" and site_hits(exp.site, "w_td_items"), exp
    assert "q_target" not in exp.summary, exp.summary
    assert [s.label for s in exp.path][:4] == ["q.net.0.weight", "linear", "relu", "linear"], exp.path


def test_a_mask_shaped_like_the_scores_by_view_as_names_the_topk_that_cut_them():
    """Learned-score pruning: the mask is made from topk's indices and given the scores' shape by view_as; view_as
    reads only that shape, so the cut is the topk, not the view_as."""
    scores = nn.Parameter(torch.randn(4, 3))
    w = nn.Parameter(torch.randn(4, 3))
    with gradscope.trace() as tr:
        idx = scores.abs().flatten().topk(6).indices  # L:n_topk_mask
        mask = torch.zeros(12)
        mask[idx] = 1.0
        (w * mask.view_as(scores)).sum().backward()
    M.assert_explains(tr.why(scores), "nondifferentiable_op", "scores", "n_topk_mask", "straight-through")


def test_a_detached_loss_target_beside_a_detached_prediction_input_names_the_prediction_side():
    """Self-distillation: the loss compares the predictor's output with the encoder's own detached features (the
    idiom), and the predictor was also fed detached features (the bug). The cut to fix is the predictor's input;
    the target's detach is not listed as one to fix."""
    enc, pred_head = nn.Linear(4, 3), nn.Linear(3, 3)
    with gradscope.trace() as tr:
        h = enc(torch.randn(5, 4))
        target = h.detach()
        p = pred_head(h.detach())  # L:n_pred_input_detached
        F.mse_loss(p, target).backward()
    exp = tr.why(enc.weight)
    M.assert_explains(exp, "detach", "enc.weight", "n_pred_input_detached", "detach")
    assert all(s.lineno != M.line("n_pred_input_detached") - 1 for s in exp.extra_sites), exp.extra_sites


def test_top_k_pooling_with_detached_weights_names_the_detach_not_the_indices():
    """Top-k pooling: the scorer picks k rows by topk's indices (a routing that has no gradient by design) and
    weights them by a softmax of the scores, detached by mistake. The detach is the cut to undo."""
    scorer, feat = nn.Linear(4, 1), nn.Linear(4, 4)
    with gradscope.trace() as tr:
        x = torch.randn(6, 4)
        vals, idx = scorer(x).squeeze(1).topk(3)
        w = torch.softmax(vals, 0).detach()  # L:n_topk_weights_detached
        pooled = (w[:, None] * feat(x)[idx]).sum(0)
        pooled.pow(2).sum().backward()
    M.assert_explains(tr.why(scorer.weight), "detach", "scorer.weight", "n_topk_weights_detached", "detach")


def _detached_then_frozen_after_the_step():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        h = net[0](torch.randn(2, 3)).detach()  # L:stage_detach
        net[1](h).sum().backward()
        opt.step()
    for p in net[0].parameters():
        p.requires_grad_(False)  # frozen after the step: a live fact the summary reads
    return tr, net


def test_cut_verdicts_do_not_depend_on_which_query_came_first():
    """cuts() reads the same live facts as the summary: asked first or after it, the verdicts agree."""
    first, net1 = _detached_then_frozen_after_the_step()  # (the models stay alive: their live facts are read)
    cuts_first = [(e.cut, e.verdict) for e in first.cuts()]
    first.summary()
    second, net2 = _detached_then_frozen_after_the_step()
    second.summary()
    assert cuts_first == [(e.cut, e.verdict) for e in second.cuts()] == [(e.cut, e.verdict) for e in first.cuts()]
    assert [e.cut for e in first.cuts()] == ["detach"]


def test_a_parameter_frozen_after_the_step_is_explained_by_the_cut_in_the_step():
    """The trace explains the step: a freeze after it (read live) is not 'frozen before the trace started'."""
    tr, net = _detached_then_frozen_after_the_step()
    exp = tr.why(net[0].weight)
    assert exp.cause == "detach" and exp.site.lineno == line("stage_detach")
    assert [p.cause for p in tr.summary().problems] == ["detach"]


def _module_freeze_step(enc, head, opt, x):
    opt.zero_grad()
    enc.requires_grad_(False)  # L:module_freeze
    head(enc(x)).sum().backward()
    opt.step()


def test_a_module_frozen_in_the_step_and_unfrozen_after_it_is_explained_as_the_freeze():
    """`enc.requires_grad_(False)` in the step (torch's Module method sets each parameter) and the unfreeze after the
    trace, read live: the freeze at the step's line, never 'its result was never used'."""
    torch.manual_seed(0)
    enc, head = nn.Linear(3, 3), nn.Linear(3, 1)
    opt = torch.optim.SGD([*enc.parameters(), *head.parameters()], lr=0.1)
    x = torch.randn(4, 3)
    with gradscope.trace() as tr:
        _module_freeze_step(enc, head, opt, x)
    enc.requires_grad_(True)  # (after the trace: a live fact)
    exp = tr.why(enc.weight)
    assert exp.cause == "frozen_param" and exp.site.lineno == line("module_freeze"), exp
    # (frozen in the step and unfrozen after it: a phase freeze, the step's intent, so no problem of the step)
    assert tr.summary().problems == []


class _ScriptedCut(nn.Module):
    def forward(self, x):
        return x.detach() * 2


@pytest.mark.xfail(strict=True, reason="gap: a TorchScript module's call is not recorded as a use of its input (its ops "
                   "run in C++), so the layer before it is 'used, but its result was never used' instead of the call")
def test_a_scripted_module_that_detaches_is_named_at_its_call():
    net, cut = nn.Linear(3, 3), torch.jit.script(_ScriptedCut())
    with gradscope.trace() as tr:
        h = net(torch.randn(2, 3))
        out = cut(h)  # L:scripted_cut
        (out + net.weight.sum() * 0).sum().backward()
    exp = tr.why(net.bias)
    assert exp.cause != "unused_parameter" and exp.site is not None and exp.site.lineno == line("scripted_cut"), exp


def test_a_leaf_made_in_the_step_with_requires_grad_is_a_target_when_no_optimizer_is_known():
    """`x = torch.ones(2, requires_grad=True)` made inside the traced block (a factory call the trace records), then
    detached: `x.grad is None` is the problem (as for a leaf made before the block), not "OK" above a ✗ row."""
    with gradscope.trace() as tr:
        x = torch.ones(2, requires_grad=True)
        y = (x * 2).detach()  # L:leaf_made_in_step
        w = torch.ones(2, requires_grad=True)
        (y * w).sum().backward()
    s = tr.summary()
    assert not s.ok and [p.cause for p in s.problems] == ["detach"], s.verdict
    assert s.problems[0].site.lineno == line("leaf_made_in_step")
    assert {r.name: r.status for r in s.params} == {"x": "none", "w": "received"}
