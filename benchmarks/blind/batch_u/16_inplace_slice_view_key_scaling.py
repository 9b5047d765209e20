"""pytorch/pytorch#96265 ("one of the variables needed for gradient computation has been
modified by an inplace operation", report without details; reconstructed): a gated
attention block slices a sigmoid output into query/key halves (gates[..., :d] and
gates[..., d:]) and then scales the key half in place (k.mul_(scale)). The slice is a
view of sigmoid's saved output, so backward raises the in-place modification error."""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class GatedAttention(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.qk = nn.Linear(d, 2 * d)
        self.v = nn.Linear(d, d)

    def forward(self, x):
        gates = torch.sigmoid(self.qk(x))
        d = gates.shape[-1] // 2
        q, k = gates[..., :d], gates[..., d:]
        k.mul_(d ** -0.5)  # <-- CUT
        attn = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        return attn @ self.v(x)


def run():
    torch.manual_seed(0)
    model = GatedAttention()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(2, 5, 8)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
