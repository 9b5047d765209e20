"""Lightning-style module: `training_step` returns
`{"loss": loss.detach(), "log": ...}` (detached "so the logger doesn't keep
the graph alive"). The trainer calls `out["loss"].backward()`, which raises
because the returned loss has no grad_fn.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net[0].weight"
EXPECT = "backward_error"


class LitRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.SiLU(), nn.Linear(16, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        return {"loss": loss.detach(), "log": {"train_loss": loss.item()}}  # <-- CUT

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


class MiniTrainer:
    def fit(self, model, loader):
        opt = model.configure_optimizers()
        for i, batch in enumerate(loader):
            out = model.training_step(batch, i)
            opt.zero_grad()
            out["loss"].backward()
            opt.step()


def run():
    torch.manual_seed(0)
    model = LitRegressor()
    loader = [(torch.randn(8, 4), torch.randn(8, 1))]
    MiniTrainer().fit(model, loader)
    return {"model": model}
