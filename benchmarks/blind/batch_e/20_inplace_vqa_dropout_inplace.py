"""Bottom-up attention VQA classifier (BierOne/bottom-up-attention-vqa#6): the answer
classifier is Linear -> ReLU -> Dropout(dropout, inplace=True) -> Linear. The in-place
dropout overwrites the ReLU output saved for backward, so loss.backward() raises
"[512, 2048] output 0 of ReluBackward0 ... modified by an inplace operation";
the fix is inplace=False.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout):
        super().__init__()
        self.fc1 = nn.utils.parametrizations.weight_norm(nn.Linear(in_dim, hid_dim), dim=None)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(dropout, inplace=True)
        self.fc2 = nn.utils.parametrizations.weight_norm(nn.Linear(hid_dim, out_dim), dim=None)

    def forward(self, x):
        h = self.relu(self.fc1(x))
        h = self.drop(h)  # <-- CUT
        return self.fc2(h)


class BaseModel(nn.Module):
    def __init__(self, n_tok=50, d=16, v_dim=24, n_ans=10):
        super().__init__()
        self.w_emb = nn.Embedding(n_tok, d)
        self.q_emb = nn.GRU(d, d, batch_first=True)
        self.v_att = nn.Linear(v_dim + d, 1)
        self.q_net = nn.Linear(d, d)
        self.v_net = nn.Linear(v_dim, d)
        self.classifier = SimpleClassifier(d, 2 * d, n_ans, 0.5)

    def forward(self, v, q):
        _, q_h = self.q_emb(self.w_emb(q))
        q_emb = q_h[-1]
        att = F.softmax(self.v_att(torch.cat([v, q_emb.unsqueeze(1).expand(-1, v.size(1), -1)], -1)), 1)
        v_emb = (att * v).sum(1)
        joint = self.q_net(q_emb) * self.v_net(v_emb)
        return self.classifier(joint)


def instance_bce_with_logits(logits, labels):
    return F.binary_cross_entropy_with_logits(logits, labels) * labels.size(1)


def run():
    torch.manual_seed(0)
    model = BaseModel()
    optim = torch.optim.Adamax(model.parameters())
    v = torch.randn(4, 6, 24)
    q = torch.randint(0, 50, (4, 7))
    a = torch.rand(4, 10)
    pred = model(v, q)
    loss = instance_bce_with_logits(pred, a)
    optim.zero_grad()
    loss.backward()
    optim.step()
    return {"model": model, "loss": loss}
