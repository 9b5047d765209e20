"""Control (sentence-transformers PR#765 / #274, the maintainer's answer): to fine-tune
inside a larger model, call model.tokenize() and model(features)['sentence_embedding']
instead of encode(). encode() is still used, under no_grad, only for the validation
similarity, and the losses are logged with .item(); the transformer trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.sentence_encoder.word_emb.weight"
EXPECT = "grad_ok"


class TinySentenceTransformer(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.word_emb = nn.Embedding(vocab, dim)
        self.layer = nn.TransformerEncoderLayer(dim, 2, 32, dropout=0.0, batch_first=True)

    def tokenize(self, sentences):
        ids = [[(ord(c) * 7) % 50 for c in s.lower() if c.isalpha()][:10] for s in sentences]
        width = max(len(i) for i in ids)
        return {"input_ids": torch.tensor([i + [0] * (width - len(i)) for i in ids])}

    def forward(self, features):
        tok = self.layer(self.word_emb(features["input_ids"]))
        return {"sentence_embedding": tok.mean(1)}

    @torch.no_grad()
    def encode(self, sentences, convert_to_tensor=True):
        self.eval()
        out = self.forward(self.tokenize(sentences))["sentence_embedding"]
        self.train()
        return out if convert_to_tensor else out.numpy()


class Reranker(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.sentence_encoder = TinySentenceTransformer(dim=dim)
        self.scorer = nn.Bilinear(dim, dim, 1)

    def forward(self, queries, docs):
        q = self.sentence_encoder(self.sentence_encoder.tokenize(queries))["sentence_embedding"]
        d = self.sentence_encoder(self.sentence_encoder.tokenize(docs))["sentence_embedding"]
        return self.scorer(q, d).squeeze(-1)


def run():
    torch.manual_seed(0)
    model = Reranker()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
    queries = ["capital of france", "how tall is everest", "capital of france"]
    docs = ["paris is the capital", "everest is tall", "bananas are yellow"]
    labels = torch.tensor([1.0, 1.0, 0.0])
    loss = F.binary_cross_entropy_with_logits(model(queries, docs), labels)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    val = model.sentence_encoder.encode(["capital of france", "paris is the capital"])
    val_sim = F.cosine_similarity(val[0:1], val[1:2]).item()
    return {"model": model, "loss": loss, "train_loss": loss.item(), "val_sim": val_sim}
