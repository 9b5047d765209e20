"""speechbrain PR#713 (fix DP and DDP): in the wav2vec2 fine-tuning recipe the
user prints the params with grad None. Layers 7, 11, 12, 15 are missing only in the
first iteration (LayerDrop, intended), but the last layer never gets a gradient: the
wrapper stops at `output_layer` (set to the layer count minus one), so the last
block never runs in forward and DDP complains about unused parameters.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.wav2vec2.layers[5].linear1.weight"
EXPECT = "grad_none"

HPARAMS = {"num_layers": 6, "dim": 16, "layerdrop": 0.1, "output_layer": 5, "n_tokens": 10}


class Wav2Vec2Encoder(nn.Module):
    def __init__(self, hp):
        super().__init__()
        self.feature_projection = nn.Linear(20, hp["dim"])
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(hp["dim"], 2, 32, dropout=0.0, batch_first=True)
            for _ in range(hp["num_layers"])])
        self.layerdrop = hp["layerdrop"]
        self.output_layer = hp["output_layer"]

    def forward(self, frames):
        x = self.feature_projection(frames)
        for i, layer in enumerate(self.layers):
            if i >= self.output_layer:
                return x  # <-- CUT
            if self.training and torch.rand(()) < self.layerdrop:
                continue
            x = layer(x)
        return x


class ASRBrain(nn.Module):
    def __init__(self, hp):
        super().__init__()
        self.wav2vec2 = Wav2Vec2Encoder(hp)
        self.enc = nn.Sequential(nn.Linear(hp["dim"], 32), nn.LeakyReLU())
        self.ctc_lin = nn.Linear(32, hp["n_tokens"])

    def compute_forward(self, wavs):
        frames = wavs.unfold(-1, 20, 10)
        return self.ctc_lin(self.enc(self.wav2vec2(frames))).log_softmax(-1)


def run():
    torch.manual_seed(0)
    model = ASRBrain(HPARAMS)
    model.train()
    opt = torch.optim.Adadelta(model.parameters(), lr=0.9)
    wavs = torch.randn(2, 210)
    tokens = torch.tensor([[1, 4, 2], [3, 3, 5]])
    p_ctc = model.compute_forward(wavs).transpose(0, 1)
    lens = torch.full((2,), p_ctc.size(0), dtype=torch.long)
    loss = F.ctc_loss(p_ctc, tokens, lens, torch.tensor([3, 3]), blank=0)
    opt.zero_grad()
    loss.backward()
    no_grad = [n for n, p in model.wav2vec2.named_parameters() if p.grad is None]
    opt.step()
    return {"model": model, "loss": loss, "no_grad": no_grad}
