"""Python work of one traced step, counted in bytecodes: deterministic, for two (or more) checkouts side by side.

    python benchmarks/opcodes.py /path/to/checkout_a /path/to/checkout_b [--steps 10] [--top 25] [--model tiny|bert]

Wall-clock A/B on a shared machine cannot resolve a few percent (plain steps of the same process vary by 10-20%
between runs). The bytecodes a traced step executes do not vary: each checkout runs in its own process
(``PYTHONPATH`` set to it), warms up, then counts, under ``sys.settrace`` with opcode events, every bytecode of
``--steps`` fresh ``with gradscope.trace(): step()`` (enter, record, stop; no query), per function. It prints the
totals per traced step (all Python, gradscope's own) and the functions whose counts differ most between the first
two checkouts (gradscope's functions by name alone, so that a module split or renamed does not show twice). The
numbers measure Python work only: C time (torch's kernels, the C side of hooks) is not in them, so use this next to
benchmarks/trace_fixed_cost.py, never instead of it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import collections, json, sys
import torch, torch.nn as nn, torch.nn.functional as F
torch.set_num_threads(1)
import gradscope
torch.manual_seed(0)
if sys.argv[2] == "bert":
    from transformers import BertConfig, BertForMaskedLM
    m = BertForMaskedLM(BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                                   intermediate_size=128, vocab_size=200, max_position_embeddings=32))
    x = torch.randint(0, 200, (2, 16))
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)

    def step():
        opt.zero_grad(); m(input_ids=x, labels=x).loss.backward(); opt.step()
else:
    m = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)

    def step():
        opt.zero_grad(); F.cross_entropy(m(x), y).backward(); opt.step()
for _ in range(5):
    step()
with gradscope.trace():
    step()
C = collections.Counter()


def tracer(frame, event, arg):
    if event == "call":
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return tracer
    if event == "opcode":
        co = frame.f_code
        fn = co.co_filename
        where = ("gradscope/" + fn.split("gradscope/")[-1]) if "/gradscope/" in fn else (
            "torch" if "/torch/" in fn else "other")
        C[where + ":" + co.co_name] += 1
    return tracer


n = int(sys.argv[1])
sys.settrace(tracer)
for _ in range(n):
    with gradscope.trace():
        step()
sys.settrace(None)
print(json.dumps({k: v / n for k, v in C.items()}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="+")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--model", choices=("tiny", "bert"), default="tiny")
    args = ap.parse_args()
    counts = {}
    for path in args.checkouts:
        env = {**os.environ, "PYTHONPATH": os.path.abspath(path)}
        out = subprocess.run([sys.executable, "-c", CHILD, str(args.steps), args.model], env=env, cwd=path,
                             capture_output=True, text=True, check=True).stdout
        counts[path] = json.loads(out.strip().splitlines()[-1])
    print("| bytecodes per traced step | " + " | ".join(args.checkouts) + " |")
    print("|---|" + "---|" * len(args.checkouts))
    print("| all Python | " + " | ".join(f"{sum(c.values()):.0f}" for c in counts.values()) + " |")
    print("| gradscope's own | " + " | ".join(
        f"{sum(v for k, v in c.items() if k.startswith('gradscope/')):.0f}" for c in counts.values()) + " |")
    if len(args.checkouts) >= 2:
        def by_name(c):  # (gradscope's functions by name alone: modules moved between the checkouts)
            out: dict = {}
            for k, v in c.items():
                area, _, fn = k.rpartition(":")
                key = ("gradscope:" if area.startswith("gradscope/") else area + ":") + fn
                out[key] = out.get(key, 0) + v
            return out

        a, b = by_name(counts[args.checkouts[0]]), by_name(counts[args.checkouts[1]])
        keys = sorted(set(a) | set(b), key=lambda k: -abs(b.get(k, 0) - a.get(k, 0)))
        print(f"\nlargest differences, {args.checkouts[1]} - {args.checkouts[0]}:")
        for k in keys[:args.top]:
            print(f"{b.get(k, 0) - a.get(k, 0):+9.0f}  {a.get(k, 0):8.0f} -> {b.get(k, 0):8.0f}  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
