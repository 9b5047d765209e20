"""One test per entry of the diagnosis' lookup tables (gradscope/diagnosis/common.py, rules_upstream.py,
rules_raised.py, errors.py) that no other test exercises: each runs a small real torch program under
``gradscope.trace()`` and checks the explanation's cause and line.

The expected verdicts come from what torch does, checked in each test (or in a helper it calls) before gradscope
is asked: that the op really makes a copy that is no leaf, that the message really is the one torch raises, that
undoing the cut named really brings the gradient back. The tables themselves are never read here.
"""
from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gradscope

from _rules_helpers import Markers

M = Markers(__file__)

pytestmark = pytest.mark.filterwarnings("ignore")


def _run_failing(fn, match, exc=RuntimeError):
    """Run ``fn`` plain (torch must raise ``match``), then under a trace: (tr.failure, the message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=match):
            fn()
        tr = gradscope.trace()
        with pytest.raises(exc, match=match) as info:
            with tr:
                fn()
    return tr.failure, str(info.value)


# --- common._TO_OPS: a leaf rebound to a converted copy of itself (rule to_copy_is_not_a_leaf) ----------------------
# (`cuda` needs a GPU; `cpu` of a CPU tensor returns the tensor itself, no copy: neither can be run here)

_CONVERT = {
    "to": (torch.float32, lambda x: x.to(torch.float64)),
    "double": (torch.float32, lambda x: x.double()),
    "float": (torch.float64, lambda x: x.float()),
    "half": (torch.float32, lambda x: x.half()),
    "bfloat16": (torch.float32, lambda x: x.bfloat16()),
    "type": (torch.float32, lambda x: x.type(torch.float64)),
    "type_as": (torch.float32, lambda x: x.type_as(torch.zeros(1, dtype=torch.float64))),
}


def _rebound_leaf(op, traced):
    dtype, convert = _CONVERT[op]

    def run():
        img = torch.rand(2, 3, dtype=dtype, requires_grad=True)
        leaf = img
        img = convert(img)  # L:to_rebind
        (img * 2.0).sum().backward()
        return leaf, img

    if not traced:
        return run()
    with gradscope.trace() as tr:
        leaf, img = run()
    return tr, leaf, img


@pytest.mark.parametrize("op", sorted(_CONVERT))
def test_a_leaf_rebound_to_a_converted_copy_names_the_conversion(op):
    leaf, img = _rebound_leaf(op, traced=False)
    # torch: the conversion is a new tensor, no leaf, whose .grad stays None; the original leaf got the gradient
    assert img is not leaf and not img.is_leaf and img.grad is None and leaf.grad is not None
    tr, leaf, img = _rebound_leaf(op, traced=True)
    exp = tr.why(img)
    assert exp.cause == "leaf_replaced_by_to" and M.site_hits(exp.site, "to_rebind"), (op, exp)


# --- common._LOSSES: a loss's detached target is the idiom, not the cut to name ------------------------------------

_PROB_TARGET = {"kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy"}
_LOSS = {
    "mse_loss": lambda p, t: F.mse_loss(p, t),
    "l1_loss": lambda p, t: F.l1_loss(p, t),
    "smooth_l1_loss": lambda p, t: F.smooth_l1_loss(p, t),
    "huber_loss": lambda p, t: F.huber_loss(p, t),
    "kl_div": lambda p, t: F.kl_div(p.log_softmax(-1), t, reduction="batchmean"),
    "binary_cross_entropy": lambda p, t: F.binary_cross_entropy(torch.sigmoid(p), t),
    "binary_cross_entropy_with_logits": lambda p, t: F.binary_cross_entropy_with_logits(p, t),
    "cross_entropy": lambda p, t: F.cross_entropy(p, t),
}


def _detached_target_program(name, cut_pred=True):
    """enc -> feat; the target is feat detached (the idiom), the prediction head(feat) detached too (the bug)."""
    torch.manual_seed(0)
    enc, head = nn.Linear(4, 3), nn.Linear(3, 3)
    feat = enc(torch.randn(5, 4))
    target = (feat.softmax(-1) if name in _PROB_TARGET else feat).detach()  # L:loss_target_cut
    pred = head(feat.detach()) if cut_pred else head(feat)  # L:loss_pred_cut
    _LOSS[name](pred, target).backward()
    return enc


@pytest.mark.parametrize("name", sorted(_LOSS))
def test_a_detached_loss_target_is_not_named_when_the_prediction_was_cut_too(name):
    # torch: with both cuts no gradient reaches the encoder; undoing only the prediction's cut brings it back
    # (the detached target stays detached): the prediction's cut is the one to name
    assert _detached_target_program(name).weight.grad is None
    g = _detached_target_program(name, cut_pred=False).weight.grad
    assert g is not None and torch.count_nonzero(g) > 0
    with gradscope.trace() as tr:
        enc = _detached_target_program(name)
    exp = tr.why(enc.weight)
    assert exp.cause == "detach" and M.site_hits(exp.site, "loss_pred_cut"), (name, exp)
    target_line = M.line("loss_target_cut")
    assert all(s.lineno != target_line for s in exp.extra_sites), (name, exp.extra_sites)


# --- rules_upstream._ELEMENTWISE: backward() of a non-scalar loss, back through element-wise arithmetic -----------

_NONSCALAR = "grad can be implicitly created only for scalar outputs"
_W6 = torch.linspace(0.5, 1.5, 6)
_ARITH = {
    "mul": lambda p: torch.mul(p, _W6), "__mul__": lambda p: p * _W6, "__rmul__": lambda p: 2.0 * p,
    "add": lambda p: torch.add(p, _W6), "__add__": lambda p: p + _W6, "__radd__": lambda p: 1.0 + p,
    "sub": lambda p: torch.sub(p, _W6), "__sub__": lambda p: p - _W6, "__rsub__": lambda p: 1.0 - p,
    "div": lambda p: torch.div(p, _W6), "__truediv__": lambda p: p / _W6, "__rtruediv__": lambda p: 1.0 / (p + 2.0),
    "neg": lambda p: torch.neg(p), "__neg__": lambda p: -p, "pow": lambda p: torch.pow(p, 2),
    "__pow__": lambda p: p ** 2, "abs": lambda p: torch.abs(p), "clamp": lambda p: torch.clamp(p, max=5.0),
    "where": lambda p: torch.where(_W6 > 1.0, p, p * 0.5),
}


def _per_sample_loss_step(op):
    torch.manual_seed(0)
    head = nn.Linear(4, 3)

    def step():
        x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
        per = F.cross_entropy(head(x), y, reduction="none")  # L:ew_per_sample
        weighted = _ARITH[op](per)  # L:ew_arith
        assert weighted.shape == per.shape  # (torch: the arithmetic is element-wise, the shape is the loss's)
        weighted.backward()

    return step


@pytest.mark.parametrize("op", sorted(_ARITH))
def test_a_per_sample_loss_through_element_wise_arithmetic_names_the_loss_line(op):
    f, msg = _run_failing(_per_sample_loss_step(op), _NONSCALAR)
    assert f.cause == "nonscalar_backward" and M.site_hits(f.site, "ew_per_sample"), (op, f)


# --- rules_upstream._DTYPES: "Found dtype X but expected Y": the line that made the tensor of dtype X -------------
# (BFloat16 and Bool need no entry: their lower-case spelling is the dtype's name, so dropping them changes nothing)

_DT = {"Double": (torch.float32, torch.float64), "Float": (torch.float64, torch.float32),
       "Half": (torch.float32, torch.float16), "BFloat16": (torch.float32, torch.bfloat16),
       "Long": (torch.float32, torch.int64), "Int": (torch.float32, torch.int32), "Bool": (torch.float32, torch.bool)}


@pytest.mark.parametrize("found", sorted(_DT))
def test_a_bce_target_of_another_dtype_names_where_the_target_was_made(found):
    pred_dtype, target_dtype = _DT[found]
    clf = nn.Linear(4, 1).to(pred_dtype)

    def step():
        x = torch.randn(6, 4, dtype=pred_dtype)
        labels = (torch.arange(6).reshape(6, 1) % 2).to(target_dtype)  # L:dt_target
        F.binary_cross_entropy(torch.sigmoid(clf(x)), labels).backward()

    f, msg = _run_failing(step, f"Found dtype {found} but expected ")
    assert f.cause == "dtype_mismatch" and M.site_hits(f.site, "dt_target"), (found, f)


# --- rules_upstream._EXPANDING / _VIEWING: an in-place write into a view of an expanded tensor -------------------

_OVERLAP = "more than one element of the written-to tensor refers to a single memory location"
_EXPAND = {"expand": lambda z: z.expand(4, 3), "expand_as": lambda z: z.expand_as(torch.empty(4, 3)),
           "broadcast_to": lambda z: torch.broadcast_to(z, (4, 3))}
# each view keeps elements that share memory (torch raises on the write: checked in the test)
_VIEW = {
    "__getitem__": ((1, 3), (4, 3), lambda a: a[1:]), "view": ((1, 3), (4, 3), lambda a: a.view(2, 2, 3)),
    "view_as": ((1, 3), (4, 3), lambda a: a.view_as(torch.empty(2, 2, 3))),
    "reshape": ((1, 3), (4, 3), lambda a: a.reshape(2, 2, 3)), "narrow": ((1, 3), (4, 3), lambda a: a.narrow(0, 1, 2)),
    "select": ((1, 3), (4, 3), lambda a: a.select(1, 0)), "t": ((1, 3), (4, 3), lambda a: a.t()),
    "transpose": ((1, 3), (4, 3), lambda a: a.transpose(0, 1)), "permute": ((1, 3), (4, 3), lambda a: a.permute(1, 0)),
    "unsqueeze": ((1, 3), (4, 3), lambda a: a.unsqueeze(0)), "squeeze": ((1, 1, 3), (4, 1, 3), lambda a: a.squeeze(1)),
    "flatten": ((1, 1, 3), (4, 1, 3), lambda a: a.flatten(1)),
    "unflatten": ((1, 3), (4, 3), lambda a: a.unflatten(0, (2, 2))),
}


def _write_into_expanded(base, expand, view):
    lin = nn.Linear(3, 3)

    def step():
        acc = expand(torch.zeros(*base))  # L:ov_expand
        part = view(acc)  # L:ov_view
        part.add_(lin(torch.randn(3)).sum())
        acc.sum().backward()

    return step


@pytest.mark.parametrize("op", sorted(_EXPAND))
def test_a_write_through_a_view_of_each_expanding_op_names_the_expand(op):
    f, _ = _run_failing(_write_into_expanded((1, 3), _EXPAND[op], lambda a: a[1:]), _OVERLAP)
    assert f.cause == "inplace_on_expanded" and M.site_hits(f.site, "ov_expand"), (op, f)


@pytest.mark.parametrize("op", sorted(_VIEW))
def test_a_write_through_each_view_of_an_expanded_tensor_names_the_expand(op):
    base, shape, view = _VIEW[op]
    f, _ = _run_failing(_write_into_expanded(base, lambda z: z.expand(*shape), view), _OVERLAP)
    assert f.cause == "inplace_on_expanded" and M.site_hits(f.site, "ov_expand"), (op, f)


# --- common._VALUE_KEEPING / _ESCAPES: a detached value that leaves torch through NumPy, item() or tolist() -------
# (`cuda` needs a GPU, and `cpu` of a CPU tensor returns the tensor itself; `numpy` is itself the escape, found
# before the table is read)

_KEEP = {
    "to": lambda d: d.to(torch.float64), "clone": lambda d: d.clone(),
    "contiguous": lambda d: d.t().contiguous(), "float": lambda d: d.double().float(), "double": lambda d: d.double(),
    "half": lambda d: d.half(), "view": lambda d: d.view(-1), "reshape": lambda d: d.reshape(-1),
    "flatten": lambda d: d.flatten(), "squeeze": lambda d: d.unsqueeze(0).squeeze(0),
    "unsqueeze": lambda d: d.unsqueeze(0), "permute": lambda d: d.permute(1, 0), "transpose": lambda d: d.transpose(0, 1),
    "t": lambda d: d.t(), "T": lambda d: d.T, "data": lambda d: d.data, "detach": lambda d: d.detach(),
    "type": lambda d: d.type(torch.float64), "view_as": lambda d: d.view_as(d), "expand": lambda d: d.expand(2, 4, 3),
    "__getitem__": lambda d: d[1:],
}


def _keeps_values(op, d):
    """torch: every element of op(d) is an element of d (in op(d)'s dtype): the op moves values, computes nothing."""
    out = _KEEP[op](d)
    return set(out.double().flatten().tolist()) <= set(d.to(out.dtype).double().flatten().tolist())


@pytest.mark.parametrize("op", sorted(_KEEP))
def test_a_detached_value_passed_on_unchanged_to_numpy_is_a_numpy_round_trip(op):
    import numpy as np

    assert _keeps_values(op, torch.randn(4, 3))
    lin = nn.Linear(3, 3)
    with gradscope.trace() as tr:
        h = lin(torch.randn(4, 3))
        arr = np.tanh(_KEEP[op](h.detach()).numpy())  # L:keep_numpy
        loss = torch.from_numpy(arr).float().pow(2).mean() + lin.bias.sum() * 0
        loss.backward()
    assert lin.weight.grad is None
    exp = tr.why(lin.weight)
    assert exp.cause == "numpy_roundtrip" and M.site_hits(exp.site, "keep_numpy"), (op, exp)


_ESCAPE = {"item": lambda d: d.item(), "tolist": lambda d: d.tolist()}


@pytest.mark.parametrize("how", sorted(_ESCAPE))
def test_a_detached_value_that_leaves_torch_as_python_numbers_is_named_by_the_escape(how):
    lin = nn.Linear(3, 1)
    with gradscope.trace() as tr:
        h = lin(torch.randn(1, 3))
        v = _ESCAPE[how](h.detach())  # L:escape_py
        assert not isinstance(v, torch.Tensor)  # (torch: a Python number / list, no tensor, no graph)
        loss = torch.tensor(v, requires_grad=True).sum() * 2 + lin.bias.sum() * 0
        loss.backward()
    assert lin.weight.grad is None
    exp = tr.why(lin.weight)
    assert exp.cause == f"{how}_roundtrip" and M.site_hits(exp.site, "escape_py"), (how, exp)


# --- common._DUNDER_CALLS: float(t) / int(t) / bool(t) / complex(t) name the expression they were given -----------
# (`__index__`: torch calls it only for an integer tensor, which never requires grad: no cut of a gradient)

_PY = {"__float__": float, "__int__": int, "__bool__": bool, "__complex__": complex}


def _to_python(dunder, h):
    if dunder == "__float__":
        return float(h.sum())  # L:py_float
    if dunder == "__int__":
        return int(h.sum())  # L:py_int
    if dunder == "__bool__":
        return bool(h.sum())  # L:py_bool
    return complex(h.sum())  # L:py_complex


@pytest.mark.parametrize("dunder", sorted(_PY))
def test_a_python_number_made_from_an_unnamed_result_names_the_expression(dunder):
    lin = nn.Linear(3, 1)
    with gradscope.trace() as tr:
        v = _to_python(dunder, lin(torch.randn(2, 3)))
        assert type(v) is _PY[dunder]  # (torch: the call gave a Python number: the gradient path ends there)
        loss = torch.tensor(abs(complex(v)), requires_grad=True) * 2 + lin.bias.sum() * 0
        loss.backward()
    assert lin.weight.grad is None
    exp = tr.why(lin.weight)
    assert exp.cause == "item_roundtrip" and M.site_hits(exp.site, "py_" + dunder.strip("_")), (dunder, exp)
    # (the expression as written, not "the value": the quoted line holds it anyway, so the phrase is checked)
    assert "h.sum() became a Python number" in exp.summary, (dunder, exp.summary)


# --- common._PASS_ON: an op whose backward only passes on the inf its saved input came with ----------------------
# log(0) makes -inf inside the step (its value is gone when backward ends); each op below, given that -inf as a
# saved input, is the first node to send a non-finite gradient (to its parameter). The log is named, not the op.
# (The table's view, sum, cat, add... entries cannot be that first node: their backward makes no inf from a finite
# gradient, and they save no input a gradient is computed from.)

_P6 = torch.linspace(-1, 1, 6)
_PASS = {
    "linear": lambda b, p: F.linear(b, p.reshape(2, 3)), "matmul": lambda b, p: torch.matmul(b, p.reshape(3, 2)),
    "mm": lambda b, p: b.mm(p.reshape(3, 2)),
    "bmm": lambda b, p: torch.bmm(b.reshape(2, 4, 3), p.reshape(1, 3, 2).expand(2, 3, 2)),
    "addmm": lambda b, p: torch.addmm(torch.ones(8, 2), b, p.reshape(3, 2)), "mul": lambda b, p: torch.mul(b, p[:3]),
    "conv1d": lambda b, p: F.conv1d(b.reshape(1, 3, 8), p.reshape(2, 3, 1)),
    "conv2d": lambda b, p: F.conv2d(b.reshape(1, 3, 2, 4), p.reshape(2, 3, 1, 1)),
    "conv3d": lambda b, p: F.conv3d(b.reshape(1, 3, 2, 2, 2), p.reshape(2, 3, 1, 1, 1)),
    # (torch.overrides names torch.mm "torch.spmm": the recorder now names it by its own name, so "mm" matches)
    "torch.mm": lambda b, p: torch.mm(b, p.reshape(3, 2)),
}


def _passed_on_program(op):
    net = nn.Linear(3, 3)
    p = nn.Parameter(_P6.clone())

    def step():
        h = net(torch.randn(8, 3))
        bad = torch.log(h - h.detach())  # L:pass_made
        return _PASS[op](bad, p).sum()  # L:pass_op

    return step, p


@pytest.mark.parametrize("op", sorted(_PASS))  # (torch.mm: once named torch.spmm, torch.overrides' name for it)
def test_an_inf_saved_by_each_op_is_named_where_it_was_made(op):
    step, p = _passed_on_program(op)
    with torch.no_grad():
        h = torch.zeros(2)
        assert torch.isneginf(torch.log(h - h)).all()  # (torch: log(0) is -inf)
    with gradscope.trace() as tr:
        step().backward()
    assert not torch.isfinite(p.grad).all()
    exp = tr.why(p)
    assert exp.cause == "nonfinite_gradient" and M.site_hits(exp.site, "pass_made"), (op, exp)


# --- common._NO_SAVE: ops whose backward reads none of their inputs (a write into the input is harmless) --------
# (tests/test_rules_zero.py covers the others; `contiguous` there is applied to a view, and `float` to a float32
# tensor, which float() returns itself; detach/data are cuts, which no backward node runs for)

_NO_READ = {"contiguous": lambda w: (w * 2).t(), "float": lambda w: (w * 2).double()}
_ON = {"contiguous": lambda a: a.contiguous(), "float": lambda a: a.float()}


def _write_into_input(name, write):
    w = nn.Parameter(torch.linspace(-1.5, 1.5, 6).reshape(2, 3))
    a = _NO_READ[name](w)
    s = _ON[name](a)
    assert s.data_ptr() != a.data_ptr()  # (torch: a copy, not the tensor itself)
    if write:
        a.data.mul_(0.5).add_(0.1)  # L:no_read_write
    c = torch.linspace(1, 2, s.numel()).reshape(s.shape).to(s.dtype)
    (s * c).sum().backward()
    return w


@pytest.mark.parametrize("name", sorted(_NO_READ))
def test_a_write_into_the_input_of_a_copy_whose_backward_reads_nothing_is_not_a_corruption(name):
    assert torch.equal(_write_into_input(name, False).grad, _write_into_input(name, True).grad)
    with gradscope.trace() as tr:
        w = _write_into_input(name, True)
    assert tr.why(w).cause == "ok", (name, tr.why(w))


# --- common._PARAMETRIZERS: a library call that moved a module's weight into new Parameters ------------------------
# (torch.nn.utils.parametrizations.weight_norm replaces the weight by original0/original1. spectral_norm,
# register_parametrization and orthogonal keep the old Parameter object as `original`, which still gets its
# gradient: nothing to explain; the old torch.nn.utils.weight_norm runs no grad-mode region the table is read for)

def test_a_weight_moved_into_new_parameters_by_weight_norm_after_the_optimizer_was_built_is_recreated():
    from torch.nn.utils import parametrizations

    def run():
        lin = nn.Linear(3, 3)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        old = lin.weight
        parametrizations.weight_norm(lin)  # L:param_weight_norm
        lin(torch.randn(2, 3)).sum().backward()
        opt.step()
        return lin, old

    lin, old = run()
    assert old.grad is None and all(p is not old for p in lin.parameters())  # (torch: the old weight left the model)
    with gradscope.trace() as tr:
        lin, old = run()
    exp = tr.why(old)
    assert exp.cause == "param_recreated" and M.site_hits(exp.site, "param_weight_norm"), exp


# --- common._SQUASHING: an op that turns a masked inf into a finite value (the mask is not where a nan came from) --
# (tests/test_rules_nonfinite.py covers softmax, sigmoid and exp, and exp_/sigmoid_ as a known gap. log_softmax is
# in the table although torch's log_softmax keeps a masked -inf as -inf: see the report)

def test_a_plus_inf_mask_under_softmin_is_not_where_the_log_of_a_masked_action_went_non_finite():
    policy = nn.Linear(4, 3)
    legal = torch.tensor([[True, True, False], [True, False, True]])

    def loss_of(s, a):
        probs = F.softmin(policy(s).masked_fill(~legal, float("inf")), -1)
        return -torch.log(probs.gather(1, a[:, None]).squeeze(1)).mean()  # L:sq_log_softmin

    with torch.no_grad():  # (torch: softmin makes the +inf entries exactly 0, the others finite)
        p = F.softmin(torch.randn(2, 3).masked_fill(~legal, float("inf")), -1)
        assert torch.isfinite(p).all() and (p[~legal] == 0).all()
    tr = gradscope.trace()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="returned nan values"):
            with tr:
                with torch.autograd.detect_anomaly():
                    loss_of(torch.randn(2, 4), torch.tensor([2, 1])).backward()
    f = tr.failure
    assert f.cause == "nonfinite_gradient" and M.site_hits(f.site, "sq_log_softmin"), f
    assert "masked_fill" not in f.summary, f.summary


