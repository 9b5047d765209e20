"""What tr.verify costs per candidate cut, against one plain and one traced step of the same program, side by side
in one run (CPU, 1 thread): a small MLP and a small conv net, each with a stray detach beside a no_grad target.

    PYTHONPATH=. python benchmarks/verify_cost.py [--rounds 5]
"""
import argparse
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


if __name__ == "__main__":
    main()
