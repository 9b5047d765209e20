"""The rules for a gradient with inf/nan (status ``nonfinite``, gradscope.diagnosis.rules_zero), each on a real
torch run: the backward node that produced the first non-finite value, and a ``.grad`` no recorded backward
produced (also for zeros: the ``zero_unknown`` twin of ``nonfinite_unknown``) is not pinned on an operation.

Lines are found from marker comments in this file (``# L:<tag>``), never hard-coded (tests/_rules_helpers.py).
"""
from __future__ import annotations


import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gradscope

from _rules_helpers import Markers

M = Markers(__file__)
assert_explains = M.assert_explains

pytestmark = pytest.mark.filterwarnings("ignore")


# --- rule first_nonfinite_node: The backward node that produced the first inf/nan. -----------------------------------

def test_nonfinite_gradient():
    enc = nn.Linear(3, 3)
    with gradscope.trace() as tr:
        a = enc(torch.ones(2, 3))
        dist = (a - a.detach()).pow(2).sum(-1).sqrt()  # L:sqrt0
        dist.sum().backward()
    assert not torch.isfinite(enc.weight.grad).all()
    exp = tr.why(enc.weight)
    assert_explains(exp, "nonfinite_gradient", "weight", "sqrt0", ("epsilon", "clamp", "stable"))


# --- rule nonfinite_unknown (and its twin for zeros, zero_unknown): the trace did not see what produced it -----------

@pytest.mark.parametrize("value, cause", [(0.0, "zero_gradient"), (float("nan"), "nonfinite_gradient")])
def test_a_gradient_no_backward_produced_is_not_pinned_on_an_operation(value, cause):
    """.grad written by hand (no backward in the trace made it): the cause, without a made-up site."""
    w = torch.ones(3, requires_grad=True)
    with gradscope.trace() as tr:
        (w * 2).sum()
        w.grad = torch.full((3,), value)
    exp = tr.why(w)
    assert exp.cause == cause and exp.site is None, exp
    assert "did not" in exp.detail  # (says that the trace did not see where it came from)


def test_a_nonfinite_gradient_from_a_graph_built_before_the_trace_names_the_node():
    w = torch.zeros(3, requires_grad=True)
    y = w.sqrt()  # (built before the trace: no recorded call)
    with gradscope.trace() as tr:
        y.sum().backward()
    exp = tr.why(w)
    assert exp.cause == "nonfinite_gradient" and exp.site is None, exp
    assert "came from SqrtBackward0 (its forward ran outside the trace" in exp.summary, exp.summary
    assert "SqrtBackward0 (SqrtBackward0" not in exp.summary


# --- where the inf/nan entered the forward (values read after the backward that ended non-finite) -----------------

def _padded_step(enc, anomaly):
    x = torch.randn(2, 5, 4)
    pad = torch.full((2, 2, 4), float("nan"))  # w_nan_pad
    h = enc(torch.cat([x, pad], 1))
    loss = h[:, :5].sum()  # (the padding is sliced away: the loss is finite, the weight's gradient is not)
    if anomaly:
        with torch.autograd.detect_anomaly():
            loss.backward()
    else:
        loss.backward()


@pytest.mark.parametrize("anomaly", [False, True])
def test_nan_padding_sliced_away_is_named_where_it_was_filled_in(anomaly, tmp_path):
    import warnings

    torch.manual_seed(0)
    enc = nn.Linear(4, 3)
    tr = gradscope.trace()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (anomaly mode's own warnings)
        if anomaly:
            with pytest.raises(RuntimeError, match="returned nan values"):
                with tr:
                    _padded_step(enc, True)
        else:
            with tr:
                _padded_step(enc, False)
    exp = tr.failure if anomaly else tr.why(enc.weight)
    assert exp.cause == "nonfinite_gradient" and exp.site.lineno == M.line_of("w_nan_pad"), exp
    assert "the nan entered the forward at full()" in exp.summary, exp.summary
    assert "fill with a finite value" in exp.fix, exp.fix
    # the values it read are part of the trace: a saved trace says the same without torch's tensors
    path = tmp_path / "t.json"
    tr.save(path)
    again = gradscope.load(path)
    assert (again.failure if anomaly else again.why("enc.weight")).site.lineno == exp.site.lineno


def test_a_zero_over_zero_cosine_is_named_at_the_division_not_at_the_loss():
    import warnings

    enc = nn.Embedding(10, 4, padding_idx=0)
    tr = gradscope.trace()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="returned nan values"):
            with tr:
                a, b = enc(torch.tensor([1, 2])), enc(torch.tensor([3, 0]))  # (index 0: a zero vector)
                sim = (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1))  # w_cos_div
                with torch.autograd.detect_anomaly():
                    ((sim - 1.0) ** 2).mean().backward()
    f = tr.failure
    assert f.cause == "nonfinite_gradient" and f.site.lineno == M.line_of("w_cos_div"), f
    assert "entered the forward at div()" in f.summary and "epsilon to the denominator" in f.fix, f


