"""Frame-level regressor trained with an RMSE loss, torch.sqrt(criterion(pred * mask, y * mask)).
In a batch where every frame is padding the masked prediction equals the masked target exactly,
the MSE is 0 and sqrt's derivative at 0 is infinite; 0 * inf makes the MSE gradient NaN. Run under
anomaly detection, backward raises "Function 'MseLossBackward0' returned nan values".
Thread: discuss.pytorch.org/t/94875 (MseLossBackward returned nan values).
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class FrameRegressor(nn.Module):
    def __init__(self, in_dim=10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


class MaskedRMSELoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.criterion = nn.MSELoss()

    def forward(self, pred, y, mask):
        return torch.sqrt(self.criterion(pred * mask, y * mask))  # <-- CUT


def run():
    torch.manual_seed(0)
    model = FrameRegressor()
    loss_fn = MaskedRMSELoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(4, 12, 10), torch.randn(4, 12)
    lengths = torch.zeros(4, dtype=torch.long)          # an all-padding bucket from the sampler
    mask = (torch.arange(12).unsqueeze(0) < lengths.unsqueeze(1)).float()
    with torch.autograd.detect_anomaly():
        loss = loss_fn(model(x), y, mask)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
