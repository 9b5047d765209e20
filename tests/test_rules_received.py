"""The rules for a gradient that arrived (status ``received``, gradscope.diagnosis.rules_received), each on a
real torch run: the gradient flows (``ok``), it was cleared after its consumers read it (the tutorial loops with
clipping or a grad-norm logger in between: no problem, the clear and the consumer are named), a write after the
backward that corrupts nothing, and the received-but-not-trained cases (no optimizer holds it, unfrozen only after
the optimizer was built).

Lines are found from marker comments in this file (``# L:<tag>``), never hard-coded (tests/_rules_helpers.py).
"""
from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gradscope
from gradscope.testing import assert_gradients_flow

from _rules_helpers import Markers, mlp, batch

M = Markers(__file__)
BASENAME = M.basename
line = M.line
at = M.at
site_hits = M.site_hits

pytestmark = pytest.mark.filterwarnings("ignore")


# --- rule cleared_after_use: Backward filled it, its consumers read it, then it was cleared: as it should be. --------

def loop_tutorial(model, opt, steps):
    for _ in range(steps):
        x, y = batch()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()  # L:zg_tutorial


def loop_clip(model, opt, steps):
    for _ in range(steps):
        x, y = batch()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()
        opt.zero_grad()  # L:zg_clip


def loop_logger(model, opt, steps):
    norms = []
    for _ in range(steps):
        x, y = batch()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        norms.append(sum(float(p.grad.norm()) for p in model.parameters() if p.grad is not None))
        opt.step()
        opt.zero_grad(set_to_none=True)  # L:zg_logger
    assert all(n > 0 for n in norms)


def loop_zeros(model, opt, steps):
    for _ in range(steps):
        x, y = batch()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)  # L:zg_zeros


def loop_module_zero_grad(model, opt, steps):
    for _ in range(steps):
        model.zero_grad()  # (a second clear: Module.zero_grad reads every .grad, finds None)
        x, y = batch()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()  # L:zg_module


CORRECT_LOOPS = [(loop_tutorial, "zg_tutorial"), (loop_clip, "zg_clip"), (loop_logger, "zg_logger"),
                 (loop_zeros, "zg_zeros"), (loop_module_zero_grad, "zg_module")]


@pytest.mark.parametrize("steps", [1, 3])
@pytest.mark.parametrize("loop,tag", CORRECT_LOOPS, ids=[f.__name__ for f, _ in CORRECT_LOOPS])
def test_zero_grad_after_the_consumers_is_no_problem(loop, tag, steps):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        loop(model, opt, steps)
    assert all(p.grad is None or not p.grad.any() for p in model.parameters())  # cleared at the end, as written
    assert tr.problems() == [], [str(p) for p in tr.problems()]
    tr.check()
    exp = tr.why(model[0].weight)
    assert exp.cause == "ok" and exp.status == "received", exp
    assert at(tag) in exp.summary and "as it should be" in exp.summary, exp.summary  # names the clear
    assert "step()" in exp.summary  # and the consumer that read the gradient before it
    s = tr.summary()
    assert s.ok and all(p.status == "received" for p in s.params), [(p.name, p.status) for p in s.params]


@pytest.mark.parametrize("loop", [f for f, _ in CORRECT_LOOPS], ids=[f.__name__ for f, _ in CORRECT_LOOPS])
def test_assert_gradients_flow_accepts_the_tutorial_loop(loop):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    tr = assert_gradients_flow(model, lambda: loop(model, opt, 2))
    assert isinstance(tr, gradscope.Trace)


# --- rule unfrozen_after_optimizer_built: It gets a gradient, but it was unfrozen only after the optimizer's ... -----

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


# --- rule not_in_any_optimizer: It gets a gradient, but no optimizer holds it (not registered). ----------------------

def test_a_free_parameter_the_optimizer_was_not_given_gets_gradients_but_no_optimizer_holds_it():
    """A learnable temperature made next to the model and used in the loss, but the optimizer was built from the
    model's parameters only: the gradient arrives (ok), with the note that nothing trains it."""
    m = nn.Linear(4, 3)
    temperature = nn.Parameter(torch.ones(()))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        opt.zero_grad()
        F.cross_entropy(m(torch.randn(5, 4)) / temperature, torch.tensor([0, 1, 2, 0, 1])).backward()
        opt.step()
    exp = tr.why(temperature)
    assert exp.cause == "ok" and "no optimizer in the trace holds" in exp.summary, exp
    assert "no optimizer" not in tr.why(m.weight).summary