def test_a_causal_minus_inf_mask_that_softmax_turns_finite_is_not_where_a_later_inf_came_from():
    q = nn.Linear(4, 4)
    with gradscope.trace() as tr:
        x = torch.randn(3, 4)
        s = (q(x) @ x.t()).masked_fill(torch.triu(torch.ones(3, 3, dtype=torch.bool), 1), float("-inf"))
        out = torch.softmax(s, -1) @ x
        torch.log(out.relu() * 0).sum().backward()  # w_log_zero
    exp = tr.why(q.weight)
    assert exp.cause == "nonfinite_gradient" and exp.site.lineno == M.line_of("w_log_zero"), exp
    assert "masked_fill" not in exp.summary


def test_values_are_read_only_after_a_backward_that_ended_non_finite():
    lin = nn.Linear(3, 1)
    with gradscope.trace() as tr:
        lin(torch.randn(4, 3)).sum().backward()
        lin(torch.full((2, 3), float("inf"))).sum().backward()
    ok, bad = tr.data.backwards
    assert ok.values == {} and bad.values, (ok.values, bad.values)


def test_reading_values_after_a_non_finite_backward_never_reruns_a_checkpointed_forward():
    # anomaly mode stops backward before it reaches the checkpointed region: that region's saved tensors are unpacked
    # only by running its forward again, which gradscope must not do
    import warnings

    from torch.utils.checkpoint import checkpoint

    calls = []

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            calls.append(1)
            return torch.tanh(self.lin(x)) * 2.0  # (tanh saves its result, which nothing else holds)

    def step(block):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = checkpoint(block, torch.randn(2, 3), use_reentrant=False)
            with torch.autograd.detect_anomaly():
                try:  # sqrt at 0 after the region: 0 * inf is nan before backward gets there
                    (torch.sqrt(y * 0.0) * 0.0).sum().backward()
                except RuntimeError as e:
                    assert "nan values" in str(e)

    torch.manual_seed(0)
    plain = Block()
    step(plain)
    n_plain = len(calls)
    calls.clear()
    traced = Block()
    traced.load_state_dict(plain.state_dict())
    with gradscope.trace() as tr:
        step(traced)
    assert tr.data.backwards[-1].error  # (the nan was caught inside the step)
    assert len(calls) == n_plain, (len(calls), n_plain)


_SQUASH = {  # ops that map a masked -inf to 0 (common._SQUASHING): the masked entry is finite after them
    "softmax": lambda z: torch.softmax(z, -1),
    "sigmoid": torch.sigmoid,
    "sigmoid_": lambda z: z.sigmoid_(),
    "exp": torch.exp,
    "exp_": lambda z: z.exp_(),
}


_INPLACE_GAP = pytest.mark.xfail(strict=True, reason="known gap: an in-place op that saves its result (exp_, sigmoid_) "
                                 "is not mapped to its backward node, so the masked_fill before it is named instead")


@pytest.mark.parametrize("squash", [pytest.param(s, marks=_INPLACE_GAP) if s.endswith("_") else s for s in sorted(_SQUASH)])
def test_an_invalid_action_mask_is_not_where_the_log_of_a_masked_action_went_non_finite(squash):
    # -inf masks illegal actions (correct); the replayed action became illegal: its probability is 0 and log(0) is
    # where the inf appears, although the squashing op's output was not read back
    import warnings

    policy = nn.Linear(4, 3)

    def loss_of(s, legal, a):
        probs = _SQUASH[squash](policy(s).masked_fill(~legal, float("-inf")))
        return -torch.log(probs.gather(1, a[:, None]).squeeze(1)).mean()  # w_log_masked

    legal = torch.tensor([[True, True, False], [True, False, True]])
    tr = gradscope.trace()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="returned nan values"):
            with tr:
                with torch.autograd.detect_anomaly():
                    loss_of(torch.randn(2, 4), legal, torch.tensor([2, 1])).backward()
    f = tr.failure
    assert f.cause == "nonfinite_gradient" and f.site.lineno == M.line_of("w_log_masked"), f
    assert "masked_fill" not in f.summary, f.summary


def test_a_division_by_a_zero_standard_deviation_is_named_although_its_inputs_were_not_read():
    """Feature standardisation inside the step where one feature is constant: (x - mean) / std divides by zero.
    The values between the division and the loss are gone when backward ends; the division is named, not the
    layer or loss the nan reached."""
    net = nn.Linear(3, 1)

    def step():
        x = torch.randn(6, 3)
        x[:, 2] = 1.0  # a constant column
        z = (x - x.mean(0)) / x.std(0)  # L:nf_div_std
        out = net(z)
        return F.mse_loss(out, torch.zeros(6, 1))

    tr = gradscope.trace()
    with tr:
        step().backward()
    M.assert_explains(tr.why(net.weight), "nonfinite_gradient", "net.weight", "nf_div_std", "epsilon")