_KEEP_MASK = torch.tensor([True, True, False, True])


def _squash_then_log0(name, q):
    def step():
        s = q(torch.randn(2, 3, 4))
        if name == "logsumexp":
            out = torch.logsumexp(s.masked_fill(~_KEEP_MASK, float("-inf")), -1)
        else:
            bias = torch.zeros(3, 3).masked_fill(~_KEEP_MASK[:3], float("-inf"))
            out = F.scaled_dot_product_attention(s, s, s, attn_mask=bias)
        assert torch.isfinite(out).all()  # (torch: the masked -inf is gone after the op)
        return torch.log(out - out.detach()).sum()  # L:sq_log0

    return step


@pytest.mark.parametrize("name", ["logsumexp", "scaled_dot_product_attention"])
def test_a_minus_inf_mask_that_the_op_absorbs_is_not_named_for_a_later_log_of_zero(name):
    q = nn.Linear(4, 4)
    with gradscope.trace() as tr:
        _squash_then_log0(name, q)().backward()
    assert not torch.isfinite(q.weight.grad).all()  # (torch: log(0) made the gradient non-finite)
    exp = tr.why(q.weight)
    assert exp.cause == "nonfinite_gradient" and M.site_hits(exp.site, "sq_log0"), (name, exp)


# --- common._NOT_FORWARD / _NOT_FLOW: calls on a parameter that are no use of it in the forward -------------------
# (an initialisation, a dtype round trip of the model, requires_grad_(), a tensor hook on a layer the forward never
# calls: the parameter is still unused, named where the layer was made)

