"""`gradscope run` under torchrun: 2 real ranks on CPU (gloo), one report, the ranks' differences,
and DDP's unused parameters explained by module path."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gradscope
from gradscope.watch import ranks as _ranks
from gradscope.cli import trace_json

REPO = Path(__file__).resolve().parents[1]

DDP_SCRIPT = """\
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)
        self.aux_head = nn.Linear(8, 2)  # never called in forward

    def forward(self, x):
        h = torch.relu(self.body(x))
        return self.head(h)


dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(Net(), find_unused_parameters=os.environ["FIND_UNUSED"] == "1")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    opt.zero_grad()
    loss = model(torch.randn(8, 4) + rank).pow(2).mean()
    loss.backward()
    opt.step()
print(f"rank {rank} finished", flush=True)
dist.destroy_process_group()
"""

pytestmark = pytest.mark.skipif(not torch.distributed.is_available() or not torch.distributed.is_gloo_available(),
                                reason="torch.distributed with gloo is needed")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(tmp_path, *gs_args, find_unused: bool):
    script = tmp_path / "ddp_train.py"
    script.write_text(DDP_SCRIPT)
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(REPO), PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1",
               FIND_UNUSED="1" if find_unused else "0", GRADSCOPE_RANK_TIMEOUT="60")
    env.pop("FORCE_COLOR", None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={free_port()}",
           "-m", "gradscope", "run", *gs_args, str(script)]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_torchrun_one_report_labelled_ranks_unused_by_module_path(tmp_path):
    p = torchrun(tmp_path, find_unused=True)
    out, err = p.stdout, p.stderr
    assert p.returncode == 0, (out, err)
    assert "rank 0 finished" in out and "rank 1 finished" in out  # the script ran on both ranks
    assert out.count("Parameters (") == 1, out  # one report, not one per rank
    assert "gradscope [rank 0/2]: report of rank 0" in out
    assert "gradscope [rank 1/2]: traced, 1 problem" in out
    assert "rank 1: same gradient flow as rank 0 (1 problem)" in out
    # the unused head is unused (by its module path), not "detached at DDP(...)"
    # (DDP's `module.` is not part of the user's names: the wrapper is unwrapped)
    assert "unused_parameter" in out and "aux_head.weight" in out and "module.aux_head" not in out, out
    assert "detach" not in out and "DDP(Net()" not in out, out


def test_torchrun_ddp_unused_parameter_error_is_explained(tmp_path):
    p = torchrun(tmp_path, "--json", find_unused=False)
    assert p.returncode != 0
    doc = json.loads(p.stdout)  # rank 0's document, with the other rank's comparison
    assert doc["rank"] == 0 and doc["world_size"] == 2
    assert doc["other_ranks"]["1"] is not None and doc["other_ranks"]["1"]["differences"] == []
    f = doc["failure"]
    assert f["cause"] == "unused_parameter", f
    assert "did not receive a gradient in the previous iteration" in f["summary"]
    assert "aux_head.weight" in f["summary"] and "aux_head.bias" in f["summary"]
    assert "module." not in f["summary"]  # (DDP's wrapper attribute is not part of the user's names)
    assert "body." not in f["summary"] and not re.search(r"(?<![\w.])head\.", f["summary"])
    assert "`aux_head` was never called" in f["summary"]
    assert "find_unused_parameters=True" in f["fix"]
    # the module no forward calls is shown where it is defined (what to use or remove)
    assert f["site"]["lineno"] == DDP_SCRIPT.splitlines().index(
        "        self.aux_head = nn.Linear(8, 2)  # never called in forward") + 1
    assert "Expected to have finished reduction" in p.stderr  # the script's own traceback is still there


def _doc(cut: bool) -> dict:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 1))
    with gradscope.trace() as tr:
        h = model[0](torch.randn(2, 3))
        if cut:
            h = h.detach()
        model[1](h).sum().backward()
    return trace_json(tr, exit_code=0)


def test_rank_differences_from_real_traces():
    same, cut = _doc(False), _doc(True)
    assert _ranks.differences(same, _doc(False)) == []
    diff = _ranks.differences(same, cut)
    assert any(d.startswith("problem detach at test_distributed.py:") for d in diff), diff
    assert any(".grad none (rank 0: received)" in d for d in diff), diff
    back = _ranks.differences(cut, same)
    assert any(d.startswith("no detach problem") for d in back), back


def test_rank_paths_and_info():
    assert _ranks.rank_info({"RANK": "1", "WORLD_SIZE": "4"}) == (1, 4)
    assert _ranks.rank_info({"WORLD_SIZE": "4"}) is None and _ranks.rank_info({"RANK": "0", "WORLD_SIZE": "1"}) is None
    assert _ranks.per_rank_path("out/t.json", 0) == "out/t.json"
    assert _ranks.per_rank_path("out/t.json", 3) == "out/t.rank3.json"


def test_doctests():
    import doctest

    assert doctest.testmod(_ranks).failed == 0


FSDP2_SCRIPT = """\
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import fully_shard