def test_a_row_masked_entirely_with_minus_inf_under_a_detached_weighting_is_named_at_the_mask():
    """Weights from a softmax over masked scores, detached, with one row masked entirely: softmax makes nan, the
    nan reaches a log through the weighting. The log's backward made nan (not inf): the nan came in, from the
    -inf fill."""
    import warnings

    proj = nn.Linear(4, 4)

    def loss_of(x, mask):
        s = proj(x) @ proj(x).t()
        w = torch.softmax(s.masked_fill(mask, float("-inf")), 1).detach()  # L:nf_row_mask
        return torch.log((w * s.exp()).sum(1) + 1.0).mean()

    mask = torch.zeros(3, 3, dtype=torch.bool)
    mask[1] = True  # every entry of row 1 masked
    tr = gradscope.trace()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tr:
            loss_of(torch.randn(3, 4), mask).backward()
    M.assert_explains(tr.why(proj.weight), "nonfinite_gradient", "masked_fill", "nf_row_mask", "finite value")


def test_a_scaled_attention_score_is_not_taken_for_the_division_that_made_the_nan():
    """Cross-attention over a memory whose last sequence is empty: its row of scores, divided by sqrt(d) (a Python
    number: no inf can come of it), is masked entirely with -inf. Anomaly mode stops the backward; the nan is named
    at the mask, not at the scaling division."""
    import warnings

    q, kv, o, head = nn.Linear(8, 8), nn.Linear(8, 16), nn.Linear(8, 8), nn.Linear(8, 5)

    def attend(x, mem, lengths):
        k, v = kv(mem).chunk(2, dim=-1)
        scores = q(x) @ k.transpose(1, 2) / x.shape[-1] ** 0.5
        pad = torch.arange(mem.shape[1])[None, :] >= lengths[:, None]
        scores = scores.masked_fill(pad[:, None, :], float("-inf"))  # L:nf_scaled_mask
        return o(torch.softmax(scores, dim=-1) @ v)

    tr = gradscope.trace()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="returned nan values"):
            with tr:
                with torch.autograd.detect_anomaly(check_nan=True):
                    logits = head(attend(torch.randn(3, 4, 8), torch.randn(3, 6, 8), torch.tensor([6, 3, 0])))
                    F.cross_entropy(logits.reshape(-1, 5), torch.randint(0, 5, (12,))).backward()
    f = tr.failure
    assert f.cause == "nonfinite_gradient" and f.site.lineno == M.line("nf_scaled_mask"), f


def test_an_rsqrt_of_a_zero_variance_is_named_although_its_inputs_were_not_read():
    """A hand-written layer norm with rsqrt and no epsilon over a constant row: rsqrt(0) is inf where it is made."""
    net = nn.Linear(4, 1)

    def step():
        x = torch.randn(3, 4)
        x[1] = 2.0  # a constant row: variance 0
        h = (x - x.mean(1, keepdim=True)) * torch.rsqrt(x.var(1, keepdim=True))  # L:nf_rsqrt
        return net(h).pow(2).mean()

    tr = gradscope.trace()
    with tr:
        step().backward()
    M.assert_explains(tr.why(net.weight), "nonfinite_gradient", "net.weight", "nf_rsqrt", "epsilon")


# every op of the domain-edge table (common._DOMAIN_EDGE), each at the edge of its domain before a layer whose
# backward then sends inf/nan: the op is named (the layer's values between are gone; it cannot make one itself)
_EDGES = {
    "div": lambda x: torch.div(torch.ones_like(x), x - x.detach()),
    "__truediv__": lambda x: torch.ones_like(x) / (x - x.detach()),
    "__rtruediv__": lambda x: 1.0 / (x - x.detach()),
    "true_divide": lambda x: torch.true_divide(torch.ones_like(x), x - x.detach()),
    "reciprocal": lambda x: torch.reciprocal(x - x.detach()),
    "log": lambda x: torch.log(x - x.detach()),
    "log2": lambda x: torch.log2(x - x.detach()),
    "log10": lambda x: torch.log10(x - x.detach()),
    "log1p": lambda x: torch.log1p(x - x.detach() - 1.0),
    "sqrt": lambda x: torch.sqrt(x - x.detach() - 1.0),
    "rsqrt": lambda x: torch.rsqrt(x - x.detach()),
    "pow": lambda x: torch.pow(x - x.detach() - 1.0, 0.5),
    "__pow__": lambda x: (x - x.detach() - 1.0) ** 0.5,
    "__rpow__": lambda x: (-2.0) ** (x - x.detach() + 0.5),
    "acos": lambda x: torch.acos(x - x.detach() + 2.0),
    "asin": lambda x: torch.asin(x - x.detach() + 2.0),
    "atanh": lambda x: torch.atanh(x - x.detach() + 1.0),
    "exp": lambda x: torch.exp(x - x.detach() + 1000.0),
    "expm1": lambda x: torch.expm1(x - x.detach() + 1000.0),
    "tan": lambda x: torch.tan(x - x.detach() + torch.pi / 2) * torch.inf,
}


