"""Control (NeMo PR#13865 "STT with frozen streaming ASR"): a frozen ASR model is
put in eval mode and run under torch.no_grad() inside transcribe(); its greedy
argmax tokens are passed as input to a trainable duplex text model. The frozen
model, the no_grad block and the argmax are intentional; the text model trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.text_lm.embed.weight"
EXPECT = "grad_ok"


class FrozenASR(nn.Module):
    def __init__(self, n_feat=10, vocab=20):
        super().__init__()
        self.encoder = nn.GRU(n_feat, 16, batch_first=True)
        self.head = nn.Linear(16, vocab)

    def freeze(self):
        for p in self.parameters():
            p.requires_grad = False
        self.eval()

    def transcribe(self, audio_feats):
        with torch.no_grad():
            h, _ = self.encoder(audio_feats)
            return self.head(h).argmax(dim=-1)


class TextLM(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        return self.out(h)


class DuplexT2TModel(nn.Module):
    def __init__(self):
        super().__init__()
        self._asr = FrozenASR()
        self._asr.freeze()
        self.text_lm = TextLM()

    def training_step(self, batch):
        source_tokens = self._asr.transcribe(batch["source_audio"])
        logits = self.text_lm(source_tokens)
        loss = F.cross_entropy(logits.flatten(0, 1), batch["target_tokens"].flatten())  # <-- CUT
        return loss


def run():
    torch.manual_seed(0)
    model = DuplexT2TModel()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    batch = {"source_audio": torch.randn(2, 7, 10), "target_tokens": torch.randint(0, 20, (2, 7))}
    loss = model.training_step(batch)
    opt.zero_grad()
    loss.backward()
    opt.step()
    log = {"train_loss": loss.item()}
    return {"model": model, "loss": loss, "log": log}
