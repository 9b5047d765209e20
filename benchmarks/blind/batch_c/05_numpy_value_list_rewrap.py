"""CNN regression training loop where the first output column is copied element by
element into a Python list through .cpu().detach().numpy(), re-wrapped with
torch.Tensor(value_list) and given requires_grad = True "so that backward works".
backward runs, but the CNN never gets a gradient: cnn.conv1.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "cnn.conv1.weight"
EXPECT = "grad_none"


class CNN(nn.Module):
    def __init__(self, n_out=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, n_out)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def run():
    torch.manual_seed(0)
    cnn = CNN()
    model = cnn.to(torch.float32)
    loss_func = nn.MSELoss()
    optimizer = torch.optim.SGD(cnn.parameters(), lr=0.001, momentum=0.9)
    train_data = [(torch.randn(4, 3, 16, 16), torch.rand(4)) for _ in range(2)]
    train_loss, train_acc = 0.0, 0.0
    for i, (inputs, labels) in enumerate(train_data):
        optimizer.zero_grad()
        outputs = model(inputs)
        ret, predictions = torch.max(outputs.data, 1)
        value_list = []
        for row in outputs[:, :1].cpu().detach().numpy():  # <-- CUT
            for j in row:
                value_list.append(j)
        outputs = torch.Tensor(value_list)
        outputs.requires_grad = True
        loss = loss_func(outputs, labels)
        loss.backward()
        optimizer.step()
        train_loss += loss.item() * inputs.size(0)
        train_acc += (predictions == 0).float().mean().item()
    return {"cnn": cnn, "optimizer": optimizer, "loss": loss, "train_loss": train_loss}
