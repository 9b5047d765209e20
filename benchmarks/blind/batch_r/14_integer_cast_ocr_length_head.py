"""CRNN-style OCR model with a CTC loss plus an auxiliary head that predicts the text
length. The length prediction is cast with `.long()` ("lengths are integers") before the L1
term, so the length head gets no gradient while the CTC path trains.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.len_head.weight"
EXPECT = "grad_none"

N_CLASSES = 11  # 10 digits + blank(0)


class CRNN(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d((4, 1)))
        self.rnn = nn.GRU(8 * 2, d, batch_first=True)
        self.cls = nn.Linear(d, N_CLASSES)
        self.len_head = nn.Linear(d, 1)

    def forward(self, img):
        f = self.conv(img)                      # B, 8, 2, W
        f = f.flatten(1, 2).transpose(1, 2)     # B, W, 16
        h, last = self.rnn(f)
        log_probs = self.cls(h).log_softmax(-1).transpose(0, 1)  # T, B, C
        pred_len = self.len_head(last[-1]).squeeze(-1).long()  # <-- CUT
        return log_probs, pred_len


def run():
    torch.manual_seed(0)
    model = CRNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    img = torch.randn(2, 1, 8, 12)
    targets = torch.tensor([3, 5, 7, 1, 2])
    target_lengths = torch.tensor([3, 2])
    log_probs, pred_len = model(img)
    input_lengths = torch.full((2,), log_probs.shape[0], dtype=torch.long)
    ctc = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=True)
    loss = ctc + 0.1 * F.l1_loss(pred_len.float(), target_lengths.float())
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
