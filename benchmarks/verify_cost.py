"""What tr.verify costs per candidate cut, against one plain and one traced step of the same program, side by side
in one run (CPU, 1 thread): a small MLP and a small conv net, each with a stray detach beside a no_grad target.

    PYTHONPATH=. python benchmarks/verify_cost.py [--rounds 5]

Then per candidate cut: a step with k branches (k = 1..4), each cut off by its own stray detach on its own line
(k starved branches of 4 parameters each, k candidate cuts). Each candidate's re-run (``Trial.seconds``) is set
against the plain step of the program as that undo leaves it (its detach left out: the backward work the re-run
has to do anyway) and against the traced step; verify's whole time is split into the unmodified re-run (traced,
to check that the step repeats), the candidates' re-runs, and the rest (the restores before each run, the
trace's queries, the state capture).
"""
import argparse
import importlib.util
import os
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import gradscope


def programs():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    tgt = nn.Linear(64, 10)
    o1 = torch.optim.AdamW(mlp.parameters(), 1e-3)
    x1, y1 = torch.randn(128, 64), torch.randint(0, 10, (128,))

    def mlp_step():
        with torch.no_grad():
            soft = tgt(x1).softmax(-1)
        h = mlp[1](mlp[0](x1)).detach()
        out = mlp[4](mlp[3](mlp[2](h)))
        loss = F.cross_entropy(out, y1) + F.kl_div(out.log_softmax(-1), soft, reduction="batchmean")
        o1.zero_grad()
        loss.backward()
        o1.step()

    conv = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1),
                         nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))
    o2 = torch.optim.SGD(conv.parameters(), 0.1, momentum=0.9)
    x2, y2 = torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))

    def conv_step():
        h = conv[2](conv[1](conv[0](x2)))
        with torch.no_grad():
            scale = h.std()
        h = h.detach() / scale
        loss = F.cross_entropy(conv[7](conv[6](conv[5](conv[4](conv[3](h))))), y2)
        o2.zero_grad()
        loss.backward()
        o2.step()

    return {"mlp": mlp_step, "conv": conv_step}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(1)
    for name, step in programs().items():
        step()
        plain, traced, per = [], [], []
        for _ in range(a.rounds):  # interleaved: plain, traced, verify
            t0 = time.perf_counter()
            step()
            plain.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            with gradscope.trace() as tr:
                step()
            traced.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            v = tr.verify(step)
            n = 1 + sum(1 for t in v.trials if t.tried)  # the unmodified re-run and each undo
            per.append((time.perf_counter() - t0) / n)
        p, t, r = min(plain), min(traced), min(per)
        print(f"{name}: plain step {p * 1e3:.1f} ms, traced step {t * 1e3:.1f} ms, verify {r * 1e3:.1f} ms per re-run "
              f"({n} re-runs) = {r / p:.2f}x plain, {r / t:.2f}x traced; verdicts "
              f"{sorted({c.verdict for c in v.targets.values()})}")


BRANCHY = """
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
K = {k}
blocks = nn.ModuleList(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64)) for _ in range(K))
head = nn.Linear(64 * K, 10)
opt = torch.optim.AdamW([*blocks.parameters(), *head.parameters()], 1e-3)
x, y = torch.randn(128, 64), torch.randint(0, 10, (128,))


def step():
    hs = []
{lines}
    loss = F.cross_entropy(head(torch.cat(hs, 1)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def _branchy(k, folder, undone=None):
    """The k-branch step (its module written to ``folder``); ``undone``: the branch whose detach is left out."""
    lines = "\n".join(f"    hs.append(blocks[{i}](x){'' if i == undone else '.detach()'})" for i in range(k))
    name = f"branchy_{k}" if undone is None else f"branchy_{k}_without_{undone}"
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as f:
        f.write(BRANCHY.format(k=k, lines=lines))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.step


def _best(fn, rounds):
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def per_candidate(rounds):
    """k = 1..4 candidate cuts: the re-run each costs (Trial.seconds) against the plain step of the program as that
    undo leaves it (its detach left out: the work the re-run must do anyway) and the traced step; and verify's
    whole time split into the unmodified re-run, the candidates' re-runs and the rest."""
    with tempfile.TemporaryDirectory() as d:
        for k in (1, 2, 3, 4):
            step = _branchy(k, d)
            undone = [_branchy(k, d, i) for i in range(k)]
            for s in (step, *undone):
                s()
            plain, traced, total, trial, base, rest = [], [], [], [], [], []
            for _ in range(rounds):  # interleaved: plain, traced, verify
                plain.append(_best(step, 1))
                t0 = time.perf_counter()
                with gradscope.trace() as tr:
                    step()
                traced.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                v = tr.verify(step)
                total.append(time.perf_counter() - t0)
                runs = sum(t.seconds for t in v.trials if t.tried)
                trial.append(runs / k)
                base.append(v.step_seconds)
                rest.append(total[-1] - runs - v.step_seconds)
            tried = sum(1 for t in v.trials if t.tried)
            verified = sum(1 for c in v.targets.values() if c.verdict == "verified")
            assert tried == k and verified == 4 * k, f"k={k}: {tried} candidates tried, {verified} targets verified"
            fixed = sum(_best(s, rounds) for s in undone) / k
            p, t, r = min(plain), min(traced), min(trial)
            print(f"k={k}: plain step {p * 1e3:.2f} ms, with one cut undone {fixed * 1e3:.2f} ms, traced step "
                  f"{t * 1e3:.2f} ms; each candidate's re-run {r * 1e3:.2f} ms = {r / fixed:.2f}x the plain step "
                  f"with its cut undone, {r / t:.2f}x the traced step; verify in all {min(total) * 1e3:.1f} ms = the "
                  f"traced unmodified re-run {min(base) * 1e3:.1f} + {k} candidates' re-runs {r * k * 1e3:.1f} + "
                  f"the rest (restores, queries, state capture) {min(rest) * 1e3:.1f} "
                  f"({tried} candidates tried, {verified} targets verified)")


if __name__ == "__main__":
    main()
    torch.set_num_threads(1)
    per_candidate(7)
