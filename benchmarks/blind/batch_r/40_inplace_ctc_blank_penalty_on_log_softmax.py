"""OCR model decoded with CTC: to stop the model collapsing to blanks the user subtracts a
"blank penalty" from the blank column of the log-probabilities in place
(`log_probs[:, :, 0] -= penalty`). That writes into log_softmax's saved output; backward raises.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

CFG = {"classes": 11, "blank_penalty": 0.5}


class TinyCRNN(nn.Module):
    def __init__(self, n_classes, d=16):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((1, 10)))
        self.rnn = nn.LSTM(4, d, batch_first=True)
        self.fc = nn.Linear(d, n_classes)

    def forward(self, img):
        f = self.conv(img).squeeze(2).transpose(1, 2)  # B, T, 4
        h, _ = self.rnn(f)
        return F.log_softmax(self.fc(h), dim=-1).transpose(0, 1)  # T, B, C


def ctc_step(model, img, targets, target_lengths, cfg):
    log_probs = model(img)
    log_probs[:, :, 0] -= cfg["blank_penalty"]  # <-- CUT
    input_lengths = torch.full((img.shape[0],), log_probs.shape[0], dtype=torch.long)
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, zero_infinity=True)


def run():
    torch.manual_seed(0)
    model = TinyCRNN(CFG["classes"])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    img = torch.randn(2, 1, 8, 20)
    targets = torch.tensor([1, 4, 4, 9, 2])
    target_lengths = torch.tensor([3, 2])
    loss = ctc_step(model, img, targets, target_lengths, CFG)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
