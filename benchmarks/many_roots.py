"""Cost of a trace whose loop keeps creating new models (PyTorch's own test_ConvTranspose2d_output_size
tests build a module per iteration): each new root gets a prefix (``m``, ``m_2``, ...). The cost per
iteration must stay flat as roots accumulate: it grew with the number of roots (cubically in total until
the numbered prefixes were counted once per base name; quadratically until a new root was named on its
own, gradscope/_record/_prefixes.py).

    python benchmarks/many_roots.py [N]
"""
from __future__ import annotations

import sys
import time

import torch
import torch.nn as nn

import gradscope


def run(n: int, traced: bool) -> list:
    x = torch.randn(2, 3, 4, 4)
    per = []
    ctx = gradscope.trace() if traced else None
    if ctx is not None:
        ctx.__enter__()
    try:
        t0 = time.perf_counter()
        for i in range(n):
            m = nn.ConvTranspose2d(3, 3, 3, stride=2, padding=1)
            m(x, output_size=[7, 7]).sum()
            if (i + 1) % (n // 4) == 0:
                t1 = time.perf_counter()
                per.append((t1 - t0) / (n // 4) * 1e3)
                t0 = t1
    finally:
        if ctx is not None:
            ctx.__exit__(None, None, None)
    return per


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    torch.set_num_threads(1)
    run(8, False), run(8, True)  # (warm-up: first calls, imports)
    plain, traced = run(n, False), run(n, True)
    print("| roots so far | plain ms/iter | traced ms/iter | ratio |\n|---|---|---|---|")
    for k, (p, t) in enumerate(zip(plain, traced), 1):
        print(f"| {k * n // 4} | {p:.2f} | {t:.2f} | {t / p:.1f}x |")
    print(f"last quarter / first quarter (traced): {traced[-1] / traced[0]:.2f} (flat is ~1)")


if __name__ == "__main__":
    main()
