"""gradscope's overhead per training step under FSDP2 (fully_shard per block and at the root), 2 ranks on CPU
(gloo, 1 thread each), traced against plain steps side by side in one run (interleaved, min of rounds; a fresh
``gradscope.trace()`` per traced step, as a user debugging one step would write it).

    python benchmarks/fsdp_overhead.py [--rounds 20] [--blocks 4] [--width 256]
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile

CHILD = r"""
import sys, time
import torch, torch.nn as nn, torch.distributed as dist
from torch.distributed.fsdp import fully_shard
import gradscope
torch.set_num_threads(1)
dist.init_process_group("gloo")
rounds, blocks, width = map(int, sys.argv[1:4])
torch.manual_seed(0)
model = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.GELU()) for _ in range(blocks)], nn.Linear(width, 1))
for b in model[:-1]:
    fully_shard(b)
fully_shard(model)
opt = torch.optim.AdamW(model.parameters(), 1e-3)
x = torch.randn(64, width)


def step():
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()


for _ in range(3):
    step()
with gradscope.trace():
    step()
plain, traced = [], []
for _ in range(rounds):
    dist.barrier()
    t0 = time.process_time(); step(); plain.append(time.process_time() - t0)
    dist.barrier()
    t0 = time.process_time()
    with gradscope.trace() as tr:
        step()
    traced.append(time.process_time() - t0)
if dist.get_rank() == 0:
    p, t = min(plain), min(traced)
    n = sum(1 for r in tr.summary().params)
    print(f"FSDP2, 2 ranks, {blocks} blocks of width {width} ({n} parameters): plain step {p * 1e3:.1f} ms, traced "
          f"{t * 1e3:.1f} ms = {t / p:.2f}x (CPU time of rank 0, min of {rounds}); problems: {len(tr.problems())}")
dist.destroy_process_group()
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--width", type=int, default=256)
    a = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "fsdp_step.py")
        with open(path, "w") as f:
            f.write(CHILD)
        env = dict(os.environ, PYTHONPATH=repo, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
        p = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
                            f"--master_port={port}", path, str(a.rounds), str(a.blocks), str(a.width)],
                           env=env, capture_output=True, text=True, timeout=600)
        print(p.stdout.strip() or p.stderr[-2000:])
        return p.returncode


if __name__ == "__main__":
    sys.exit(main())