BUG = os.environ["BUG"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 16)
        self.dec = nn.Linear(16, 1)

    def forward(self, x):
        h = self.enc(x).relu()
        if BUG == "detach":
            h = h.detach()  # L:detach
        if BUG == "no_grad":
            with torch.no_grad():  # L:no_grad
                h = h * 1.0
        if BUG == "unused":
            return h.sum(1, keepdim=True)  # L:unused
        return self.dec(h)


dist.init_process_group("gloo")
torch.manual_seed(0)
if BUG == "meta":  # (built on the meta device, sharded, then materialized: the pytorch/examples FSDP2 way)
    with torch.device("meta"):
        m = Net()
else:
    m = Net()
if BUG == "frozen":
    m.enc.requires_grad_(False)  # L:frozen
fully_shard(m.enc)
fully_shard(m.dec)
fully_shard(m)
if BUG == "meta":
    m.to_empty(device="cpu")
    for lin in (m.enc, m.dec):
        lin.reset_parameters()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
x = torch.randn(4, 8)
for step in range(2):
    opt.zero_grad()
    m(x).pow(2).mean().backward()
    opt.step()
dist.destroy_process_group()
"""


def _fsdp2_line(tag):
    return next(i for i, ln in enumerate(FSDP2_SCRIPT.splitlines(), 1) if ln.endswith(f"# L:{tag}"))


def _fsdp2_run(tmp_path, bug):
    script = tmp_path / "fsdp_train.py"
    script.write_text(FSDP2_SCRIPT)
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(REPO), PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1",
               BUG=bug, GRADSCOPE_RANK_TIMEOUT="60", GRADSCOPE_NO_VERIFY="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={free_port()}",
           "-m", "gradscope", "run", "--json", str(script)]
    p = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, (p.stdout[-3000:], p.stderr[-3000:])
    return json.loads(p.stdout[p.stdout.index("{"):])  # (rank 0's document; rank 1 printed one line before it)


@pytest.mark.parametrize("bug,cause,names", [
    ("none", None, []),
    ("detach", "detach", ["enc.weight", "enc.bias"]),
    ("no_grad", "no_grad_block", ["enc.weight", "enc.bias"]),
    ("frozen", "frozen_param", ["enc.weight", "enc.bias"]),
    ("unused", "unused_parameter", ["dec.weight", "dec.bias"]),
])
def test_fsdp2_names_each_parameter_once_and_the_users_line(tmp_path, bug, cause, names):
    """FSDP2 (fully_shard per layer and at the root, 2 ranks): each parameter once, by its module path (its sharded
    form, which the optimizer steps, and its unsharded form, which the forward uses, are one parameter); FSDP's own
    all-gathers, copies and hooks are no cut of the user's; the injected bug at the user's line, the same on both
    ranks (rank 1's shard of `dec.weight` [1, 16] is empty: no zero gradient)."""
    doc = _fsdp2_run(tmp_path, bug)
    assert sorted(r["name"] for r in doc["params"]) == ["dec.bias", "dec.weight", "enc.bias", "enc.weight"], \
        doc["params"]
    assert doc["other_ranks"]["1"]["differences"] == [], doc["other_ranks"]
    if cause is None:
        assert doc["ok"] and doc["problems"] == [] and all(r["status"] == "received" for r in doc["params"]), doc
        assert all(c.get("verdict") != "harmful" for c in doc["cuts"])
        return
    assert len(doc["problems"]) == 1, doc["problems"]
    prob = doc["problems"][0]
    assert prob["cause"] == cause and prob["site"]["lineno"] == _fsdp2_line(bug), prob
    assert all(n in prob["summary"] for n in names), prob["summary"]
    assert {r["name"] for r in doc["params"] if r["status"] != "received"} == set(names)


TP_SCRIPT = """\
import os
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

BUG = os.environ["BUG"]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(8, 16)
        self.down = nn.Linear(16, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        h = self.up(x).relu()
        if BUG == "detach":
            h = h.detach()  # L:detach
        if BUG == "no_grad":
            with torch.no_grad():  # L:no_grad
                h = h * 1.0
        h = self.down(h)
        if BUG == "unused":
            return h.sum(1, keepdim=True)  # L:unused
        return self.head(h)


mesh = init_device_mesh("cpu", (2,))
torch.manual_seed(0)
m = MLP()
if BUG == "frozen":
    m.up.requires_grad_(False)  # L:frozen
parallelize_module(m, mesh, {"up": ColwiseParallel(), "down": RowwiseParallel()})
opt = torch.optim.SGD(m.parameters(), lr=0.1)
x = torch.randn(4, 8)
for step in range(2):
    opt.zero_grad()
    m(x).pow(2).mean().backward()
    opt.step()
dist.destroy_process_group()
"""


def _run_script(tmp_path, script_text, bug):
    script = tmp_path / "train.py"
    script.write_text(script_text)
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(REPO), PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1",
               BUG=bug, GRADSCOPE_RANK_TIMEOUT="60", GRADSCOPE_NO_VERIFY="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={free_port()}",
           "-m", "gradscope", "run", "--json", str(script)]
    p = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, (p.stdout[-3000:], p.stderr[-3000:])
    return json.loads(p.stdout[p.stdout.index("{"):])


