"""What `gradscope run`'s verification costs per candidate cut, against the script run plain, side by side in one
run (CPU, 1 thread): a one-step script and a 200-step script, each with a stray detach beside a no_grad target.

    python benchmarks/verify_cli_cost.py [--rounds 3]

For each script: the wall time of ``python script.py`` (plain), of ``gradscope run --no-verify`` (traced) and of
the verification ``gradscope run`` then does (its own figure in ``--json``: ``verification.seconds``), divided by
the re-runs it made (the unmodified one and one per candidate tried); and what verifying adds to the whole
``gradscope run``'s wall time (against the ``--no-verify`` run), per candidate cut tried. Each re-run records up to the backward call
that showed the problem and ends the script there, so a long script's re-run costs about its start and one step.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SCRIPT = """
import torch, torch.nn as nn, torch.nn.functional as F
torch.set_num_threads(1)
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
teacher = nn.Linear(64, 10)
opt = torch.optim.AdamW(net.parameters(), 1e-3)
x, y = torch.randn(128, 64), torch.randint(0, 10, (128,))
for step in range({steps}):
    with torch.no_grad():
        soft = teacher(x).softmax(-1)
    h = net[1](net[0](x)).detach()
    out = net[4](net[3](net[2](h)))
    loss = F.cross_entropy(out, y) + F.kl_div(out.log_softmax(-1), soft, reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def _wall(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    return time.perf_counter() - t0, p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "GRADSCOPE_NO_VERIFY"}
    env["OMP_NUM_THREADS"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        for steps in (1, 200):
            path = os.path.join(tmp, f"train_{steps}.py")
            with open(path, "w") as f:
                f.write(SCRIPT.format(steps=steps))
            plain, traced, per, added, n = [], [], [], [], 0
            for _ in range(a.rounds):  # interleaved: plain, traced, verified
                plain.append(_wall([sys.executable, path], env)[0])
                traced.append(_wall([sys.executable, "-m", "gradscope", "run", "--no-verify", "--quiet", path], env)[0])
                whole, p = _wall([sys.executable, "-m", "gradscope", "run", "--json", "--quiet", path], env)
                v = json.loads(p.stdout)["verification"]
                k = sum(1 for t in v["trials"] if t["tried"])
                n = 1 + k
                per.append(v["seconds"] / n)
                added.append((whole - traced[-1]) / max(k, 1))
            p_, t_, r_, a_ = min(plain), min(traced), min(per), min(added)
            print(f"{steps}-step script: plain {p_:.2f} s, traced {t_:.2f} s, verification {r_:.2f} s per re-run "
                  f"({n} re-runs) = {r_ / p_:.2f}x the plain script, {r_ / t_:.2f}x the traced run; what verifying "
                  f"adds to the run's wall time per candidate cut: {a_:.2f} s = {a_ / t_:.2f}x the traced run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
