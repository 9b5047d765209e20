"""IPU-style serialized word embedding: for training it is split into chunks,
and `deserialize()` rebuilds a single layer with
`nn.Embedding.from_pretrained(torch.vstack(...), padding_idx=0)`. from_pretrained
freezes by default (freeze=True), so after deparallelize() the word embeddings
silently stop training (huggingface/optimum-graphcore#304).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.embeddings.word_embeddings.weight"
EXPECT = "grad_none"


class SerializedEmbedding(nn.Module):
    def __init__(self, embedding, serialization_factor=2):
        super().__init__()
        self.split_size = embedding.num_embeddings // serialization_factor
        self.split_embeddings = nn.ModuleList(
            [nn.Embedding.from_pretrained(w, freeze=False, padding_idx=0 if i == 0 else None)
             for i, w in enumerate(embedding.weight.detach().split(self.split_size))])

    def deserialize(self):
        return nn.Embedding.from_pretrained(torch.vstack([l.weight for l in self.split_embeddings]), padding_idx=0)  # <-- CUT


class Embeddings(nn.Module):
    def __init__(self, vocab=20, d=8):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d, padding_idx=0)
        self.position_embeddings = nn.Embedding(16, d)
        self.LayerNorm = nn.LayerNorm(d)

    def forward(self, input_ids):
        pos = torch.arange(input_ids.size(1))
        return self.LayerNorm(self.word_embeddings(input_ids) + self.position_embeddings(pos))


class PipelinedBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = Embeddings()
        self.encoder = nn.Sequential(nn.Linear(8, 8), nn.GELU())
        self.cls = nn.Linear(8, 20)

    def parallelize(self):
        self.embeddings.word_embeddings = SerializedEmbedding(self.embeddings.word_embeddings)
        return self

    def deparallelize(self):
        if isinstance(self.embeddings.word_embeddings, SerializedEmbedding):
            self.embeddings.word_embeddings = self.embeddings.word_embeddings.deserialize()
        return self

    def forward(self, input_ids):
        return self.cls(self.encoder(self.embeddings(input_ids)))


def run():
    torch.manual_seed(0)
    model = PipelinedBert().parallelize()
    model.deparallelize()  # continue training on CPU/GPU
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    input_ids = torch.randint(1, 20, (2, 6))
    logits = model(input_ids)
    loss = F.cross_entropy(logits.view(-1, 20), input_ids.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
