"""CTC speech model with a learnable conv front-end. Feature extraction lives in a
featurize() helper written for the data pipeline under torch.inference_mode();
the trainer reuses it and calls .clone() as the error message suggested, so the
front-end never gets a gradient while the encoder and CTC head do.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.frontend[0].weight"
EXPECT = "grad_none"

VOCAB = 12  # index 0 is the CTC blank


class CTCModel(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.frontend = nn.Sequential(nn.Conv1d(1, d, 8, stride=4), nn.GELU())
        self.encoder = nn.GRU(d, d, batch_first=True, bidirectional=True)
        self.ctc_head = nn.Linear(2 * d, VOCAB)


def featurize(model, wave):
    with torch.inference_mode():
        return model.frontend(wave.unsqueeze(1)).transpose(1, 2)  # <-- CUT


def train_step(model, opt, wave, targets, target_lengths):
    feats = featurize(model, wave).clone()
    enc, _ = model.encoder(feats)
    log_probs = F.log_softmax(model.ctc_head(enc), dim=-1).transpose(0, 1)
    input_lengths = torch.full((wave.shape[0],), log_probs.shape[0], dtype=torch.long)
    loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=True)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def run():
    torch.manual_seed(0)
    model = CTCModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    wave = torch.randn(3, 160)
    target_lengths = torch.tensor([5, 4, 6])
    targets = torch.randint(1, VOCAB, (int(target_lengths.sum()),))
    loss = train_step(model, opt, wave, targets, target_lengths)
    return {"model": model, "loss": loss}
