"""sentence-transformers#255 "Fine tuning in a nested fashion": a paragraph model calls
`self.sentence_encoder.encode(paragraph)` for every paragraph, stacks the sentence
embeddings and trains Linear layers on top. encode() runs under torch.no_grad() (and
eval()), so the transformer never fine-tunes; only the head gets gradients.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.sentence_encoder.word_emb.weight"
EXPECT = "grad_none"


class TinySentenceTransformer(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.word_emb = nn.Embedding(vocab, dim)
        self.layer = nn.TransformerEncoderLayer(dim, 2, 32, dropout=0.0, batch_first=True)

    def tokenize(self, sentences):
        ids = [[(ord(c) * 7) % 50 for c in s.lower() if c.isalpha()][:10] for s in sentences]
        width = max(len(i) for i in ids)
        return torch.tensor([i + [0] * (width - len(i)) for i in ids])

    def forward(self, features):
        tok = self.layer(self.word_emb(features))
        return {"sentence_embedding": tok.mean(1)}

    def encode(self, sentences, convert_to_numpy=True):
        self.eval()
        features = self.tokenize(sentences)
        with torch.no_grad():
            out = self.forward(features)["sentence_embedding"]  # <-- CUT
        return out.numpy() if convert_to_numpy else list(out)


class ParagraphClassifier(nn.Module):
    def __init__(self, dim=16, n_classes=3):
        super().__init__()
        self.sentence_encoder = TinySentenceTransformer(dim=dim)
        self.fc1 = nn.Linear(dim, 32)
        self.fc2 = nn.Linear(32, n_classes)

    def forward(self, batch_of_paragraphs):
        src_tensors = []
        for paragraph in batch_of_paragraphs:
            paragraph_tensor = self.sentence_encoder.encode(paragraph, convert_to_numpy=False)
            src_tensors.append(torch.stack(paragraph_tensor))
        src = torch.stack(src_tensors).mean(1)
        return self.fc2(F.relu(self.fc1(src)))


def run():
    torch.manual_seed(0)
    paragraphs = [["The cat sat.", "It was warm.", "Then it left."],
                  ["Stocks fell today.", "Markets are down.", "Investors worry."]]
    labels = torch.tensor([0, 2])
    model = ParagraphClassifier()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
    model.train()
    loss = F.cross_entropy(model(paragraphs), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
