"""Test-time fine-tuning inside a cog-style Predictor: predict() is run by the
serving framework under `torch.inference_mode()`. The user's few-step
adaptation loop hit "element 0 of tensors does not require grad", added
`loss.requires_grad_(True)`; now backward runs but the grads are None and the
loss never decreases (replicate/cog#1681).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "predictor.model[0].weight"
EXPECT = "grad_none"


class Predictor:
    def setup(self):
        self.model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-2)

    def adapt(self, x, y, steps=2):
        losses = []
        for _ in range(steps):
            self.optimizer.zero_grad()
            pred = self.model(x)  # <-- CUT
            loss = F.mse_loss(pred, y)
            if not loss.requires_grad:
                loss.requires_grad_(True)  # "fixes" element 0 ... does not require grad
            loss.backward()
            self.optimizer.step()
            losses.append(loss.item())
        return losses

    def predict(self, x, y, query):
        losses = self.adapt(x, y)
        return self.model(query), losses


def serve(predictor, **inputs):
    with torch.inference_mode():  # what the HTTP worker does around every prediction
        return predictor.predict(**inputs)


def run():
    torch.manual_seed(0)
    predictor = Predictor()
    predictor.setup()
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    out, losses = serve(predictor, x=x, y=y, query=torch.randn(2, 6))
    return {"predictor": predictor, "losses": losses}
