"""Memory a trace keeps per recorded event, on real models (HF GPT-2 and BERT, an LSTM language model, a
ResNet-style CNN), in one-step and multi-step traces, and how much the first query raises the peak.

Not a test: a benchmark that prints a markdown table (target: <= 1 kB per event after the first query).

    python benchmarks/trace_memory.py            # ~1 min
    python benchmarks/trace_memory.py --steps 5

Method. tracemalloc counts the Python allocations a trace retains (tensor storage is not counted: the
trace keeps no tensor alive). Each model does three warm-up steps (optimizer state, caches) and one
traced, queried warm-up step from the same lines (gradscope's process-wide caches of code categories,
sites and frames fill once per call site). Then the N steps run plain, and what they retain (the
program's own objects: Python wrappers of the live gradients) is subtracted from what one trace of the
same N steps retains: "recorded" once the ``with`` block has exited, "after first query" once
``tr.why(<first parameter>)`` has turned the records into plain data and answered (the trace object
still alive); "peak raise" is the peak during that query over the recorded figure.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tracemalloc
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gradscope  # noqa: E402


def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    model = GPT2LMHeadModel(GPT2Config(n_layer=4, n_embd=128, n_head=4, vocab_size=1000, n_positions=64))
    ids = torch.randint(0, 1000, (2, 32))
    return model, lambda: model(input_ids=ids, labels=ids).loss


def _bert():
    from transformers import BertConfig, BertForMaskedLM

    model = BertForMaskedLM(BertConfig(num_hidden_layers=4, hidden_size=128, num_attention_heads=4,
                                       intermediate_size=256, vocab_size=1000, max_position_embeddings=64))
    ids = torch.randint(0, 1000, (2, 32))
    return model, lambda: model(input_ids=ids, labels=ids).loss


class _LSTMLM(nn.Module):
    def __init__(self, vocab=1000, d=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.rnn = nn.LSTM(d, d, num_layers=2, batch_first=True)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        out, _ = self.rnn(self.embed(ids))
        return self.head(out)


def _lstm():
    model = _LSTMLM()
    ids = torch.randint(0, 1000, (4, 32))
    return model, lambda: F.cross_entropy(model(ids[:, :-1]).flatten(0, 1), ids[:, 1:].flatten())


class _Bottleneck(nn.Module):
    def __init__(self, c, mid):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, mid, 1, bias=False), nn.BatchNorm2d(mid)
        self.conv2, self.bn2 = nn.Conv2d(mid, mid, 3, padding=1, bias=False), nn.BatchNorm2d(mid)
        self.conv3, self.bn3 = nn.Conv2d(mid, c, 1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        return F.relu(x + self.bn3(self.conv3(y)))


def _resnet():
    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                          *[_Bottleneck(64, 16) for _ in range(8)], nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(64, 10))
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))
    return model, lambda: F.cross_entropy(model(x), y)


MODELS = {"HF GPT-2 (4 layers)": _gpt2, "HF BERT (4 layers)": _bert, "LSTM LM (2 layers)": _lstm,
          "ResNet-style (8 bottlenecks)": _resnet}


def measure(make, steps):
    torch.manual_seed(0)
    model, loss_fn = make()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn().backward()
        opt.step()

    def traced(n, marks):
        with gradscope.trace() as tr:
            for _ in range(n):
                step()
        gc.collect()
        marks.append(tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else 0)
        if tracemalloc.is_tracing():
            tracemalloc.reset_peak()
        tr.why(next(iter(model.parameters())))  # the first query: records -> plain data, then the explanation
        return tr

    for _ in range(3):
        step()
    # gradscope's process-wide caches (code categories, sites, frames) are filled once per call site: a
    # traced warm-up from the same lines
    traced(1, [])
    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    for _ in range(steps):  # the same steps plain: what the program itself keeps (the live .grad wrappers...)
        step()
    gc.collect()
    plain = tracemalloc.get_traced_memory()[0] - base
    base, _ = tracemalloc.get_traced_memory()
    marks = []
    tr = traced(steps, marks)
    recorded = marks[0]
    n = len(tr.events)
    gc.collect()
    cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del tr
    base += plain
    return {"events": n, "recorded": (recorded - base) / n, "after": (cur - base) / n,
            "peak_raise": (peak - recorded) / max(recorded - base, 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, nargs="*", default=[1, 3])
    args = ap.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    print("| model | steps | events | B/event recorded | B/event after first query | first query peak raise | "
          "<= 1 kB |\n|---|---|---|---|---|---|---|")
    for name, make in MODELS.items():
        for steps in args.steps:
            r = measure(make, steps)
            print(f"| {name} | {steps} | {r['events']} | {r['recorded']:.0f} | {r['after']:.0f} | "
                  f"{r['peak_raise'] * 100:.0f}% | {'yes' if r['after'] <= 1000 else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