class _WithSpare(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 1)
        self.spare = nn.Linear(3, 1)  # L:spare_layer

    def forward(self, x):
        return self.body(x)


_NOT_A_USE = {
    "init": lambda net: nn.init.normal_(net.spare.weight),
    "setup": lambda net: net.double().float(),
    "requires_grad": lambda net: net.spare.weight.requires_grad_(True),
    "hook": lambda net: net.spare.weight.register_hook(lambda g: g),
}


def _spare_program(what):
    net = _WithSpare()
    _NOT_A_USE[what](net)
    net(torch.randn(2, 3)).sum().backward()
    return net


@pytest.mark.parametrize("what", sorted(_NOT_A_USE))
def test_a_call_on_a_parameter_outside_the_forward_is_not_a_use_of_it(what):
    net = _spare_program(what)
    assert net.spare.weight.grad is None and net.body.weight.grad is not None  # (torch: the loss never read it)
    with gradscope.trace() as tr:
        net = _spare_program(what)
    exp = tr.why(net.spare.weight)
    assert exp.cause == "unused_parameter" and M.site_hits(exp.site, "spare_layer"), (what, exp)


# --- common._EXPLICIT_CUTS: one cut the user wrote, run on several tensors (a loop): all of them are named ---------
# (`numpy` cannot be such a cut: torch refuses numpy() of a tensor that requires grad)

