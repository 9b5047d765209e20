"""gradscope._forkserver: the process `gradscope run`'s verifying re-runs fork from (real processes, real forks)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from gradscope import _forkserver
from gradscope._forkserver import ForkServer

pytestmark = pytest.mark.skipif(not _forkserver.available(), reason="re-runs are forked on Linux only")

SCRIPT = (
    "import os, sys, torch, torch.nn as nn\n"
    "torch.manual_seed(0)\n"
    "net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\n"
    "x = torch.randn(16, 4)\n"
    "print('cwd', os.getcwd(), 'flag', os.environ.get('GS_TEST_FLAG'), 'stdin', repr(sys.stdin.read()))\n"
    "h = net[0](x).detach()\n"
    "net[2](net[1](h)).pow(2).mean().backward()\n")


def _env(**extra):
    e = {k: v for k, v in os.environ.items() if k != "GRADSCOPE_NO_VERIFY"}
    e.update(extra)
    return e


@pytest.fixture
def server():
    s = ForkServer().start()
    yield s
    s.close()


def test_a_forked_re_run_is_the_command_a_subprocess_would_run(tmp_path, server, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    argv = ["run", "--json", "--no-verify", "--quiet", str(script)]
    rc, out = server.run(argv, _env(GS_TEST_FLAG="forked"), timeout=120)
    doc = json.loads(out)  # (its stdout is the --json document alone: the script's print went to stderr)
    p = subprocess.run([sys.executable, "-m", "gradscope", *argv], capture_output=True, text=True, timeout=300,
                       env=_env(GS_TEST_FLAG="plain"), stdin=subprocess.DEVNULL)
    plain = json.loads(p.stdout)
    assert rc == p.returncode == 0
    assert [(r["name"], r["status"]) for r in doc["params"]] == [(r["name"], r["status"]) for r in plain["params"]]
    assert doc["params"][0]["status"] == "none" and doc["problems"][0]["site"]["lineno"] == 6
    assert doc["problems"][0]["summary"] == plain["problems"][0]["summary"]


def test_the_re_run_gets_the_environment_and_directory_asked_for_and_no_stdin(tmp_path, server, monkeypatch):
    script = tmp_path / "show.py"
    script.write_text("import os, sys\n"
                      "print(os.getcwd(), os.environ.get('GS_TEST_FLAG'), repr(sys.stdin.read()), sep='|')\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    monkeypatch.chdir(sub)
    # (without --json the script's own stdout is the re-run's stdout)
    rc, out = server.run(["run", "--no-verify", "--quiet", str(script)], _env(GS_TEST_FLAG="seen"), timeout=120)
    assert rc == 0
    assert f"{sub}|seen|''" in out.splitlines()[0]
    rc, out = server.run(["run", "--no-verify", "--quiet", str(script)], _env(), timeout=120)
    assert "|None|" in out.splitlines()[0]  # (the environment of each request, not the one before)


def test_a_re_run_past_its_time_is_killed_and_the_server_goes_on(tmp_path, server):
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(60)\n")
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        server.run(["run", "--no-verify", "--quiet", str(slow)], _env(), timeout=2)
    assert time.monotonic() - t0 < 40  # (its imports, once, then two seconds)
    quick = tmp_path / "quick.py"
    quick.write_text("raise SystemExit(3)\n")
    assert server.run(["run", "--no-verify", "--quiet", str(quick)], _env(), timeout=60)[0] == 3


def test_a_closed_or_switched_off_server_runs_nothing(monkeypatch, tmp_path):
    s = ForkServer().start()
    s.close()
    assert s.run(["run", "x.py"], _env(), timeout=5) is None  # (the caller then runs a subprocess)
    monkeypatch.setenv("GRADSCOPE_NO_FORK", "1")
    assert not _forkserver.available()
    assert ForkServer().start().run(["run", "x.py"], _env(), timeout=5) is None


def test_cli_verification_is_the_same_forked_and_in_subprocesses(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import torch, torch.nn as nn\n"
        "torch.manual_seed(0)\n"
        "target, net = nn.Linear(4, 1), nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\n"
        "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
        "x = torch.randn(16, 4)\n"
        "with torch.no_grad():\n"
        "    y = target(x)\n"
        "h = net[0](x).detach()\n"
        "loss = ((net[2](net[1](h)) - y) ** 2).mean()\n"
        "opt.zero_grad(); loss.backward(); opt.step()\n")
    run = [sys.executable, "-m", "gradscope", "run", "--json", str(script)]
    docs = []
    for extra in ({}, {"GRADSCOPE_NO_FORK": "1"}):
        p = subprocess.run(run, capture_output=True, text=True, timeout=300, env=_env(**extra))
        docs.append(json.loads(p.stdout))

    def verdicts(doc):
        v = doc["verification"]
        return ([(t["undo"]["lineno"], t["tried"], t["hits"], sorted(t["results"].items())) for t in v["trials"]],
                sorted((k, c["verdict"]) for k, c in v["targets"].items()), v["repeatable"])

    forked, spawned = docs
    assert verdicts(forked) == verdicts(spawned)
    assert forked["problems"][0]["verified"] == "verified" and forked["problems"][0]["site"]["lineno"] == 8
