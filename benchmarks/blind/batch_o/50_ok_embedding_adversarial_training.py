"""Control: adversarial training on word embeddings. The clean loss is
backpropagated with retain_graph=True, the perturbation is built from
embedding.weight.grad.data (detached on purpose), and the joint clean +
adversarial loss trains the encoder: its first layer gets a normal gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.network.encoder.weight"
EXPECT = "grad_ok"


class Network(nn.Module):
    def __init__(self, vocab=30, dim=12):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.encoder = nn.Linear(dim, 16)
        self.start_head = nn.Linear(16, 1)
        self.end_head = nn.Linear(16, 1)

    def forward(self, ids, emb_weight=None):
        w = self.embedding.weight if emb_weight is None else emb_weight
        h = torch.tanh(self.encoder(F.embedding(ids, w)))
        return self.start_head(h).squeeze(-1), self.end_head(h).squeeze(-1)


class Model:
    def __init__(self):
        self.network = Network()
        self.optimizer = torch.optim.Adamax(self.network.parameters(), lr=1e-3)

    def adversarial_loss(self, ids, loss, y):
        self.optimizer.zero_grad()
        loss.backward(retain_graph=True)
        grad = self.network.embedding.weight.grad.data
        perturb = F.normalize(grad, p=2, dim=1) * 5.0
        adv_embedding = self.network.embedding.weight + perturb
        start, end = self.network(ids, adv_embedding)
        return F.cross_entropy(start, y[0]) + F.cross_entropy(end, y[1])

    def update(self, ids, y):
        start, end = self.network(ids)
        loss = F.cross_entropy(start, y[0]) + F.cross_entropy(end, y[1])
        loss_adv = self.adversarial_loss(ids, loss, y)
        loss_total = loss + loss_adv  # <-- CUT
        self.optimizer.zero_grad()
        loss_total.backward()
        self.optimizer.step()
        return loss_total


def run():
    torch.manual_seed(0)
    model = Model()
    ids = torch.randint(0, 30, (4, 9))
    y = (torch.randint(0, 9, (4,)), torch.randint(0, 9, (4,)))
    loss = model.update(ids, y)
    return {"model": model, "loss": loss}
