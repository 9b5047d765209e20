"""speechbrain#1040: a `Pretrained` speaker-embedding interface is loaded with the
default freeze_params=True and then fine-tuned outside SpeechBrain with a cosine
verification loss on utterance pairs. Every parameter was frozen in __init__, the
Fbank front end is under no_grad on purpose, and loss.backward() raises
"element 0 of tensors does not require grad and does not have a grad_fn".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Fbank(nn.Module):
    def __init__(self, n_mels=12, win=40, hop=20):
        super().__init__()
        self.win, self.hop = win, hop
        self.register_buffer("fb", torch.rand(win // 2 + 1, n_mels))

    def forward(self, wavs):
        frames = wavs.unfold(-1, self.win, self.hop)
        power = torch.fft.rfft(frames).abs().pow(2)
        return torch.log(power @ self.fb + 1e-6)


class ECAPALike(nn.Module):
    def __init__(self, n_mels=12, channels=16, emb=8):
        super().__init__()
        self.tdnn = nn.Conv1d(n_mels, channels, 3, padding=1)
        self.res = nn.Conv1d(channels, channels, 3, padding=2, dilation=2)
        self.fc = nn.Linear(2 * channels, emb)

    def forward(self, feats):
        x = F.relu(self.tdnn(feats.transpose(1, 2)))
        x = x + F.relu(self.res(x))
        stats = torch.cat([x.mean(-1), x.std(-1)], dim=-1)
        return self.fc(stats)


class Pretrained:
    def __init__(self, modules, hparams=None, freeze_params=True):
        self.mods = nn.ModuleDict(modules)
        self.hparams = hparams or {}
        if freeze_params:
            self.mods.eval()
            for p in self.mods.parameters():
                p.requires_grad = False  # <-- CUT

    @classmethod
    def from_hparams(cls, source, savedir=None, **kwargs):
        torch.manual_seed(0)
        return cls({"compute_features": Fbank(), "embedding_model": ECAPALike()}, **kwargs)


class SpeakerRecognition(Pretrained):
    def encode_batch(self, wavs):
        with torch.no_grad():
            feats = self.mods.compute_features(wavs)
        feats = feats - feats.mean(1, keepdim=True)
        return self.mods.embedding_model(feats)


def run():
    torch.manual_seed(0)
    verifier = SpeakerRecognition.from_hparams(source="speechbrain/spkrec-ecapa-voxceleb",
                                               savedir="pretrained_models/spkrec-ecapa-voxceleb")
    params = list(verifier.mods.embedding_model.parameters())
    opt = torch.optim.Adam(params, lr=1e-4)
    wav_a, wav_b = torch.randn(4, 400), torch.randn(4, 400)
    same_speaker = torch.tensor([1.0, -1.0, 1.0, -1.0])
    emb_a, emb_b = verifier.encode_batch(wav_a), verifier.encode_batch(wav_b)
    loss = F.cosine_embedding_loss(emb_a, emb_b, same_speaker, margin=0.2)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"verifier": verifier, "loss": loss}