@pytest.mark.parametrize("op", sorted(_EDGES))
def test_each_op_at_the_edge_of_its_domain_is_named_before_a_layer_that_passed_its_inf_on(op):
    # (the expected op comes from what torch does at its domain's edge, not from gradscope's table: no
    # membership check here; the rule fixtures of tests/fixtures/rules/ point at the lines below, so
    # this comment keeps their numbers)
    net, head = nn.Linear(3, 3), nn.Linear(3, 1)

    def step():
        h = net(torch.randn(2, 3))
        bad = _EDGES[op](h)  # L:nf_edge_op
        return head(bad * 2.0).sum()

    tr = gradscope.trace()
    with tr:
        step().backward()
    exp = tr.why(head.weight)
    assert exp.cause == "nonfinite_gradient", exp
    # (the op runs inside the table's lambda: its line there, the step's line in its stack)
    assert M.site_hits(exp.site, "nf_edge_op") and exp.site.stack[-1].code.startswith(f'"{op}":'), exp


_W = torch.linspace(-1, 1, 6)


_PASSING = {  # each op whose backward sends on, finite-in finite-out, the inf that came with its input
    "linear": lambda b: F.linear(b, _W.reshape(2, 3)), "matmul": lambda b: torch.matmul(b, _W.reshape(3, 2)),
    "mm": lambda b: torch.mm(b, _W.reshape(3, 2)), "bmm": lambda b: torch.bmm(b.reshape(2, 4, 3), _W.reshape(1, 3, 2).expand(2, 3, 2)),
    "addmm": lambda b: torch.addmm(torch.ones(8, 2), b, _W.reshape(3, 2)), "mul": lambda b: torch.mul(b, 2.0),
    "__mul__": lambda b: b * 2.0, "__rmul__": lambda b: 2.0 * b, "add": lambda b: torch.add(b, 1.0),
    "__add__": lambda b: b + 1.0, "__radd__": lambda b: 1.0 + b, "sub": lambda b: torch.sub(b, 1.0),
    "__sub__": lambda b: b - 1.0, "__rsub__": lambda b: 1.0 - b, "sum": lambda b: b.sum(0), "mean": lambda b: b.mean(0),
    "conv1d": lambda b: F.conv1d(b.reshape(1, 3, 8), _W.reshape(2, 3, 1)),
    "conv2d": lambda b: F.conv2d(b.reshape(1, 3, 2, 4), _W.reshape(2, 3, 1, 1)),
    "conv3d": lambda b: F.conv3d(b.reshape(1, 3, 2, 2, 2), _W.reshape(2, 3, 1, 1, 1)),
    "relu": lambda b: torch.relu(b), "cat": lambda b: torch.cat([b, b]), "stack": lambda b: torch.stack([b, b]),
    "reshape": lambda b: b.reshape(24), "view": lambda b: b.view(24), "flatten": lambda b: b.flatten(),
    "squeeze": lambda b: b.squeeze(), "unsqueeze": lambda b: b.unsqueeze(0), "transpose": lambda b: b.transpose(0, 1),
    "permute": lambda b: b.permute(1, 0), "embedding": lambda b: F.embedding(torch.tensor([0, 3, 5]), b),
    "dropout": lambda b: F.dropout(b, 0.0)}


@pytest.mark.parametrize("op", sorted(_PASSING))
def test_an_inf_passed_on_by_each_op_is_named_where_it_was_made(op):
    """sqrt at 0 makes the inf; each of these ops only passes it on (its backward is finite on finite values):
    the sqrt's line is named, not the op's."""
    net = nn.Linear(3, 3)
    with gradscope.trace() as tr:
        h = net(torch.randn(8, 3))
        bad = torch.sqrt(h - h.detach() + 1e-30 * 0)  # L:nf_made
        out = _PASSING[op](bad)  # L:nf_passed
        (out * 3.0).sum().backward()
    assert not torch.isfinite(net.weight.grad).all()
    exp = tr.why(net.weight)
    assert exp.cause == "nonfinite_gradient" and M.site_hits(exp.site, "nf_made"), (op, exp)
