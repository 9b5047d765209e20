"""The watch under torchrun: two gloo ranks on CPU, a block that one rank skips (a conditional
branch). Each rank watches its replica; the rank that skips it is told so with the skipping
line, and `gradscope show` of the run's logs shows the parameters that differ per rank."""
from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

SCRIPT = r'''
import sys
import torch, torch.nn as nn, torch.nn.functional as F
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
import gradscope


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 8)
        self.extra = nn.Linear(8, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x, use_extra):
        h = torch.relu(self.enc(x))
        if use_extra:
            h = torch.relu(self.extra(h))
        return self.head(h)  # D:skip


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(Net(), find_unused_parameters=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.watch(model, opt, log=sys.argv[1]) as w:
        for step in range(5):
            x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
            loss = F.cross_entropy(model(x, use_extra=rank == 0), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
    for a in w.alerts:
        print(f"ALERT {a.rank} {a.kind} {a.step} {','.join(a.params)} {(a.explanation or {}).get('cause')}", flush=True)
    dist.barrier()  # both ranks done before the group goes
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_a_block_unused_on_one_rank(tmp_path):
    script = tmp_path / "ddp_train.py"
    script.write_text(SCRIPT)
    log = tmp_path / "run.watch.jsonl"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_addr=127.0.0.1",
                        f"--master_port={_free_port()}", str(script), str(log)],
                       capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    alerts = sorted(line.split()[1:] for line in r.stdout.splitlines() if line.startswith("ALERT"))
    assert alerts == [["1", "never", "2", "extra.weight,extra.bias", "unused_parameter"]], r.stdout
    assert (tmp_path / "run.watch.rank0.jsonl").exists() and (tmp_path / "run.watch.rank1.jsonl").exists()
    shown = subprocess.run([sys.executable, "-m", "gradscope", "show", str(log)], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, COLUMNS="120"))
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "2 ranks' logs" in out
    assert "[rank 1] extra" in out and "[rank 0] extra" in out  # differs per rank
    assert "[rank 0] enc" not in out  # the same on both ranks: shown once
    assert "[rank 1] step 2: extra.weight, extra.bias received no gradient in 3 steps" in out
