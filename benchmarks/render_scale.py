"""How fast the renderers are on a big step (not a test).

Builds a 10,000-op trace by hand (pure data, no torch: a stack of 18-op transformer-ish
blocks -- 555 of them for 10k ops, 12 parameters each, ~6,700 parameters in all -- with
nested module paths, one harmful ``.detach()`` in block 30 that starves the 361 parameters
before it, and a benign ``.item()`` every 10 blocks). The StepSummary is built by hand
too (no diagnosis runs). Then it times

* ``print_report(data, summary)`` to a null console      (target < 2 s)
* ``build_graph(data, summary).source`` (collapsed view) (target < 5 s)
* ``build_graph(data, summary, collapse=False, max_nodes=150).source`` for reference

Run: ``python benchmarks/render_scale.py [n_ops]``.
"""
from __future__ import annotations

import io
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rich.console import Console  # noqa: E402

from gradscope.core.explanation import Explanation  # noqa: E402
from gradscope.core.explanation import ParamStatus
from gradscope.core.explanation import PathStep
from gradscope.core.explanation import StepSummary
from gradscope.graph import build_graph  # noqa: E402
from gradscope.core.model import BackwardRecord  # noqa: E402
from gradscope.core.model import Event
from gradscope.core.model import GradInfo
from gradscope.core.model import Site
from gradscope.core.model import TensorInfo
from gradscope.core.model import TensorRef
from gradscope.core.model import TraceData
from gradscope.render.report import print_report  # noqa: E402

TARGET_REPORT_S = 2.0
TARGET_DOT_S = 5.0

_OPS = ["torch.nn.functional.layer_norm", "torch.nn.functional.linear", "torch.Tensor.view", "torch.Tensor.transpose",
        "torch.matmul", "torch.Tensor.__truediv__", "torch.softmax", "torch.matmul", "torch.Tensor.transpose",
        "torch.Tensor.reshape", "torch.nn.functional.linear", "torch.Tensor.__add__",
        "torch.nn.functional.layer_norm", "torch.nn.functional.linear", "torch.nn.functional.gelu",
        "torch.nn.functional.linear", "torch.Tensor.__add__", "torch.nn.functional.dropout"]
_SUB = ["ln1", "attn.qkv", "attn", "attn", "attn", "attn", "attn", "attn", "attn", "attn", "attn.proj", "",
        "ln2", "mlp.fc1", "mlp", "mlp.fc2", "", "mlp"]


