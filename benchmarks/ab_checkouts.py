"""A/B the recorder's per-step overhead of two gradscope checkouts, in alternating processes.

    python benchmarks/ab_checkouts.py /path/to/checkout_a /path/to/checkout_b [--rounds 6]

Each round runs one process per checkout (order alternating); each process times the same
training steps plain and traced (interleaved, min of many, in process CPU time so that waiting for
a shared CPU does not count), and prints traced/plain (a fresh trace per step).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
import torch, torch.nn as nn, torch.nn.functional as F
torch.set_num_threads(1)
import gradscope

def models():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 14 * 14, 10))
    tfm = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
    return {"mlp": (mlp, torch.randn(32, 64), torch.randint(0, 10, (32,))),
            "cnn": (cnn, torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))),
            "transformer": (tfm, torch.randn(4, 8, 32), None)}

def step(m, opt, x, y):
    opt.zero_grad()
    out = m(x)
    loss = F.cross_entropy(out, y) if y is not None else out.pow(2).mean()
    loss.backward()
    opt.step()

res = {}
for name, (m, x, y) in models().items():
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    for _ in range(5):
        step(m, opt, x, y)
    plain, traced = [], []
    for _ in range(int(sys.argv[1])):
        t0 = time.process_time(); step(m, opt, x, y); plain.append(time.process_time() - t0)
        t0 = time.process_time()
        with gradscope.trace():
            step(m, opt, x, y)
        traced.append(time.process_time() - t0)
    res[name] = min(traced) / min(plain)
print(json.dumps(res))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    runs: dict = {args.a: [], args.b: []}
    for r in range(args.rounds):
        for path in ((args.a, args.b) if r % 2 == 0 else (args.b, args.a)):
            env = {**os.environ, "PYTHONPATH": path}
            out = subprocess.run([sys.executable, "-c", CHILD, str(args.steps)], env=env, cwd=path,
                                 capture_output=True, text=True, check=True).stdout
            runs[path].append(json.loads(out.strip().splitlines()[-1]))
    names = list(runs[args.a][0])
    print(f"| model | {args.a} traced/plain (min, median of {args.rounds}) | {args.b} | b/a |")
    print("|---|---|---|---|")
    for n in names:
        a = [x[n] for x in runs[args.a]]
        b = [x[n] for x in runs[args.b]]
        print(f"| {n} | {min(a):.3f}x, {statistics.median(a):.3f}x | {min(b):.3f}x, {statistics.median(b):.3f}x "
              f"| {statistics.median(b) / statistics.median(a):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
