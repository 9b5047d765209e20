"""The fixed cost of one trace, per phase, for two (or more) gradscope checkouts side by side.

    python benchmarks/trace_fixed_cost.py /path/to/checkout_a /path/to/checkout_b [--rounds 4] [--steps 200]
        [--model tiny|transformer|bert]

A tiny MLP (AdamW, 1 thread) is small enough that a traced step is mostly gradscope's fixed cost:
creating the trace and entering it, the recorded step, leaving it (``stop``), and the first query
(``tr.summary()``, then ``tr.why(p)`` on a parameter). ``--model transformer`` (one
``nn.TransformerEncoderLayer``, whose attention's ``out_proj`` is never called as a module) shows
the cost of the module facts read at stop; ``--model bert`` (a 4-layer HF BertForMaskedLM, hidden
size 128, needs ``transformers``) the costs that grow with the number of parameters and modules. Each checkout runs in its own process (order
alternating per round, ``PYTHONPATH`` set to that checkout alone so that each imports its own copy);
each phase is timed in process CPU time (waiting for a shared CPU does not count), min of
``--steps`` fresh traces, and the table shows the min over rounds, in milliseconds, with the step
ratios traced/plain with no query and with ``tr.summary()`` after each step.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys, time
import torch, torch.nn as nn, torch.nn.functional as F
torch.set_num_threads(1)
import gradscope
clock = time.process_time

torch.manual_seed(0)
if sys.argv[2] == "transformer":
    m = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
    x, y = torch.randn(4, 8, 32), None
    p = m.linear1.weight
elif sys.argv[2] == "bert":
    from transformers import BertConfig, BertForMaskedLM
    m = BertForMaskedLM(BertConfig(num_hidden_layers=4, hidden_size=128, num_attention_heads=4,
                                   intermediate_size=256, vocab_size=1000, max_position_embeddings=64))
    x, y = torch.randint(0, 1000, (2, 32)), "mlm"
    p = m.bert.encoder.layer[0].attention.self.query.weight
else:
    m = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    p = m[0].weight
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)

def step():
    opt.zero_grad()
    if y == "mlm":
        loss = m(input_ids=x, labels=x).loss
    else:
        out = m(x)
        loss = F.cross_entropy(out, y) if y is not None else out.pow(2).mean()
    loss.backward()
    opt.step()

for _ in range(20):
    step()
n = int(sys.argv[1])
t = {k: [] for k in ("plain", "enter", "record", "exit", "summary", "why", "step_noquery", "step_summary")}
for _ in range(n):
    t0 = clock(); step(); t["plain"].append(clock() - t0)
    # one trace, phase by phase
    t0 = clock()
    tr = gradscope.trace()
    tr.__enter__()
    t1 = clock()
    step()
    t2 = clock()
    tr.__exit__(None, None, None)
    t3 = clock()
    tr.summary()
    t4 = clock()
    tr.why(p)
    t5 = clock()
    t["enter"].append(t1 - t0); t["record"].append(t2 - t1); t["exit"].append(t3 - t2)
    t["summary"].append(t4 - t3); t["why"].append(t5 - t4)
    del tr
    # whole traced steps, as a harness would run them
    t0 = clock()
    with gradscope.trace():
        step()
    t["step_noquery"].append(clock() - t0)
    t0 = clock()
    with gradscope.trace() as tr:
        step()
    tr.summary()
    t["step_summary"].append(clock() - t0)
    del tr
print(json.dumps({k: min(v) for k, v in t.items()}))
"""

PHASES = ("plain", "enter", "record", "exit", "summary", "why", "step_noquery", "step_summary")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="+")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--model", choices=("tiny", "transformer", "bert"), default="tiny")
    args = ap.parse_args()
    runs: dict = {c: [] for c in args.checkouts}
    for r in range(args.rounds):
        order = args.checkouts if r % 2 == 0 else args.checkouts[::-1]
        for path in order:
            env = {**os.environ, "PYTHONPATH": os.path.abspath(path)}
            out = subprocess.run([sys.executable, "-c", CHILD, str(args.steps), args.model], env=env, cwd=path,
                                 capture_output=True, text=True, check=True).stdout
            runs[path].append(json.loads(out.strip().splitlines()[-1]))
    best = {c: {k: min(x[k] for x in rs) for k in PHASES} for c, rs in runs.items()}
    print("| phase (ms, min) | " + " | ".join(args.checkouts) + " |")
    print("|---|" + "---|" * len(args.checkouts))
    for k in PHASES:
        print(f"| {k} | " + " | ".join(f"{best[c][k] * 1e3:.3f}" for c in args.checkouts) + " |")
    fixed = {c: b["step_noquery"] - b["plain"] for c, b in best.items()}
    print("| fixed cost (step_noquery - plain) | " + " | ".join(f"{fixed[c] * 1e3:.3f}" for c in args.checkouts) + " |")
    print("| traced/plain, no query | " + " | ".join(f"{b['step_noquery'] / b['plain']:.2f}x" for b in best.values()) + " |")
    print("| traced/plain, summary() | " + " | ".join(f"{b['step_summary'] / b['plain']:.2f}x" for b in best.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
