"""Once ``trace(steps=1)`` has recorded its step, does the rest of the block run at plain speed?

Not a test: a benchmark that prints a markdown table. Run from the repo root:

    python benchmarks/stopping.py            # ~20 s
    python benchmarks/stopping.py --reps 15

Method. One block runs K training steps of an MLP (zero_grad, forward, cross_entropy, backward,
Adam step). Variants, run side by side in shuffled order per repetition:

* ``plain``        - no mode;
* ``empty-mode``   - an empty TorchFunctionMode around the block (what a recorder that stopped
  recording but stayed on the mode stack costs at least);
* ``steps=1``      - ``with gradscope.trace(steps=1):`` around the block.

Only steps 3..K are timed (step 1 is recorded; during step 2 the recorder leaves the mode stack
at the optimizer step and its hooks at the next module call). The ratio is the median over
repetitions of variant / plain within the same repetition.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gradscope


class _Empty(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--steps", type=int, default=40, help="steps per block (K)")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.Adam(model.parameters())
    x, y = torch.randn(16, 64), torch.randint(0, 10, (16,))

    def block(ctx):
        times = []
        with ctx:
            for _ in range(args.steps):
                t = time.perf_counter()
                opt.zero_grad()
                F.cross_entropy(model(x), y).backward()
                opt.step()
                times.append(time.perf_counter() - t)
        return sum(times[2:]) / len(times[2:])

    variants = {"plain": lambda: block(_Null()), "empty-mode": lambda: block(_Empty()),
                "steps=1": lambda: block(gradscope.trace(steps=1))}
    for f in variants.values():
        f()  # warm-up
    res = {k: [] for k in variants}
    for _ in range(args.reps):
        order = list(variants)
        random.shuffle(order)
        for k in order:
            res[k].append(variants[k]())
    print(f"## after the recorded step: ms per step (steps 3..{args.steps} of each block), {args.reps} repetitions\n")
    print("| variant | ms/step (median) | / plain (median of paired ratios) |")
    print("|---|---|---|")
    for k, v in res.items():
        ratio = statistics.median(a / b for a, b in zip(v, res["plain"]))
        print(f"| {k} | {statistics.median(v) * 1000:.3f} | {ratio:.2f}x |")


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    main()