def test_a_layer_kept_in_a_plain_list_gets_gradients_but_is_not_registered():
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
    assert exp.cause == "unregistered_container" and "nn.ModuleList" in exp.fix, exp
    assert "no optimizer" not in tr.why(m.inp.weight).summary


def test_two_optimizers_each_holding_their_own_model_train_both():
    """A GAN: the generator's and the discriminator's optimizers hold different parameters; each is trained by
    one of them (no "no optimizer holds it"), and the usual step has no problem."""
    G, D = nn.Linear(4, 4), nn.Linear(4, 1)
    opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        for _ in range(2):
            fake = G(torch.randn(8, 4))
            d_loss = D(fake.detach()).mean() - D(torch.randn(8, 4)).mean()
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
            g_loss = -D(fake).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
    assert tr.problems() == [], [str(p) for p in tr.problems()]
    for p in (G.weight, G.bias, D.weight, D.bias):
        exp = tr.why(p)
        assert exp.cause == "ok" and exp.status == "received", exp
        assert "no optimizer" not in exp.summary and "add_param_group" not in exp.fix, exp


# --- rule gradient_flows: The gradient arrived and is non-zero. ------------------------------------------------------

def test_write_through_data_after_backward_is_not_a_corruption():
    w = torch.randn(3, requires_grad=True)
    with gradscope.trace() as tr:
        s = torch.sigmoid(w * 2)
        (s * s).sum().backward()
        s.data.mul_(0)  # after backward: the graph is spent
    exp = tr.why(w)
    assert exp.cause == "ok", exp


@pytest.mark.parametrize("op", ["transpose", "view", "add", "to"])
def test_a_write_into_the_input_of_an_op_that_saves_nothing_is_not_a_corruption(op):
    """transpose/view/add/to need none of their inputs' values in backward: zeroing their input through .data after
    the forward corrupts no gradient."""
    w = nn.Parameter(torch.ones(2, 3))
    with gradscope.trace() as tr:
        a = w * 2
        b = {"transpose": lambda: a.transpose(0, 1), "view": lambda: a.view(3, 2), "add": lambda: a + 1.0,
             "to": lambda: a.to(torch.float64)}[op]()
        a.data.zero_()
        b.sum().backward()
    exp = tr.why(w)
    assert exp.cause == "ok", exp


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


# --- rule plain_container: a layer kept in a plain list or dict of its model, that no optimizer holds ----------------

class _Ensemble(nn.Module):
    """A trunk and per-task heads; the heads sit in a plain dict built in a loop."""

    def __init__(self, tasks):
        super().__init__()
        self.trunk = nn.Linear(6, 8)
        self.heads = {}  # L:pc_dict
        for t in tasks:
            self.heads[t] = nn.Linear(8, 1)

    def forward(self, x, task):
        return self.heads[task](torch.tanh(self.trunk(x)))


