"""Forward outputs go through a list of callbacks before the loss. A callback added
for "uint8 export preview" overwrites `out["recon"]` with a uint8 copy instead of
writing a new key; the loss then trains on that cast value and the decoder gets no grad.
"""
import torch
import torch.nn as nn

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.dec.weight"
EXPECT = "grad_none"


def log_stats(out):
    out["stats"] = out["z"].detach().abs().mean()


def export_preview(out):
    out["recon"] = (out["recon"].clamp(0, 1) * 255).to(torch.uint8)  # <-- CUT


def scale_back(out):
    out["recon"] = out["recon"].float() / 255


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(10, 3)
        self.dec = nn.Linear(3, 10)

    def forward(self, x):
        z = self.enc(x)
        return {"z": z, "recon": torch.sigmoid(self.dec(z))}


def run():
    torch.manual_seed(0)
    model = AE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    callbacks = [log_stats, export_preview, scale_back]
    x = torch.rand(8, 10)
    out = model(x)
    for cb in callbacks:
        cb(out)
    loss = ((out["recon"] - x) ** 2).mean() + 1e-3 * out["z"].pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "out": out}
