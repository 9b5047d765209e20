"""Manual linear regression (pytorch/pytorch#74158): the weight update is written as
`w = w - lr * w.grad` inside `with torch.no_grad():` instead of `w -= lr * w.grad`.
The new w is computed without grad tracking, so it is a plain tensor with
requires_grad=False, and the next epoch's l.backward() raises.
"""
import torch

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

X = torch.tensor([1, 2, 3, 4], dtype=torch.float32)
Y = torch.tensor([2, 4, 6, 8], dtype=torch.float32)


def predict(w, x):
    return w * x


def loss1(y, y_pred):
    return ((y_pred - y) ** 2).mean()


def run():
    torch.manual_seed(0)
    w = torch.tensor(0.0, dtype=torch.float32, requires_grad=True)
    epochs = 3
    lr = 0.01
    history = []
    for epoch in range(1, epochs + 1):
        y_pred = predict(w, X)
        l = loss1(Y, y_pred)
        l.backward()
        with torch.no_grad():
            w = w - lr * w.grad  # <-- CUT
        history.append(l.item())
    return {"w": w, "history": history}
