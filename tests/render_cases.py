"""Hand-built traces for the renderer tests (pure data, no torch, deterministic).

Each case returns ``(TraceData, StepSummary)`` shaped like what ``gradscope.trace()``
records and ``diagnosis.summarize()`` returns, with stable, relative file names
(``model.py``, ``train.py``) so golden files do not depend on the machine.
"""
from __future__ import annotations

from gradscope.core.explanation import Explanation
from gradscope.core.explanation import ParamStatus
from gradscope.core.explanation import PathStep
from gradscope.core.explanation import StepSummary
from gradscope.core.model import (BackwardRecord, Event, ExceptionInfo, GradInfo, Site, TensorInfo, TensorRef,
                             TraceData)

MODEL_PY = "model.py"
TRAIN_PY = "train.py"


class Builder:
    """A tiny helper that records events and tensors the way the recorder does."""

    def __init__(self) -> None:
        self.events: list = []
        self.tensors: dict = {}
        self.backwards: list = []

    def tensor(self, shape=(), *, name=None, rg=False, role="tensor", grad=None, producer=None) -> int:
        tid = len(self.tensors)
        self.tensors[tid] = TensorInfo(tid, tuple(shape), "float32", "cpu", rg, producer is None,
                                       producer=producer, name=name, role=role, grad=grad)
        return tid

    def param(self, name, shape, status="received", norm=0.5, rg=True) -> int:
        grad = None if status in ("none", "frozen") else GradInfo(status, norm if status == "received" else
                                                                   (0.0 if status == "zero" else float("nan")), None)
        return self.tensor(shape, name=name, rg=rg, role="param", grad=grad)

    def ref(self, tid) -> TensorRef:
        t = self.tensors[tid]
        return TensorRef(tid, t.shape, t.dtype, t.device, t.requires_grad, t.is_leaf)

    def ev(self, kind, op, site, inputs=(), outputs=(), *, module=None, cut=None, grad_enabled=True,
           inference_mode=False, context="user", detail=None, verdict=None, out_shape=None, out_rg=None) -> Event:
        """Record an event; ``outputs`` may hold existing tids, or ``"new"`` for a fresh tensor
        whose requires_grad is ``out_rg`` (default: any input requires grad and grad is on)."""
        idx = len(self.events)
        ins = tuple(self.ref(t) for t in inputs)
        outs = []
        for o in outputs:
            if o == "new":
                rg = out_rg if out_rg is not None else (grad_enabled and not inference_mode
                                                        and any(r.requires_grad for r in ins))
                shape = out_shape if out_shape is not None else (ins[0].shape if ins else ())
                o = self.tensor(shape, rg=rg, producer=idx)
                self.tensors[o].is_leaf = not rg
            outs.append(self.ref(o))
        e = Event(idx, kind, op, site, ins, tuple(outs), grad_enabled, inference_mode, module, context, cut,
                  dict(detail or {}), verdict)
        self.events.append(e)
        return e

    def out(self, e: Event, i: int = 0) -> int:
        return e.outputs[i].tid

    def data(self, **kw) -> TraceData:
        return TraceData(events=self.events, tensors=self.tensors, backwards=self.backwards, **kw)


def site(file, line, code, fn="forward") -> Site:
    return Site(file, line, fn, code)


def pstatus(b: Builder, tid, cause=None, site_=None, trainable=True) -> ParamStatus:
    t = b.tensors[tid]
    if not t.requires_grad:
        status, norm = "frozen", None
    elif t.grad is None:
        status, norm = "none", None
    else:
        status, norm = t.grad.status, t.grad.norm
    return ParamStatus(t.name, tid, t.shape, status, norm, trainable, cause, site_)


