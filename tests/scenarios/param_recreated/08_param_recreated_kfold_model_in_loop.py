"""K-fold cross-validation script: the model and optimizer are built once at the
top, then `model = Net()` is re-created at the start of every fold "to reset the
weights". The optimizer still holds the first model's parameters, which never
get a gradient (and the fold models are never updated).
"""
import torch
import torch.nn as nn

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "optimizer.param_groups[0]['params'][0]"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def run():
    torch.manual_seed(0)
    X, y = torch.randn(12, 6), torch.randint(0, 2, (12,))
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    folds = [torch.arange(0, 6), torch.arange(6, 12)]
    for k, idx in enumerate(folds):
        model = Net()  # <-- CUT
        model.train()
        optimizer.zero_grad()
        loss = criterion(model(X[idx]), y[idx])
        loss.backward()
        optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss}
