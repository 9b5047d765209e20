"""transfer-nlp finetune_last_layer (feedly/transfer-nlp#14): all layers are
frozen and the classifier is rebuilt with a new final Linear, but the trainer
keeps the optimizer it built before ("maybe do add_param_group"). The optimizer's
old classifier weight gets no grad and the new head is never stepped.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.optimizer.param_groups[0]['params'][-2]"
EXPECT = "grad_none"


class TextClassifier(nn.Module):
    def __init__(self, vocab=50, d=16, num_labels=4):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, d)
        self.classifier = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, num_labels))

    def forward(self, ids):
        return self.classifier(self.embed(ids))


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def finetune_last_layer(self, num_labels):
        for param in self.model.parameters():
            param.requires_grad = False
        number_features = self.model.classifier[-1].in_features
        features = list(self.model.classifier.children())[:-1]
        features.extend([nn.Linear(number_features, num_labels)])
        self.model.classifier = nn.Sequential(*features)  # <-- CUT

    def train_step(self, ids, y):
        loss = F.cross_entropy(self.model(ids), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = Trainer(TextClassifier())
    trainer.finetune_last_layer(num_labels=2)
    ids, y = torch.randint(0, 50, (6, 5)), torch.randint(0, 2, (6,))
    loss = trainer.train_step(ids, y)
    return {"trainer": trainer, "loss": loss}
