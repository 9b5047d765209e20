"""One verdict everywhere: ``why``, ``cuts(harmful=...)``, ``check()``, the report, the diagram, the CLI's JSON
and ``gradscope demo`` agree on which cuts starved which parameters (gradscope.verdict and its users).

Real torch programs. Lines are found from ``# L:<tag>`` markers in this file, never hard-coded
(tests/_rules_helpers.py).

* One verdict: a program with one harmful cut (detach, no_grad, a NumPy or item() round trip) has exactly that
  problem on every surface; logging (``loss.item()``, a detached copy) and a DQN target are benign cuts.
* ``tr.cuts()``: logging, a GAN's detached fake in the discriminator step and a target network under no_grad are
  benign; a detach that starves the encoder is harmful.
* Not starved: parameters no optimizer holds that ran only under no_grad (a DQN target network, a reloaded
  best model evaluated at the end), and parameters of a submodule replaced in ``__init__``.

(The timing of gradient clears is a rule each: a clear after the consumers in tests/test_rules_received.py, a clear
before a read in tests/test_rules_none.py, zeros before the step in tests/test_rules_zero.py.)
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from rich.console import Console

import gradscope
from gradscope.cli import trace_json

from _rules_helpers import Markers, _same, batch

M = Markers(__file__)
THIS = M.this
line = M.line
on_line = M.on_line

ROOT = Path(THIS).parent.parent

pytestmark = pytest.mark.filterwarnings("ignore")

CUT_CAUSES = {"detach", "data_attr", "numpy_roundtrip", "item_roundtrip", "tolist_roundtrip", "tensor_rewrap",
              "no_grad_block", "inference_mode", "nondifferentiable_op", "integer_cast"}


# --- one verdict -----------------------------------------------------------------------------------------------------
class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)


class DetachNet(Enc):
    def forward(self, x):
        h = torch.relu(self.enc(x)).detach()  # L:v_detach
        return self.head(h)


class NoGradNet(Enc):
    def forward(self, x):
        with torch.no_grad():
            h = torch.relu(self.enc(x))  # L:v_nograd
        return self.head(h)


class NumpyNet(Enc):
    def forward(self, x):
        h = torch.relu(self.enc(x))
        h = torch.from_numpy(np.tanh(h.detach().numpy()))  # L:v_numpy
        return self.head(h)


class ItemNet(Enc):
    def forward(self, x):
        h = torch.relu(self.enc(x))
        gate = h.mean().item()  # L:v_item
        return self.head(torch.ones(x.shape[0], 8) * gate)  # (head trains; enc only reaches it as a number)


class LoggingNet(Enc):
    def forward(self, x):
        h = torch.relu(self.enc(x))
        self.last = h.detach().mean().item()  # L:v_log
        return self.head(h)


def _train(model, opt, with_opt):
    for _ in range(2):
        x, y = batch()
        loss = F.mse_loss(model(x), y)
        print(f"loss {loss.item():.3f}", file=io.StringIO())  # logging: a benign cut
        loss.backward()
        if with_opt:
            opt.step()
            opt.zero_grad()


def run_shape(cls, with_opt):
    torch.manual_seed(0)
    model = cls()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3) if with_opt else None
    with gradscope.trace() as tr:
        _train(model, opt, with_opt)
    return tr, model


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(4, 16)
        self.l2 = nn.Linear(16, 2)

    def forward(self, s):
        return self.l2(torch.relu(self.l1(s)))


def dqn(with_opt):
    """A correct DQN step: the target network runs under no_grad, keeps requires_grad=True, and no
    optimizer holds it; after training, a reloaded best model is evaluated under no_grad."""
    torch.manual_seed(0)
    policy, target = QNet(), QNet()
    target.load_state_dict(policy.state_dict())
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-3) if with_opt else None
    with gradscope.trace() as tr:
        for _ in range(2):
            s, s2 = torch.randn(8, 4), torch.randn(8, 4)
            a, r = torch.randint(0, 2, (8, 1)), torch.randn(8)
            q = policy(s).gather(1, a).squeeze(1)
            with torch.no_grad():
                nxt = target(s2).max(1).values  # L:v_target
            loss = F.smooth_l1_loss(q, r + 0.99 * nxt)
            if opt is not None:
                opt.zero_grad()
            loss.backward()
            if opt is not None:
                torch.nn.utils.clip_grad_value_(policy.parameters(), 100)
                opt.step()
        best = QNet()
        best.load_state_dict(policy.state_dict())
        with torch.no_grad():
            acc = (best(torch.randn(8, 4)).argmax(1) == 0).float().mean()  # L:v_best
    assert target.l1.weight.requires_grad and target.l1.weight.grad is None and best.l1.weight.grad is None
    return tr, policy, target, best, float(acc)


SHAPES = [  # (program, parameter starved by the bug or None, marker of its cut)
    ("detach", lambda o: run_shape(DetachNet, o), "enc.weight", "v_detach"),
    ("no_grad", lambda o: run_shape(NoGradNet, o), "enc.weight", "v_nograd"),
    ("numpy", lambda o: run_shape(NumpyNet, o), "enc.weight", "v_numpy"),
    ("item", lambda o: run_shape(ItemNet, o), "enc.weight", "v_item"),
    ("logging", lambda o: run_shape(LoggingNet, o), None, None),
    ("dqn", lambda o: dqn(o)[:2], None, None),
]


def _report_text(tr, width=120):
    con = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    tr.report(console=con)
    return con.export_text()


def cut_evidence(exp):
    """The cut events an explanation rests on (its site may be the region's `with` line instead)."""
    return [x for x in exp.evidence if x is not None and x.kind == "cut"]


def assert_one_verdict(tr, model, starved, tag):
    harmful = tr.cuts(harmful=True)
    benign = tr.cuts(harmful=False)
    problems = tr.problems()
    hi, lo = {e.index for e in harmful}, {e.index for e in benign}
    # why: a parameter is explained by a cut only if that cut is harmful, and it is then a problem
    for name, p in model.named_parameters():
        exp = tr.why(p)
        if exp.cause in CUT_CAUSES:
            ev = {x.index for x in cut_evidence(exp)}
            assert ev and ev <= hi, f"why({name}) blames a cut that is not harmful: {exp}"
            assert any(name in pr.target for pr in problems), f"why({name}) is a cut, but no problem names it"
    # check() and problems()
    if starved is None:
        assert problems == [], [str(x) for x in problems]
        tr.check()
        assert harmful == []
    else:
        exp = tr.why(starved)
        assert exp.cause in CUT_CAUSES and cut_evidence(exp) and all(on_line(x.site, tag) for x in cut_evidence(exp)), exp
        assert len(problems) == 1 and all(on_line(x.site, tag) for x in cut_evidence(problems[0])), problems
        with pytest.raises(AssertionError):
            tr.check()
        assert harmful and all(on_line(e.site, tag) for e in harmful), [str(e) for e in harmful]
    for pr in problems:
        assert not {x.index for x in cut_evidence(pr)} & lo, "a problem's cut is called benign"
    # the report: harmful cuts in their table, never in the benign line
    text = _report_text(tr)
    benign_line = next((ln for ln in text.splitlines() if "harmless" in ln), "")
    for e in harmful:
        assert e.site.short not in benign_line, benign_line
        assert "Cuts that stop gradients" in text and e.site.short in text
    if not harmful:
        assert "Cuts that stop gradients" not in text
    # the diagram: a cut node is drawn harmful exactly when the verdict says so
    g = tr.graph()
    cut_nodes = [n for n in g.nodes if n.kind == "cut" and n.event is not None]
    for n in cut_nodes:
        assert (n.style == "cut") == (n.event in hi), (n.title, n.style, n.event in hi)
    drawn = {tr.events[n.event].site.short for n in cut_nodes if n.style == "cut"}
    assert {e.site.short for e in harmful} <= drawn, drawn  # (the diagram shows the last step of a loop)
    # the CLI's JSON document
    doc = trace_json(tr)
    assert {c["index"] for c in doc["cuts"] if c["verdict"] == "harmful"} == hi
    assert len(doc["problems"]) == len(problems)
    assert doc["ok"] == (not problems) if "ok" in doc else True


@pytest.mark.parametrize("with_opt", [True, False], ids=["optimizer", "no_optimizer"])
@pytest.mark.parametrize("name,prog,starved,tag", SHAPES, ids=[s[0] for s in SHAPES])
def test_every_surface_gives_one_verdict(name, prog, starved, tag, with_opt):
    tr, model = prog(with_opt)
    target = dict(model.named_parameters())[starved] if starved else None
    assert_one_verdict(tr, model, target, tag)


@pytest.mark.parametrize("with_opt", [True, False], ids=["optimizer", "no_optimizer"])
def test_target_network_and_reloaded_best_model_are_not_starved(with_opt):
    tr, policy, target, best, _ = dqn(with_opt)
    tr.check()
    assert tr.problems() == []
    assert not tr.cuts(harmful=True)
    for p in (target.l1.weight, best.l2.bias):
        exp = tr.why(p)
        assert exp.cause == "not_trained" and exp.status == "none", exp
    assert on_line(tr.why(target.l1.weight).site, "v_target")
    assert tr.why(policy.l1.weight).cause == "ok"


def test_demo_no_grad_example_agrees_everywhere():
    from gradscope import demo

    tr, w = demo.no_grad_in_forward()
    exp = tr.why(w)
    assert exp.cause == "no_grad_block"
    ev = cut_evidence(exp)
    harmful = tr.cuts(harmful=True)
    assert ev and {x.index for x in ev} <= {e.index for e in harmful}
    assert {e.site.short for e in harmful} == {x.site.short for x in ev}
    assert not [e for e in tr.cuts(harmful=False) if e.site.short == ev[0].site.short]
    text = _report_text(tr)
    assert ev[0].site.short not in next((ln for ln in text.splitlines() if "harmless" in ln), "")


def test_gradscope_demo_shows_the_no_grad_cut_as_harmful(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="120", NO_COLOR="1")
    out = subprocess.run([sys.executable, "-m", "gradscope", "demo"], capture_output=True, text=True, cwd=tmp_path,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout
    for ln in text.splitlines():
        if "harmless" in ln:
            assert "no_grad" not in ln and "demo.py:71" not in ln, ln


# --- cuts(): benign vs harmful ---------------------------------------------------------------------------------------
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


# --- parameters no longer in the model -------------------------------------------------------------------------------
CLI_SCRIPT = textwrap.dedent('''
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class TransformerModel(nn.Transformer):
        """pytorch/examples word_language_model: nn.Transformer's own decoder is replaced in __init__."""

        def __init__(self, ntoken, ninp, nhead, nhid, nlayers):
            super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers,
                             num_decoder_layers=2)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)

        def forward(self, src):
            mask = torch.log(torch.tril(torch.ones(len(src), len(src))))
            src = self.input_emb(src) * math.sqrt(self.ninp)
            output = self.encoder(src, mask=mask)
            return F.log_softmax(self.decoder(output), dim=-1)


    def main():
        torch.manual_seed(0)
        model = TransformerModel(30, 16, 2, 32, 2)
        for _ in range(2):
            data, targets = torch.randint(0, 30, (7, 3)), torch.randint(0, 30, (21,))
            model.zero_grad()
            loss = nn.NLLLoss()(model(data).view(-1, 30), targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-0.5)
        print("done")


    if __name__ == "__main__":
        main()
''')


def test_submodule_replaced_in_init_is_not_param_recreated(tmp_path):
    script = tmp_path / "wlm.py"
    script.write_text(CLI_SCRIPT)
    ns: dict = {"__name__": "wlm"}
    with gradscope.trace() as tr:
        exec(compile(CLI_SCRIPT, str(script), "exec"), ns)
        ns["main"]()
    assert tr.problems() == [], [str(p)[:300] for p in tr.problems()]
    tr.check()
    # the same under `gradscope run --json` (the whole script traced, as __main__)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "gradscope", "run", "--json", str(script)], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=300)
    doc = json.loads(out.stdout)
    assert out.returncode == 0, out.stderr[-2000:]
    assert doc["problems"] == [] and not [c for c in doc["cuts"] if c["verdict"] == "harmful"], doc["problems"][:2]


# --- no optimizer, no nn.Module: hand-written weights are what the step trains -----------------------------------------
def _regression(cut):
    """A two-layer regression written by hand (leaf tensors with requires_grad=True, no nn.Module, no optimizer):
    ``cut`` says how the first layer is cut off the loss: its weight detached, its activation detached, or the
    first layer run under no_grad."""
    torch.manual_seed(0)
    x, y = torch.randn(8, 3), torch.randn(8)
    w1 = torch.randn(3, 4, requires_grad=True)
    w2 = torch.randn(4, requires_grad=True)
    with gradscope.trace() as tr:
        if cut == "weight":
            h = torch.tanh(x @ w1.detach())  # L:leaf_weight
        elif cut == "activation":
            h = torch.tanh(x @ w1).detach()  # L:leaf_act
        else:
            with torch.no_grad():  # L:leaf_nograd
                h = torch.tanh(x @ w1)
        loss = ((h @ w2 - y) ** 2).mean()
        loss.backward()
    return tr, w1, w2


@pytest.mark.parametrize("cut, cause, tag", [("weight", "detach", "leaf_weight"), ("activation", "detach", "leaf_act"),
                                             ("nograd", "no_grad_block", "leaf_nograd")])
def test_hand_written_leaf_weights_are_trained_without_an_optimizer(cut, cause, tag):
    """Without an optimizer, the leaves the forward used with requires_grad are what the step trains, whether the
    forward used them in an op (``x @ w1``) or only through a cut (``w1.detach()``): the starved first-layer weight
    is the one problem, on every surface, at the line of the cut (the region's line for no_grad); the second layer received its gradient."""
    tr, w1, w2 = _regression(cut)
    e = tr.why(w1)
    assert (e.cause, e.site.lineno) == (cause, line(tag)), str(e)
    assert [(p.cause, p.target) for p in tr.problems()] == [(cause, "w1")]
    assert [c.verdict for c in tr.cuts()] == ["harmful"] and tr.why(w2).cause == "ok"
    with pytest.raises(AssertionError, match="w1"):
        tr.check()


def test_a_teacher_copy_run_under_no_grad_on_the_students_batch_is_not_trained_without_an_optimizer():
    """Knowledge distillation without an optimizer in the trace: the teacher is a deep copy of the student (same
    class, same shapes), run under no_grad on the very batch the student trains on. It is an untrained twin (only
    the student's parameters are the model's own: the shared batch is no parameter of either), so no problem is
    reported and the teacher's weights are "not trained", not cut by a no_grad block."""
    import copy

    torch.manual_seed(0)
    student = QNet()
    teacher = copy.deepcopy(student)
    x = torch.randn(16, 4)
    with gradscope.trace() as tr:
        with torch.no_grad():
            soft = F.softmax(teacher(x), dim=-1)
        loss = F.kl_div(F.log_softmax(student(x), dim=-1), soft, reduction="batchmean")
        loss.backward()
    assert tr.problems() == [], [str(p)[:300] for p in tr.problems()]
    assert tr.why(teacher.l1.weight).cause == "not_trained" and tr.why(student.l1.weight).cause == "ok"
    tr.check()


def test_a_cut_torch_made_for_the_user_is_judged_when_the_user_uses_its_result():
    """L2-SP regularisation toward a snapshot taken with ``state_dict()``: torch detaches the weight itself (a cut in
    the library's context), and the loss uses what it made: that cut is listed with its verdict (benign: the anchor
    is a constant), at the user's line; no problem."""
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        anchor = model.state_dict()["weight"]  # L:lib_anchor
        loss = F.mse_loss(model(x), y) + 0.01 * ((model.weight - anchor) ** 2).sum()
        loss.backward()
        opt.step()
    cuts = tr.cuts()
    assert [(c.cut, c.context, c.verdict, c.site.lineno) for c in cuts] == [
        ("detach", "library", "benign", line("lib_anchor"))], [str(c) for c in cuts]
    assert tr.problems() == []


def test_the_steps_verdict_counts_its_problems_in_words():
    """The summary's one line: "1 problem found", "2 problems found" (the report's header)."""
    torch.manual_seed(0)
    one, _m = run_shape(DetachNet, True)
    assert one.summary().verdict == "1 problem found" and not one.summary().ok
    model = DetachNet()
    scale = nn.Parameter(torch.ones(1))  # handed to the optimizer, never used: a second problem
    opt = torch.optim.Adam([*model.parameters(), scale], lr=1e-3)
    with gradscope.trace() as two:
        x, y = batch()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    s = two.summary()
    n = len(s.problems) + (1 if s.failure else 0)
    assert n == 2 and s.verdict == "2 problems found", (s.verdict, [str(p)[:120] for p in two.problems()])


@pytest.mark.parametrize("touch", ["hook", "init"])
def test_a_leaf_the_forward_never_used_is_not_one_of_the_steps_parameters(touch):
    """Without an optimizer, the summary lists the leaves the step's user code used in a computation: a leaf that
    was only given a gradient hook, or only initialised by nn.init, is not among them (and is no problem)."""
    torch.manual_seed(0)
    x = torch.randn(8, 3)
    w = torch.randn(3, requires_grad=True)
    spare = torch.empty(3, 4, requires_grad=True)
    with gradscope.trace() as tr:
        if touch == "hook":
            spare.register_hook(lambda g: g)
        else:
            nn.init.xavier_uniform_(spare)
        loss = (x @ w).pow(2).mean()
        loss.backward()
    s = tr.summary()
    assert [(p.name, p.status) for p in s.params] == [("w", "received")] and s.ok, [p.name for p in s.params]