class _Blocks(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.stem = nn.Linear(5, 5)
        self.blocks = [nn.Linear(5, 5) for _ in range(n)]  # L:pc_list

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = x + torch.relu(b(x))
        return x


def test_a_head_in_a_plain_dict_that_the_optimizer_misses_names_the_dict_line():
    model = _Ensemble(["price", "volume"])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with gradscope.trace() as tr:
        opt.zero_grad()
        loss = model(torch.randn(4, 6), "price").pow(2).mean()
        loss.backward()
        opt.step()
    exp = tr.why(model.heads["price"].weight)
    assert exp.cause == "unregistered_container" and site_hits(exp.site, "pc_dict"), exp
    assert "nn.ModuleDict" in exp.fix and "`model.heads` is a plain Python dict" in exp.summary, exp
    # the registered trunk trains: no problem for it
    assert tr.why(model.trunk.weight).cause == "ok"


def test_blocks_in_a_plain_list_without_an_optimizer_are_named_at_the_list():
    """A hand-written update over parameters(): the blocks get gradients, but parameters() never gives them."""
    model = _Blocks(2)
    with gradscope.trace() as tr:
        model(torch.randn(3, 5)).sum().backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.01 * p.grad
    exp = tr.why(model.blocks[1].bias)
    assert exp.cause == "unregistered_container" and site_hits(exp.site, "pc_list"), exp
    assert "nn.ModuleList" in exp.fix, exp
    assert tr.why(model.stem.weight).cause == "ok"


def test_layers_in_a_module_list_are_not_a_plain_container():
    class Fine(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
            self.names = ["a", "b"]  # a plain list of strings: nothing to say

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    model = Fine()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        model(torch.randn(2, 4)).sum().backward()
        opt.step()
    assert tr.why(model.blocks[1].weight).cause == "ok"
    assert tr.data.meta["plain_containers"] == []


# --- cleared_after_use: the consumers named are the ones that read the gradient before the clear ---------------------
def loop_manual_sgd_clip(model, opt, steps):
    """No optimizer: clipping, a hand-written update through .data, then Module.zero_grad()."""
    for _ in range(steps):
        x, y = batch()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # L:rd_clip
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-0.1)
        model.zero_grad()  # L:rd_zero


def loop_clip_then_step(model, opt, steps):
    for _ in range(steps):
        x, y = batch()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)  # L:rd_clip2
        opt.step()  # L:rd_step
        opt.zero_grad()  # L:rd_zero2


@pytest.mark.parametrize("loop, readers, clear", [
    (loop_manual_sgd_clip, ["clipping at {rd_clip}"], "rd_zero"),
    (loop_clip_then_step, ["clipping at {rd_clip2}", "opt.step() at {rd_step}"], "rd_zero2")],
    ids=["manual_sgd_clip", "clip_then_step"])
def test_a_clear_after_the_consumers_names_the_clipping_and_the_step_that_read_the_gradient(loop, readers, clear):
    """The correct loop's explanation names what read the gradient before it was cleared, each at its line: the
    clipping (in a hand-written loop with no optimizer, the only reader), and the optimizer's step when there is one."""
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        loop(model, opt, 2)
    assert tr.problems() == [], [str(p) for p in tr.problems()]
    exp = tr.why(model[0].weight)
    assert exp.cause == "ok" and at(clear) in exp.summary and "as it should be" in exp.summary, exp.summary
    tags = {t: at(t) for t in ("rd_clip", "rd_clip2", "rd_step")}
    named = [r.format(**tags) for r in readers]
    assert f"{' and '.join(named)} read it" in exp.summary, exp.summary


def test_a_gradient_from_backward_with_create_graph_is_ok_and_names_that_backward():
    """A hypergradient step that calls loss.backward(create_graph=True) to differentiate the gradients again: the
    gradient is right (ok), and the answer names that backward (torch warns of the reference cycle)."""
    net = nn.Linear(3, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with gradscope.trace() as tr:
            loss = net(torch.randn(4, 3)).pow(2).mean()
            loss.backward(create_graph=True)  # L:r_create_graph
            net.weight.grad.pow(2).sum().backward()
    exp = tr.why(net.weight)
    M.assert_explains(exp, "ok", "create_graph=True", "r_create_graph", "torch.autograd.grad")
    assert tr.problems() == []
    tr.check()  # (not a problem: check() passes)


def test_a_legacy_backward_hook_on_a_block_is_ok_and_names_the_hook_only_for_that_block():
    """register_backward_hook (not the full variant) on one block of a model: its parameters' gradients are ok,
    with the hook named; a parameter outside the block is plain ok."""
    block, head = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 4)), nn.Linear(4, 1)
    seen = []
    block.register_backward_hook(lambda m, gi, go: seen.append(go))  # L:r_legacy_hook
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with gradscope.trace() as tr:
            head(block(torch.randn(2, 3))).sum().backward()
    M.assert_explains(tr.why(block[0].weight), "ok", "register_backward_hook", "r_legacy_hook",
                      "register_full_backward_hook")
    other = tr.why(head.weight)
    assert other.cause == "ok" and "register_backward_hook" not in other.summary, other