_LOOP_CAUSE = {"detach": "detach", "data": "data_attr", "item": "item_roundtrip", "tolist": "tolist_roundtrip",
               "rewrap": "tensor_rewrap"}


def _cut(kind, t):
    if kind == "detach":
        return t.detach()  # L:loop_detach
    if kind == "data":
        return t.data  # L:loop_data
    if kind == "item":
        return torch.tensor(t.item())  # L:loop_item
    if kind == "tolist":
        return torch.tensor(t.tolist())  # L:loop_tolist
    return torch.tensor(t)  # L:loop_rewrap


def _cut_in_a_loop(kind):
    layers = [nn.Linear(3, 1) for _ in range(3)]
    x = torch.randn(1, 3)
    outs = [_cut(kind, layer(x)) for layer in layers]
    assert not any(o.requires_grad for o in outs)  # (torch: each of the three results is cut off)
    torch.stack(outs).sum().backward()


@pytest.mark.parametrize("kind", sorted(_LOOP_CAUSE))
def test_a_cut_run_on_several_tensors_in_a_loop_names_them_all(kind):
    import re

    f, _ = _run_failing(lambda: _cut_in_a_loop(kind), "does not require grad and does not have a grad_fn")
    assert f.cause == _LOOP_CAUSE[kind] and M.site_hits(f.site, f"loop_{kind}"), (kind, f)
    assert re.search(r"\b3 (times|tensors)\b", f.summary), (kind, f.summary)


# --- rules_raised.RAISED: the view-of-a-leaf message is told apart from the plain leaf one -----------------------
# (its message holds the leaf message, so without its own entry the leaf entry matches it: same cause and line, the
# wording of a write into the whole leaf. tests/test_error_catalogue.py checks the cause and line of every entry)

def test_an_in_place_write_into_a_slice_of_a_parameter_is_told_as_a_write_into_a_view():
    emb = nn.Embedding(5, 3)

    def step():
        emb.weight[0] = 0  # L:leaf_view_write
        emb(torch.tensor([1, 2])).sum().backward()

    f, msg = _run_failing(step, "a view of a leaf Variable that requires grad is being used in an in-place")
    assert f.cause == "leaf_inplace" and M.site_hits(f.site, "leaf_view_write"), f
    assert "view (a slice) of" in f.summary, f.summary