# ----------------------------------------------------------------------------- cases
def numpy_mlp():
    """fc1 -> relu -> .detach().numpy() -> torch.from_numpy -> fc2 -> mse_loss; loss.item() for
    logging (benign); one SGD step. fc1.* get no gradient (cause numpy_roundtrip)."""
    b = Builder()
    s24 = site(MODEL_PY, 24, "h = torch.relu(self.fc1(x))")
    s25 = site(MODEL_PY, 25, "h = torch.from_numpy(h.detach().numpy().clip(0.0, 1.0))")
    s26 = site(MODEL_PY, 26, "return self.fc2(h)")
    s40 = site(TRAIN_PY, 40, "loss = F.mse_loss(model(x), y)", "train_step")
    s41 = site(TRAIN_PY, 41, "loss.backward()", "train_step")
    s42 = site(TRAIN_PY, 42, 'print(f"loss {loss.item():.3f}")', "train_step")
    s43 = site(TRAIN_PY, 43, "opt.step()", "train_step")
    x = b.tensor((16, 4), name="x")
    w1 = b.param("fc1.weight", (8, 4), "none")
    b1 = b.param("fc1.bias", (8,), "none")
    lin1 = b.ev("op", "torch.nn.functional.linear", s24, (x, w1, b1), ("new",), module="fc1", out_shape=(16, 8))
    b.ev("module", "fc1", s24, (x,), (b.out(lin1),), module="", detail={"class": "Linear"})
    relu = b.ev("op", "torch.relu", s24, (b.out(lin1),), ("new",), module="")
    det = b.ev("cut", "torch.Tensor.detach", s25, (b.out(relu),), ("new",), module="", cut="detach",
               verdict="harmful", out_rg=False)
    npy = b.ev("cut", "torch.Tensor.numpy", s25, (b.out(det),), (), module="", cut="numpy", verdict="harmful")
    ext = b.ev("external", "torch.from_numpy", s25, (), ("new",), module="fc2", out_shape=(16, 8), out_rg=False,
               detail={"links": [npy.index], "inferred": "memory"})
    w2 = b.param("fc2.weight", (1, 8), "received", 0.5764)
    b2 = b.param("fc2.bias", (1,), "received", 0.6189)
    lin2 = b.ev("op", "torch.nn.functional.linear", s26, (b.out(ext), w2, b2), ("new",), module="fc2",
                out_shape=(16, 1))
    b.ev("module", "fc2", s26, (b.out(ext),), (b.out(lin2),), module="", detail={"class": "Linear"})
    b.ev("module", "MLP", s40, (x,), (b.out(lin2),), module=None, detail={"class": "MLP"})
    y = b.tensor((16, 1), name="y")
    mse = b.ev("op", "torch.nn.functional.mse_loss", s40, (b.out(lin2), y), ("new",), out_shape=())
    loss = b.out(mse)
    b.tensors[loss].name = "loss"
    bw = b.ev("backward", "Tensor.backward", s41, (loss,), (), detail={"api": "Tensor.backward", "roots": [loss]})
    b.backwards.append(BackwardRecord(bw.index, "Tensor.backward", (loss,)))
    item = b.ev("cut", "torch.Tensor.item", s42, (loss,), (), cut="item", verdict="benign")
    b.ev("optimizer_step", "SGD.step", s43, (), (), detail={"params": [w1, b1, w2, b2]})
    data = b.data()
    path = [
        PathStep("fc1.weight"),
        PathStep("linear", "torch.nn.functional.linear", s24),
        PathStep("relu", "torch.relu", s24),
        PathStep("detach()", "torch.Tensor.detach", s25, flows=False, note="cut here: .detach().numpy()"),
        PathStep("from_numpy", "torch.from_numpy", s25, flows=False, note="no history (inferred by memory)"),
        PathStep("linear", "torch.nn.functional.linear", s26),
        PathStep("mse_loss", "torch.nn.functional.mse_loss", s40),
        PathStep("loss"),
    ]
    exp = Explanation(
        "numpy_roundtrip", s25, target="fc1.weight, fc1.bias",
        summary=("fc1.weight, fc1.bias: .grad is None: h left autograd through NumPy at model.py:25 "
                 "and came back through torch.from_numpy, so backward from `loss` stops there."),
        detail="h.detach().numpy() copies the values out of torch; torch.from_numpy gives a tensor "
               "without history, so nothing before model.py:25 is on the way to the loss.",
        fix="keep the computation in torch: h = h.clamp(0.0, 1.0) instead of the NumPy round trip.",
        path=path, evidence=[det, npy], status="none")
    summary = StepSummary(
        n_events=len(data.events), n_ops=6, backward_roots=["loss"], n_backward=1, n_optimizer_steps=1,
        params=[pstatus(b, w1, "numpy_roundtrip", s25), pstatus(b, b1, "numpy_roundtrip", s25),
                pstatus(b, w2), pstatus(b, b2)],
        harmful_cuts=[det, npy], benign_cuts=[item], problems=[exp], failure=None,
        verdict="1 problem: fc1.weight, fc1.bias get no gradient", ok=False)
    return data, summary