@pytest.mark.parametrize("bug,cause,names", [
    ("none", None, []),
    ("detach", "detach", ["up.weight", "up.bias"]),
    ("no_grad", "no_grad_block", ["up.weight", "up.bias"]),
    ("frozen", "frozen_param", ["up.weight", "up.bias"]),
    ("unused", "unused_parameter", ["head.weight", "head.bias"]),
])
def test_tensor_parallel_names_each_parameter_once_and_the_users_line(tmp_path, bug, cause, names):
    """DTensor tensor parallelism (parallelize_module: colwise `up`, rowwise `down`, 2 ranks on a CPU mesh): the
    parameters by module path, once; the conversions between DTensors and local tensors (to_local, from_local,
    redistribute: no mode sees them otherwise) join the flow; the injected bug at the user's line on both ranks."""
    doc = _run_script(tmp_path, TP_SCRIPT, bug)
    line = next(i for i, ln in enumerate(TP_SCRIPT.splitlines(), 1) if ln.endswith(f"# L:{bug}")) if cause else None
    assert sorted(r["name"] for r in doc["params"]) == sorted(
        f"{m}.{p}" for m in ("up", "down", "head") for p in ("weight", "bias")), doc["params"]
    assert doc["other_ranks"]["1"]["differences"] == [], doc["other_ranks"]
    if cause is None:
        assert doc["ok"] and doc["problems"] == [] and all(r["status"] == "received" for r in doc["params"]), doc
        return
    assert len(doc["problems"]) == 1, doc["problems"]
    prob = doc["problems"][0]
    assert prob["cause"] == cause and prob["site"]["lineno"] == line, prob
    assert {r["name"] for r in doc["params"] if r["status"] != "received"} == set(names)


def test_dtensor_conversions_are_wrapped_only_while_a_trace_records():
    dt = pytest.importorskip("torch.distributed.tensor")
    own = {n: dt.DTensor.__dict__[n] for n in ("to_local", "redistribute", "full_tensor", "from_local")}
    lin = torch.nn.Linear(2, 2)
    with gradscope.trace():
        lin(torch.randn(1, 2)).sum().backward()  # (a model's first call: DTensor is imported, so they are wrapped)
        during = {n: dt.DTensor.__dict__[n] for n in own}
    assert all(during[n] is not own[n] for n in own)
    assert all(dt.DTensor.__dict__[n] is own[n] for n in own)  # (put back, the very objects)


def test_the_watch_under_fsdp2_never_breaks_the_training(tmp_path):
    """`gradscope run --watch` of an FSDP2 run: the watch measures each rank's shards (a DTensor gradient's norm
    needs no collective) and the training runs to the end on both ranks; the cut-off layer shows no gradient."""
    script = tmp_path / "fsdp_train.py"
    script.write_text(FSDP2_SCRIPT)
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(REPO), PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1",
               BUG="detach", GRADSCOPE_RANK_TIMEOUT="60", GRADSCOPE_NO_VERIFY="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={free_port()}",
           "-m", "gradscope", "run", "--watch", str(script)]
    p = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, (p.stdout[-3000:], p.stderr[-3000:])
    assert "Traceback" not in p.stderr and "could not measure" not in p.stdout, p.stderr[-3000:]
    rows = {ln.split()[0]: ln for ln in p.stdout.splitlines() if ln.startswith(("enc ", "dec "))}
    assert "never" in rows["enc"] and "ok" in rows["dec"], p.stdout


def test_fsdp2_built_on_the_meta_device_runs_traced(tmp_path):
    """`with torch.device("meta")`, fully_shard, `model.to_empty()` (torch.utils.swap_tensors on each sharded
    parameter), then training: traced, it runs to the end on both ranks as it does plain (a weak reference of ours on
    a sharded parameter made to_empty refuse it; reading an unsharded parameter whose storage FSDP had freed crashed
    the process)."""
    doc = _fsdp2_run(tmp_path, "meta")
    assert sorted(r["name"] for r in doc["params"]) == ["dec.bias", "dec.weight", "enc.bias", "enc.weight"]
    assert doc["ok"] and doc["problems"] == [], doc["problems"]

