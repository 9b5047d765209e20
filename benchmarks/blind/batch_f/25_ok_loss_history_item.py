"""Control from mrdbourke/pytorch-deep-learning#583: plotting the loss curves failed with
"Can't call numpy() on Tensor that requires grad" because train_loss was accumulated as a
tensor; the course code uses `loss.item()`. With `.item()` in the train step, the history is
plain floats and the model's gradients are untouched: conv_block_1[0].weight.grad is nonzero.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model_0.conv_block_1[0].weight"
EXPECT = "grad_ok"


class TinyVGG(nn.Module):
    def __init__(self, input_shape=3, hidden_units=8, output_shape=3):
        super().__init__()
        self.conv_block_1 = nn.Sequential(
            nn.Conv2d(input_shape, hidden_units, 3, padding=1), nn.ReLU(),
            nn.Conv2d(hidden_units, hidden_units, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(hidden_units * 4 * 4, output_shape))

    def forward(self, x):
        return self.classifier(self.conv_block_1(x))


def train_step(model, batches, loss_fn, optimizer):
    model.train()
    train_loss, train_acc = 0, 0
    for X, y in batches:
        y_pred = model(X)
        loss = loss_fn(y_pred, y)  # <-- CUT
        train_loss += loss.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        y_pred_class = torch.argmax(torch.softmax(y_pred, dim=1), dim=1)
        train_acc += (y_pred_class == y).sum().item() / len(y_pred)
    return train_loss / len(batches), train_acc / len(batches)


def run():
    torch.manual_seed(0)
    model_0 = TinyVGG()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(params=model_0.parameters(), lr=0.001)
    batches = [(torch.randn(4, 3, 8, 8), torch.randint(0, 3, (4,))) for _ in range(2)]
    results = {"train_loss": [], "train_acc": []}
    train_loss, train_acc = train_step(model_0, batches, loss_fn, optimizer)
    results["train_loss"].append(train_loss)
    results["train_acc"].append(train_acc)
    return {"model_0": model_0, "results": results, "optimizer": optimizer}