def inplace_failure():
    """sigmoid saves its output; mul_ writes it in place; backward raises."""
    b = Builder()
    s10 = site(MODEL_PY, 10, "h = torch.sigmoid(self.fc1(x))")
    s11 = site(MODEL_PY, 11, "h.mul_(2)")
    s12 = site(MODEL_PY, 12, "return self.fc2(h)")
    s30 = site(TRAIN_PY, 30, "loss = model(x).sum()", "step")
    s31 = site(TRAIN_PY, 31, "loss.backward()", "step")
    x = b.tensor((5, 4), name="x")
    w1 = b.param("fc1.weight", (8, 4), "none")
    b1 = b.param("fc1.bias", (8,), "none")
    lin1 = b.ev("op", "torch.nn.functional.linear", s10, (x, w1, b1), ("new",), module="fc1", out_shape=(5, 8))
    sig = b.ev("op", "torch.sigmoid", s10, (b.out(lin1),), ("new",), module="")
    h = b.out(sig)
    mul = b.ev("inplace", "torch.Tensor.mul_", s11, (h,), (h,), module="",
               detail={"version_before": 0, "version_after": 1, "target": h, "saved": True, "saved_by": sig.index})
    w2 = b.param("fc2.weight", (1, 8), "received", 1.25)
    b2 = b.param("fc2.bias", (1,), "received", 2.0)
    lin2 = b.ev("op", "torch.nn.functional.linear", s12, (h, w2, b2), ("new",), module="fc2", out_shape=(5, 1))
    sm = b.ev("op", "torch.Tensor.sum", s30, (b.out(lin2),), ("new",), out_shape=())
    loss = b.out(sm)
    b.tensors[loss].name = "loss"
    bw = b.ev("backward", "Tensor.backward", s31, (loss,), ())
    msg = ("one of the variables needed for gradient computation has been modified by an inplace operation: "
           "[torch.FloatTensor [5, 8]], which is output 0 of SigmoidBackward0, is at version 1; expected "
           "version 0 instead.")
    b.backwards.append(BackwardRecord(bw.index, "Tensor.backward", (loss,), error=msg))
    data = b.data(exception=ExceptionInfo("RuntimeError", msg, bw.index, s31))
    failure = Explanation(
        "inplace_saved_tensor", s11, target="loss",
        summary="backward failed: h.mul_(2) at model.py:11 overwrote the output of sigmoid (model.py:10), "
                "which sigmoid saved for its backward.",
        detail="sigmoid's gradient is computed from its output; the in-place write changed it before backward ran.",
        fix="write h = h * 2 instead of h.mul_(2) (or clone before the in-place write).",
        path=[PathStep("sigmoid", "torch.sigmoid", s10, note="saved its output here"),
              PathStep("mul_", "torch.Tensor.mul_", s11, flows=False, note="in-place write to the saved tensor")],
        evidence=[sig, mul], status="error")
    summary = StepSummary(
        n_events=len(data.events), n_ops=5, backward_roots=["loss"], n_backward=1, n_optimizer_steps=0,
        params=[pstatus(b, w1, "inplace_saved_tensor", s11), pstatus(b, b1, "inplace_saved_tensor", s11),
                pstatus(b, w2), pstatus(b, b2)],
        harmful_cuts=[], benign_cuts=[], problems=[], failure=failure,
        verdict="backward failed: an in-place write changed a tensor saved for backward", ok=False)
    return data, summary


