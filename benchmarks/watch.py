#!/usr/bin/env python3
"""What does ``gradscope.watch()`` cost over a long run, and does its memory stay flat?

Not a test: a benchmark that prints a markdown report. Run from the repo root:

    python benchmarks/watch.py                # >= 500 steps per model (a few minutes)
    python benchmarks/watch.py --quick        # 120 steps per model, a rough pass
    python benchmarks/watch.py --threads 2    # let torch use both cores

Method. Three real-model training steps (an LSTM language model, a small GPT, a ResNet-style
CNN), each: forward, cross entropy, backward, clip_grad_norm_, AdamW.step, zero_grad. Plain and
watched runs alternate in blocks of ``--block`` steps on the same model and optimizer (so both
see the same data sizes and warm caches); the watch is started for each watched block and
stopped after it. The reported ratio is the median over blocks of (watched block time / the
plain block next to it), with the interquartile range: amortized overhead per step.

requires_grad writes: while a watch runs, a write to an nn.Parameter's requires_grad goes through
the watch's class attributes (to name the line that froze it). The cost per parameter write, plain
and watched, for a write that changes the flag (a GAN toggling its discriminator every step) and one
that does not; reading the flag runs PyTorch's C getter either way.

Memory: tracemalloc's retained Python allocations made by gradscope's code for one watch over 10,
100, 1000 and 3000 steps of the CNN (the history is bounded: it must not grow with the step count).
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import tracemalloc

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gradscope  # noqa: E402


class LSTMLM(nn.Module):
    def __init__(self, vocab=2000, emb=128, hidden=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x):
        h, _ = self.rnn(self.embed(x))
        return self.out(h)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=2000, d=128, heads=4, layers=4, ctx=64):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, idx):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t))
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)
        for b in self.blocks:
            x = b(x, mask)
        return self.head(self.ln_f(x))


class ResBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.short(x))


class ResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.layers = nn.Sequential(ResBlock(16, 16, 1), ResBlock(16, 32, 2), ResBlock(32, 64, 2))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.layers(self.stem(x)), 1).flatten(1))


def lstm_case():
    model = LSTMLM()
    x = torch.randint(0, 2000, (8, 32))
    return model, x, lambda out: F.cross_entropy(out.reshape(-1, 2000), x.roll(-1, 1).reshape(-1))


def gpt_case():
    model = GPT()
    x = torch.randint(0, 2000, (8, 64))
    return model, x, lambda out: F.cross_entropy(out.reshape(-1, 2000), x.roll(-1, 1).reshape(-1))


def cnn_case():
    model = ResNet()
    x, y = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
    return model, x, lambda out: F.cross_entropy(out, y)


CASES = {"LSTM LM": lstm_case, "small GPT": gpt_case, "ResNet CNN": cnn_case}


def steps(model, opt, x, loss_fn, n):
    for _ in range(n):
        loss = loss_fn(model(x))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()


def overhead(case, total, block):
    torch.manual_seed(0)
    model, x, loss_fn = case()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    steps(model, opt, x, loss_fn, 3)  # warm up
    ratios, plain_t, watched_t, alerts = [], 0.0, 0.0, 0
    for _ in range(max(1, total // block)):
        t0 = time.perf_counter()
        steps(model, opt, x, loss_fn, block)
        t1 = time.perf_counter()
        with gradscope.watch(model, opt) as w:
            steps(model, opt, x, loss_fn, block)
        t2 = time.perf_counter()
        alerts += len(w.alerts)
        ratios.append((t2 - t1) / (t1 - t0))
        plain_t += t1 - t0
        watched_t += t2 - t1
    q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else [ratios[0]] * 3
    n = max(1, total // block) * block
    return statistics.median(ratios), q[0], q[2], plain_t / n * 1e3, watched_t / n * 1e3, alerts


def memory(n_steps):
    torch.manual_seed(0)
    model, x, loss_fn = cnn_case()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    steps(model, opt, x, loss_fn, 2)
    tracemalloc.start()
    base = tracemalloc.take_snapshot()
    w = gradscope.watch(model, opt)
    with w:
        steps(model, opt, x, loss_fn, n_steps)
    snap = tracemalloc.take_snapshot()
    tracemalloc.stop()
    # what gradscope's own code allocated and still holds (the training step's allocations are not
    # the watch's: PyTorch and the optimizer keep caches of their own)
    only = [tracemalloc.Filter(True, "*gradscope*")]
    held = sum(s.size_diff for s in snap.filter_traces(only).compare_to(base.filter_traces(only), "filename"))
    assert w.steps == n_steps
    return held


def flag_writes(rounds: int = 50):
    """Microseconds per parameter write of requires_grad by Module.requires_grad_ over the small GPT,
    plain and watched: {"freeze": (plain, watched), "unfreeze": ..., "no-op": ...} (best of ``rounds``)."""
    torch.manual_seed(0)
    model = GPT()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    n = sum(1 for _ in model.parameters())

    def measure():
        best = {"freeze": math.inf, "unfreeze": math.inf, "no-op": math.inf}
        for _ in range(rounds):
            t0 = time.perf_counter()
            model.requires_grad_(False)
            t1 = time.perf_counter()
            model.requires_grad_(True)
            t2 = time.perf_counter()
            model.requires_grad_(True)
            t3 = time.perf_counter()
            for k, dt in zip(best, (t1 - t0, t2 - t1, t3 - t2)):
                best[k] = min(best[k], dt / n * 1e6)
        return best

    plain = measure()
    with gradscope.watch(model, opt):
        watched = measure()
    return n, {k: (plain[k], watched[k]) for k in plain}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="120 steps per model")
    ap.add_argument("--steps", type=int, default=500, help="steps per variant and model (default 500)")
    ap.add_argument("--block", type=int, default=25, help="steps per plain/watched block (default 25)")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    total = 120 if a.quick else a.steps
    print(f"# gradscope.watch overhead ({total} steps per variant and model, blocks of {a.block}, "
          f"torch {torch.__version__}, {a.threads} thread{'s' if a.threads > 1 else ''})\n")
    print("| model | plain ms/step | watched ms/step | ratio (median) | IQR | alerts |")
    print("|---|---|---|---|---|---|")
    for name, case in CASES.items():
        med, q1, q3, pt, wt, alerts = overhead(case, total, a.block)
        print(f"| {name} | {pt:.2f} | {wt:.2f} | {med:.3f}x | {q1:.3f}-{q3:.3f} | {alerts} |", flush=True)
    n, writes = flag_writes()
    print(f"\n| requires_grad write (Module.requires_grad_ over {n} parameters) | plain µs/param | watched µs/param |")
    print("|---|---|---|")
    for k, (p, w) in writes.items():
        print(f"| {k} | {p:.2f} | {w:.2f} |", flush=True)
    print("\n| steps watched | Python memory held by the watch |")
    print("|---|---|")
    for n in (10, 100, 1000, 3000):
        print(f"| {n} | {memory(n) / 1024:.1f} KiB |", flush=True)
    print("\n(correct training runs: the alerts column must be 0.)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
