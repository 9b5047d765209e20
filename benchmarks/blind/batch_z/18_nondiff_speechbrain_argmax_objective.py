"""speechbrain#735 "element 0 of tensors does not require grad": the user's Brain
computes its objective from the predicted class index (argmax) against the label,
then needs `loss = Variable(loss, requires_grad=True)` to make fit() run. Training
then runs without error, but the argmax has no gradient and the model never trains.
The TRAIN-stage augmentation that concatenates clean and noisy copies is correct.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "brain.modules.model[0].weight"
EXPECT = "grad_none"

TRAIN, VALID = "train", "valid"


class Brain:
    def __init__(self, modules, opt_class):
        self.modules = nn.ModuleDict(modules)
        self.optimizer = opt_class(self.modules.parameters())

    def fit_batch(self, batch):
        outputs = self.compute_forward(batch, TRAIN)
        loss = self.compute_objectives(outputs, batch, TRAIN)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()


class EmoIdBrain(Brain):
    def prepare_features(self, stage, wavs):
        wavs, wav_lens = wavs
        if stage == TRAIN:
            noisy = wavs + 0.05 * torch.randn_like(wavs)
            wavs = torch.cat([wavs, noisy], dim=0)
            wav_lens = torch.cat([wav_lens, wav_lens])
        frames = wavs.unfold(-1, 32, 16)
        feats = torch.log(torch.fft.rfft(frames).abs().pow(2) + 1e-6)
        return feats - feats.mean(1, keepdim=True), wav_lens

    def compute_forward(self, batch, stage):
        feats, self.feat_lens = self.prepare_features(stage, batch["sig"])
        predict = self.modules.model(feats).mean(1)
        return {"predict": predict}

    def compute_objectives(self, predictions, batch, stage):
        labels = batch["emo_id"]
        if stage == TRAIN:
            labels = torch.cat([labels, labels])
        pred_ids = predictions["predict"].argmax(dim=-1)  # <-- CUT
        loss = F.mse_loss(pred_ids.float(), labels.float())
        loss = Variable(loss, requires_grad=True)
        return loss


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(17, 32), nn.LeakyReLU(), nn.Linear(32, 4))
    brain = EmoIdBrain({"model": model}, lambda p: torch.optim.Adam(p, lr=1e-3))
    batch = {"sig": (torch.randn(3, 256), torch.ones(3)), "emo_id": torch.tensor([0, 2, 3])}
    loss = brain.fit_batch(batch)
    return {"brain": brain, "loss": loss}
