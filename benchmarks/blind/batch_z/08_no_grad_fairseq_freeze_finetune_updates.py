"""fairseq#2685 "No decrease of wer when fine tuning wav2vec 2.0": Wav2VecEncoder runs
the pretrained transformer under no_grad while num_updates < freeze_finetune_updates.
This hand-written trainer never calls model.set_num_updates(), so the counter stays 0
and the transformer is frozen forever. With feature_grad_mult=0.0 the CNN feature
extractor is also under no_grad, on purpose; only the CTC projection trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.w2v_encoder.w2v_model.encoder.layers[0].linear1.weight"
EXPECT = "grad_none"

CFG = {"freeze_finetune_updates": 10, "feature_grad_mult": 0.0, "max_update": 13000}


class Wav2Vec2Model(nn.Module):
    def __init__(self, dim=16, feature_grad_mult=0.0):
        super().__init__()
        self.feature_extractor = nn.Sequential(nn.Conv1d(1, dim, 10, stride=5), nn.GELU(),
                                               nn.Conv1d(dim, dim, 4, stride=2), nn.GELU())
        self.feature_grad_mult = feature_grad_mult
        layer = nn.TransformerEncoderLayer(dim, 2, 32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def extract_features(self, source):
        if self.feature_grad_mult > 0:
            features = self.feature_extractor(source.unsqueeze(1))
        else:
            with torch.no_grad():
                features = self.feature_extractor(source.unsqueeze(1))
        return self.encoder(features.transpose(1, 2))


class Wav2VecEncoder(nn.Module):
    def __init__(self, cfg, vocab=12):
        super().__init__()
        self.w2v_model = Wav2Vec2Model(feature_grad_mult=cfg["feature_grad_mult"])
        self.freeze_finetune_updates = cfg["freeze_finetune_updates"]
        self.num_updates = 0
        self.proj = nn.Linear(16, vocab)

    def set_num_updates(self, num_updates):
        self.num_updates = num_updates

    def forward(self, source):
        ft = self.freeze_finetune_updates <= self.num_updates
        with torch.no_grad() if not ft else torch.enable_grad():
            x = self.w2v_model.extract_features(source)  # <-- CUT
        return self.proj(x)


class Wav2VecCtc(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.w2v_encoder = Wav2VecEncoder(cfg)

    def forward(self, source):
        return self.w2v_encoder(source).log_softmax(-1)


class Trainer:
    def __init__(self, model, cfg):
        self.model, self.cfg = model, cfg
        self.optimizer = torch.optim.Adam(model.parameters(), lr=5e-5)
        self._num_updates = 0

    def train_step(self, source, target, target_lengths):
        lprobs = self.model(source).transpose(0, 1)
        input_lengths = torch.full((source.size(0),), lprobs.size(0), dtype=torch.long)
        loss = F.ctc_loss(lprobs, target, input_lengths, target_lengths, zero_infinity=True)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self._num_updates += 1
        return loss


def run():
    torch.manual_seed(0)
    model = Wav2VecCtc(CFG)
    trainer = Trainer(model, CFG)
    source = torch.randn(2, 400)
    target = torch.tensor([[3, 5, 7], [2, 2, 9]])
    for _ in range(CFG["freeze_finetune_updates"] + 2):
        loss = trainer.train_step(source, target, torch.tensor([3, 3]))
    return {"model": model, "trainer": trainer, "loss": loss}
