"""Layer that writes its matmul into a preallocated buffer with out=. That raised
"functions with out=... arguments don't support automatic differentiation", so
the user wrapped the call in torch.no_grad(). Now the loss depends only on the
buffer and loss.backward() raises "element 0 of tensors does not require grad".
Thread: SO, "functions with out=... arguments don't support automatic differentiation" (recalled).
"""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class BufferedLinear(nn.Module):
    def __init__(self, d_in, d_out, max_batch):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_in, d_out) * 0.1)
        self.register_buffer("buf", torch.empty(max_batch, d_out))

    def forward(self, x):
        out = self.buf[: x.size(0)]
        with torch.no_grad():
            torch.matmul(x, self.weight, out=out)  # <-- CUT
        return out


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = BufferedLinear(12, 4, max_batch=64)

    def forward(self, x):
        return self.proj(x).pow(2).mean(-1)


def run():
    torch.manual_seed(0)
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(16, 12)
    target = torch.rand(16)
    loss = ((net(x) - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "loss": loss}
