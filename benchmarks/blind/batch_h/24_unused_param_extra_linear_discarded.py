"""Net from the forum question: extra_linear is defined in __init__ and the user believes
it is part of the network because print(model) shows it. In forward it is called on the
hidden state but the result is never assigned, so it does not feed y_pred and its
parameters never get a gradient (middle_linear, reused twice, trains normally).
Thread: discuss.pytorch.org/t/relationship-between-the-net-structure-and-forward/17826
"""
import torch
import torch.nn as nn

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.extra_linear.weight"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self, D_in, H, D_out):
        super().__init__()
        self.input_linear = nn.Linear(D_in, H)
        self.middle_linear = nn.Linear(H, H)
        self.extra_linear = nn.Linear(H, H)
        self.output_linear = nn.Linear(H, D_out)

    def forward(self, x):
        h_relu = self.input_linear(x).clamp(min=0)
        for _ in range(2):
            h_relu = self.middle_linear(h_relu).clamp(min=0)
        self.extra_linear(h_relu).clamp(min=0)  # <-- CUT
        y_pred = self.output_linear(h_relu)
        return y_pred


def run():
    torch.manual_seed(0)
    N, D_in, H, D_out = 16, 10, 20, 3
    x = torch.randn(N, D_in)
    y = torch.randn(N, D_out)
    model = Net(D_in, H, D_out)
    criterion = nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
    y_pred = model(x)
    loss = criterion(y_pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