def frozen_nograd():
    """A frozen encoder run under torch.no_grad() and a trained head: everything is fine."""
    b = Builder()
    s5 = site(MODEL_PY, 5, "with torch.no_grad():")
    s6 = site(MODEL_PY, 6, "f = self.encoder(x)")
    s7 = site(MODEL_PY, 7, "return self.head(f)")
    s20 = site(TRAIN_PY, 20, "loss = F.cross_entropy(model(x), y)", "step")
    s21 = site(TRAIN_PY, 21, "loss.backward()", "step")
    x = b.tensor((8, 16), name="x")
    ew = b.param("encoder.0.weight", (32, 16), "frozen", rg=False)
    eb = b.param("encoder.0.bias", (32,), "frozen", rg=False)
    b.ev("grad_mode", "torch._C._set_grad_enabled", s5, detail={"enabled": False})
    e1 = b.ev("op", "torch.nn.functional.linear", s6, (x, ew, eb), ("new",), module="encoder.0",
              grad_enabled=False, out_shape=(8, 32))
    b.ev("module", "encoder.0", s6, (x,), (b.out(e1),), module="encoder", detail={"class": "Linear"},
         grad_enabled=False)
    e2 = b.ev("op", "torch.relu", s6, (b.out(e1),), ("new",), module="encoder.1", grad_enabled=False)
    b.ev("module", "encoder.1", s6, (b.out(e1),), (b.out(e2),), module="encoder", detail={"class": "ReLU"},
         grad_enabled=False)
    b.ev("module", "encoder", s6, (x,), (b.out(e2),), module="", detail={"class": "Sequential"},
         grad_enabled=False)
    b.ev("grad_mode", "torch._C._set_grad_enabled", s5, detail={"enabled": True})
    hw = b.param("head.weight", (10, 32), "received", 0.8125)
    hb = b.param("head.bias", (10,), "received", 0.125)
    h1 = b.ev("op", "torch.nn.functional.linear", s7, (b.out(e2), hw, hb), ("new",), module="head",
              out_shape=(8, 10))
    b.ev("module", "head", s7, (b.out(e2),), (b.out(h1),), module="", detail={"class": "Linear"})
    y = b.tensor((8,), name="y")
    ce = b.ev("op", "torch.nn.functional.cross_entropy", s20, (b.out(h1), y), ("new",), out_shape=())
    loss = b.out(ce)
    b.tensors[loss].name = "loss"
    bw = b.ev("backward", "Tensor.backward", s21, (loss,), ())
    b.backwards.append(BackwardRecord(bw.index, "Tensor.backward", (loss,)))
    data = b.data()
    summary = StepSummary(
        n_events=len(data.events), n_ops=4, backward_roots=["loss"], n_backward=1, n_optimizer_steps=0,
        params=[pstatus(b, ew, trainable=False), pstatus(b, eb, trainable=False), pstatus(b, hw), pstatus(b, hb)],
        verdict="OK: every trainable parameter got a gradient", ok=True)
    return data, summary


