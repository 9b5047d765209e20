"""pytorch/pytorch#156212 ("torch.where() can produce nan values for unselected branch
during backward", a clamp-like guard against exp overflow): a Poisson rate head uses
torch.where(z <= z_max, torch.exp(z), fallback). For the large logits exp(z) overflows
to inf in the unselected branch, inf * 0 = nan in backward, and the head's
weight gradient becomes nan."""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.rate.weight"
EXPECT = "grad_nonfinite"


class PoissonHead(nn.Module):
    def __init__(self, d=4, z_max=10.0):
        super().__init__()
        self.rate = nn.Linear(d, 1)
        self.z_max = z_max

    def forward(self, h):
        z = self.rate(h).squeeze(-1)
        fallback = torch.full_like(z, float(torch.tensor(self.z_max).exp()))
        e = torch.exp(z)  # <-- CUT
        return torch.where(z <= self.z_max, e, fallback)


def run():
    torch.manual_seed(0)
    model = PoissonHead()
    h = torch.randn(6, 4)
    h[0] = 60.0  # an outlier feature row pushes one logit far past z_max
    with torch.no_grad():
        model.rate.weight.fill_(2.0)
    counts = torch.poisson(torch.full((6,), 3.0))
    lam = model(h)
    loss = (lam - counts * torch.log(lam)).mean()
    loss.backward()
    return {"model": model, "loss": loss}
