"""Small CTC speech recogniser with a 4x subsampling conv front end. One utterance in the batch
has a transcript longer than its subsampled frame count, so no CTC alignment exists: its loss is
inf (zero_infinity defaults to False) and the gradient is NaN. With anomaly detection on, backward
raises "Function 'CtcLossBackward0' returned nan values" (the forum's NaN-CTC checklist, item 3).
Thread: discuss.pytorch.org/t/151913 (Best practices to solve NaN CTC loss).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

N_MELS, N_CLASSES = 20, 12          # class 0 = blank


class CTCRecognizer(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.subsample = nn.Sequential(nn.Conv1d(N_MELS, hidden, 3, stride=2, padding=1), nn.ReLU(),
                                       nn.Conv1d(hidden, hidden, 3, stride=2, padding=1), nn.ReLU())
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, N_CLASSES)

    def forward(self, mel, mel_lengths):
        h = self.subsample(mel).transpose(1, 2)
        h, _ = self.rnn(h)
        out_lengths = (mel_lengths + 3) // 4
        return self.out(h).log_softmax(-1).transpose(0, 1), out_lengths


class CTCTrainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step(self, mel, mel_lengths, targets, target_lengths):
        log_probs, out_lengths = self.model(mel, mel_lengths)
        loss = F.ctc_loss(log_probs, targets, out_lengths, target_lengths, blank=0)  # <-- CUT
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = CTCTrainer(CTCRecognizer())
    mel = torch.randn(2, N_MELS, 40)
    mel_lengths = torch.tensor([40, 24])                 # second utterance: 6 frames after subsampling
    targets = torch.randint(1, N_CLASSES, (2, 9))
    target_lengths = torch.tensor([7, 9])                # ...but 9 labels
    with torch.autograd.detect_anomaly():
        loss = trainer.step(mel, mel_lengths, targets, target_lengths)
    return {"trainer": trainer, "loss": loss}