def blocks(n_blocks=12, ops_per_block=6, cut_block=None, starve_params=True):
    """A transformer-ish stack ``blocks.0`` .. ``blocks.{n-1}`` (each ``attn`` + ``mlp``) with
    identical op sequences, then ``head``; ``cut_block`` adds a ``.detach()`` inside that block,
    which starves the blocks before it (and the embedding)."""
    b = Builder()
    x = b.tensor((4, 64), name="x")
    emb = b.param("embed.weight", (64, 64), "none" if (cut_block is not None and starve_params) else "received",
                  0.25)
    se = site(MODEL_PY, 30, "h = self.embed(x)")
    e = b.ev("op", "torch.nn.functional.linear", se, (x, emb), ("new",), module="embed", out_shape=(4, 64))
    b.ev("module", "embed", se, (x,), (b.out(e),), module="", detail={"class": "Linear"})
    h = b.out(e)
    starved = []
    params = [emb]
    for i in range(n_blocks):
        starve = cut_block is not None and i < cut_block and starve_params
        ps = []
        for j, k in enumerate(range(0, ops_per_block, 3)):
            sub = "attn" if k < ops_per_block // 2 else "mlp"
            ps.append(b.param(f"blocks.{i}.{sub}.w{j}", (64, 64), "none" if starve else "received",
                              0.01 * (j + 1)))
        params += ps
        if starve:
            starved += ps
        for k in range(ops_per_block):
            sub = "attn" if k < ops_per_block // 2 else "mlp"
            line = 50 + k
            sk = site(MODEL_PY, line, f"h = self.{sub}_op{k}(h)", "Block.forward")
            p = ps[k // 3]
            op = ("torch.nn.functional.linear", "torch.nn.functional.gelu", "torch.Tensor.add")[k % 3]
            ins = (h, p) if op.endswith("linear") else (h,)
            ev = b.ev("op", op, sk, ins, ("new",), module=f"blocks.{i}.{sub}")
            h = b.out(ev)
            if i == cut_block and k == ops_per_block // 2:
                sc = site(MODEL_PY, 60, "h = h.detach()  # TODO remove", "Block.forward")
                c = b.ev("cut", "torch.Tensor.detach", sc, (h,), ("new",), module=f"blocks.{i}", cut="detach",
                         verdict="harmful", out_rg=False)
                h = b.out(c)
                # the next op gets a fresh requires-grad input through its parameter only
        b.ev("module", f"blocks.{i}", sk, (), (h,), module="blocks", detail={"class": "Block"})
    hw = b.param("head.weight", (10, 64), "received", 0.5)
    sh = site(MODEL_PY, 80, "return self.head(h)")
    hd = b.ev("op", "torch.nn.functional.linear", sh, (h, hw), ("new",), module="head", out_shape=(4, 10))
    params.append(hw)
    st = site(TRAIN_PY, 12, "loss = model(x).pow(2).mean()", "step")
    ls = b.ev("op", "torch.Tensor.mean", st, (b.out(hd),), ("new",), out_shape=())
    loss = b.out(ls)
    b.tensors[loss].name = "loss"
    bw = b.ev("backward", "Tensor.backward", site(TRAIN_PY, 13, "loss.backward()", "step"), (loss,), ())
    b.backwards.append(BackwardRecord(bw.index, "Tensor.backward", (loss,)))
    data = b.data()
    cuts = [ev for ev in data.events if ev.kind == "cut"]
    problems = []
    pstat = []
    for tid in params:
        bad = tid in starved or (tid == emb and cut_block is not None and starve_params)
        pstat.append(pstatus(b, tid, "detach" if bad else None, cuts[0].site if bad and cuts else None))
    if cuts:
        problems.append(Explanation(
            "detach", cuts[0].site, target=f"embed.weight and {len(starved)} block parameters",
            summary=f"{len(starved) + 1} parameters get no gradient: h.detach() at model.py:60 in "
                    f"blocks.{cut_block} cuts everything before it off from the loss.",
            fix="remove the .detach() at model.py:60", evidence=cuts,
            path=[PathStep("embed.weight"), PathStep("detach()", "torch.Tensor.detach", cuts[0].site, False,
                                                      "cut here"), PathStep("loss")], status="none"))
    summary = StepSummary(
        n_events=len(data.events), n_ops=sum(1 for ev in data.events if ev.kind in ("op", "cut")),
        backward_roots=["loss"], n_backward=1, params=pstat, harmful_cuts=cuts, problems=problems,
        verdict=(f"1 problem: {len(starved) + 1} parameters get no gradient" if cuts else
                 "OK: every trainable parameter got a gradient"), ok=not cuts)
    return data, summary


CASES = {
    "numpy_mlp": numpy_mlp,
    "inplace_failure": inplace_failure,
    "frozen_nograd": frozen_nograd,
    "blocks": lambda: blocks(12, 6, cut_block=7),
}
