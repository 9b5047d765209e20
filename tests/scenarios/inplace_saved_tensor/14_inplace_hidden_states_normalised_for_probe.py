"""Representation-alignment loss on `output_hidden_states`: each hidden state is
L2-normalised in place with `h.div_(...)` before comparing to teacher features.
The intermediate hidden state is the input saved by the next layer's Linear, so
backward raises the "modified by an inplace operation" error.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Student(nn.Module):
    def __init__(self, d=16, n=3):
        super().__init__()
        self.inp = nn.Linear(10, d)
        self.layers = nn.ModuleList(nn.Linear(d, d) for _ in range(n))
        self.head = nn.Linear(d, 2)

    def forward(self, x, output_hidden_states=False):
        h = self.inp(x)
        hidden_states = [h]
        for layer in self.layers:
            h = layer(h)
            hidden_states.append(h)
        out = {"logits": self.head(h)}
        if output_hidden_states:
            out["hidden_states"] = tuple(hidden_states)
        return out


def run():
    torch.manual_seed(0)
    model = Student()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(4, 10), torch.randint(0, 2, (4,))
    teacher_feats = F.normalize(torch.randn(4, 16), dim=-1)
    out = model(x, output_hidden_states=True)
    align = 0.0
    for h in out["hidden_states"][1:3]:
        h.div_(h.norm(dim=-1, keepdim=True) + 1e-6)  # <-- CUT
        align = align + (1 - (h * teacher_feats).sum(-1)).mean()
    loss = F.cross_entropy(out["logits"], y) + 0.1 * align
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