def build(n_ops: int = 10_000, cut_block: int = 30):
    events: list = []
    tensors: dict = {}

    def tensor(shape, name=None, rg=False, role="tensor", producer=None, grad=None):
        tid = len(tensors)
        tensors[tid] = TensorInfo(tid, tuple(shape), "float32", "cpu", rg, producer is None, producer, name, role,
                                  grad=grad)
        return tid

    def ref(tid):
        t = tensors[tid]
        return TensorRef(tid, t.shape, t.dtype, t.device, t.requires_grad, t.is_leaf)

    def ev(kind, op, site, ins, n_out=1, module=None, cut=None, grad_enabled=True, out_rg=None, verdict=None,
           context="user"):
        idx = len(events)
        irefs = tuple(ref(t) for t in ins)
        rg = out_rg if out_rg is not None else (grad_enabled and any(r.requires_grad for r in irefs))
        outs = tuple(ref(tensor((8, 128, 256), rg=rg, producer=idx)) for _ in range(n_out))
        e = Event(idx, kind, op, site, irefs, outs, grad_enabled, False, module, context, cut, {}, verdict)
        events.append(e)
        return e

    per_block = len(_OPS)
    n_blocks = max(1, (n_ops - 4) // per_block)
    x = tensor((8, 128), name="x")
    emb = tensor((50000, 256), "embed.weight", True, "param")
    params = [emb]
    starved = {emb}
    h = ev("op", "torch.nn.functional.embedding", Site("model.py", 40, "forward", "h = self.embed(x)"), (x, emb),
           module="embed").outputs[0].tid
    cuts = []
    benign = []
    for b in range(n_blocks):
        bp = {}
        for sub in ("ln1", "attn.qkv", "attn.proj", "ln2", "mlp.fc1", "mlp.fc2"):
            for kind in ("weight", "bias"):
                name = f"blocks.{b}.{sub}.{kind}"
                starve = b < cut_block
                t = tensor((256, 256) if kind == "weight" else (256,), name, True, "param",
                           grad=None if starve else GradInfo("received", 0.01 + 0.001 * (b % 7)))
                bp[(sub, kind)] = t
                params.append(t)
                if starve:
                    starved.add(t)
        for k, op in enumerate(_OPS):
            sub = _SUB[k]
            mod = f"blocks.{b}" + (f".{sub}" if sub else "")
            site = Site("model.py", 60 + k, "Block.forward", f"h = step_{k}(h)")
            ins = [h]
            if sub in ("ln1", "attn.qkv", "attn.proj", "ln2", "mlp.fc1", "mlp.fc2"):
                ins += [bp[(sub, "weight")], bp[(sub, "bias")]]
            h = ev("op", op, site, ins, module=mod).outputs[0].tid
            if b == cut_block and k == 11:
                c = ev("cut", "torch.Tensor.detach", Site("model.py", 90, "Block.forward", "h = h.detach()"), [h],
                       module=f"blocks.{b}", cut="detach", out_rg=False, verdict="harmful")
                cuts.append(c)
                h = c.outputs[0].tid
        if b % 10 == 9:  # logging
            benign.append(ev("cut", "torch.Tensor.item", Site("model.py", 95, "forward", "stats.append(h.mean().item())"),
                             [h], n_out=0, cut="item", verdict="benign"))
        events.append(Event(len(events), "module", f"blocks.{b}", None, (), (ref(h),), True, False, "blocks",
                            "user", None, {"class": "Block"}))
    head = tensor((1000, 256), "head.weight", True, "param", grad=GradInfo("received", 0.3))
    params.append(head)
    with_ng = ev("op", "torch.nn.functional.linear", Site("model.py", 99, "forward", "return self.head(h)"),
                 [h, head], module="head")
    loss = ev("op", "torch.nn.functional.cross_entropy", Site("train.py", 20, "step", "loss = F.cross_entropy(out, y)"),
              [with_ng.outputs[0].tid]).outputs[0].tid
    tensors[loss].name = "loss"
    bw = ev("backward", "Tensor.backward", Site("train.py", 21, "step", "loss.backward()"), [loss], n_out=0)
    data = TraceData(events=events, tensors=tensors, backwards=[BackwardRecord(bw.index, "Tensor.backward", (loss,))])
    ps = []
    for tid in params:
        t = tensors[tid]
        bad = tid in starved
        ps.append(ParamStatus(t.name, tid, t.shape, "none" if bad else "received", None if bad else t.grad.norm, True,
                              "detach" if bad else None, cuts[0].site if bad else None))
    exp = Explanation("detach", cuts[0].site, target=f"{len(starved)} parameters",
                      summary=f"{len(starved)} parameters get no gradient: h.detach() at model.py:90 in "
                              f"blocks.{cut_block} cuts everything before it off from the loss.",
                      fix="remove the .detach()", evidence=cuts,
                      path=[PathStep("embed.weight")] + [PathStep(f"block {i}", "op", Site("model.py", 60, "f"))
                                                         for i in range(cut_block)]
                      + [PathStep("detach()", "torch.Tensor.detach", cuts[0].site, False, "cut here"),
                         PathStep("loss")],
                      status="none")
    n_user_ops = sum(1 for e in events if e.kind in ("op", "cut"))
    summary = StepSummary(n_events=len(events), n_ops=n_user_ops, backward_roots=["loss"], n_backward=1,
                          params=ps, harmful_cuts=cuts, benign_cuts=benign, problems=[exp],
                          verdict=f"1 problem: {len(starved)} parameters get no gradient", ok=False)
    return data, summary


def timed(fn, repeat: int = 3):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    n = int(argv[0]) if argv else 10_000
    t0 = time.perf_counter()
    data, summary = build(n)
    n_ops = summary.n_ops
    print(f"trace: {n_ops} user ops, {len(data.events)} events, {len(data.tensors)} tensors, "
          f"{len(summary.params)} parameters (built in {time.perf_counter() - t0:.2f} s)")

    def report():
        con = Console(file=io.StringIO(), width=120, color_system="truecolor", force_terminal=True)
        print_report(data, summary, con)
        return con.file.getvalue()

    def dot():
        g = build_graph(data, summary)
        return g, g.source

    def dot_flat():
        g = build_graph(data, summary, collapse=False)
        return g, g.source

    rows = []
    t, text = timed(report)
    rows.append(("print_report (null console, 120 cols)", t, TARGET_REPORT_S, f"{len(text.splitlines())} lines"))
    t, (g, src) = timed(dot)
    rows.append(("build_graph().source (collapsed)", t, TARGET_DOT_S,
                 f"{len(g.nodes)} nodes, depth={g.depth}, folded={len(g.folded)} runs, {len(src) // 1024} KiB"))
    t, (g2, src2) = timed(dot_flat)
    rows.append(("build_graph(collapse=False).source", t, TARGET_DOT_S,
                 f"{len(g2.nodes)} nodes, {g2.hidden} ops hidden"))
    ok = True
    for name, t, target, note in rows:
        flag = "ok" if t < target else "SLOW"
        ok &= t < target
        print(f"{name:<42} {t:7.3f} s   target < {target:.0f} s  [{flag}]  {note}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
