"""Peak memory of one training step, plain vs inside ``gradscope.trace()`` (GPT-2-sized by default).

Not a test: a benchmark that prints a markdown table. Run from the repo root:

    python benchmarks/memory.py                  # 12 layers, d=768, batch 2 x 128 tokens (~1-2 min)
    python benchmarks/memory.py --layers 2 --d 256   # a quick pass

Method. tracemalloc does not see tensor storage (torch's CPU allocator calls malloc directly), so
the figure is the process's resident set: each variant runs in its own fresh process, does one
warm-up step (same variant), then resets the kernel's peak-RSS mark (``/proc/self/clear_refs``
= 5) and reads ``VmHWM`` after the measured step: peak RSS during the step minus RSS just
before it. A step: zero_grad(set_to_none), forward of a GPT-2-shaped decoder (token + position
embeddings, pre-norm TransformerEncoderLayers with a causal mask, tied LM head), cross-entropy,
backward, SGD step. (That AccumulateGrad still steals gradient buffers rather than copying them
is checked by tests/test_torch_transparency.py; a copy per leaf would show here as memory.)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys


def _rss_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def _reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def child(args):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import contextlib

    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    torch.set_num_threads(1)

    class GPT(nn.Module):
        def __init__(self, vocab, d, layers, heads, ctx):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(ctx, d)
            self.blocks = nn.ModuleList(
                nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True) for _ in range(layers))
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)
            self.head.weight = self.tok.weight

        def forward(self, idx):
            t = idx.shape[1]
            h = self.tok(idx) + self.pos(torch.arange(t))
            mask = nn.Transformer.generate_square_subsequent_mask(t)
            for b in self.blocks:
                h = b(h, src_mask=mask, is_causal=True)
            return self.head(self.ln(h))

    model = GPT(args.vocab, args.d, args.layers, max(1, args.d // 64), args.seq)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randint(0, args.vocab, (args.batch, args.seq))
    y = torch.randint(0, args.vocab, (args.batch, args.seq))

    if args.child == "traced":
        import gradscope

        ctx = gradscope.trace
    else:
        ctx = contextlib.nullcontext

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        loss.backward()
        opt.step()

    with ctx():
        step()  # warm-up: the allocator's pages, lazy inits
    before = _rss_kb("VmRSS")
    _reset_peak()
    with ctx() as tr:
        step()
    peak = _rss_kb("VmHWM")
    out = {"variant": args.child, "rss_before_mb": before / 1024, "peak_mb": peak / 1024,
           "step_peak_mb": (peak - before) / 1024,
           "params_m": sum(p.numel() for p in model.parameters()) / 1e6,
           "events": len(tr.events) if tr is not None else 0}
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--d", type=int, default=768)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--reps", type=int, default=1, help="fresh processes per variant (the median is reported)")
    ap.add_argument("--child", choices=("plain", "traced"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    if not os.path.exists("/proc/self/clear_refs"):
        sys.exit("needs Linux /proc (peak RSS reset)")
    rows = {}
    for _ in range(args.reps):
        for v in ("plain", "traced"):
            cmd = [sys.executable, os.path.abspath(__file__), "--child", v] + [
                f"--{k}={getattr(args, k)}" for k in ("layers", "d", "seq", "batch", "vocab")]
            r = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if r.returncode != 0:
                sys.exit(f"{v} run failed:\n{r.stderr[-3000:]}")
            rows.setdefault(v, []).append(json.loads(r.stdout.strip().splitlines()[-1]))

    def med(v, k):
        xs = sorted(x[k] for x in rows[v])
        return xs[len(xs) // 2]

    p, t = med("plain", "step_peak_mb"), med("traced", "step_peak_mb")
    first = rows["plain"][0]
    print(f"## peak memory of one training step ({args.layers} layers, d={args.d}, batch {args.batch} x {args.seq} "
          f"tokens, {first['params_m']:.1f}M parameters)\n")
    print("| variant | RSS before step MB | peak during step MB (above before) | events |")
    print("|---|---|---|---|")
    for v in ("plain", "traced"):
        print(f"| {v} | {med(v, 'rss_before_mb'):.0f} | {med(v, 'peak_mb'):.0f} ({med(v, 'step_peak_mb'):.0f}) | "
              f"{rows[v][0]['events']} |")
    print(f"\ntraced / plain, step peak above the RSS before it: {t / p:.3f}x"
          f"  (whole-process peak: {med('traced', 'peak_mb') / med('plain', 'peak_mb'):.3f}x)")


if __name__ == "__main__":
    main()
