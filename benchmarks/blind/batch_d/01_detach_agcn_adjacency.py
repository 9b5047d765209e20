"""A-GCN multi-label classifier: the label-graph adjacency is built from the
similarity of two learned projections (W_theta, W_phi) of the label embeddings,
but the adjacency is .detach()ed before it reaches the GCN. The GCN and the CNN
train; W_theta and W_phi never get a gradient (queenie88/A-GCN#4).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.attention.w_theta.weight"
EXPECT = "grad_none"


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) * 0.1)

    def forward(self, x, adj):
        support = x @ self.weight
        return adj @ support


class AdaptiveAdjacency(nn.Module):
    """Learns A = softmax(theta(e) phi(e)^T) over the label embeddings."""

    def __init__(self, emb_dim, hid):
        super().__init__()
        self.w_theta = nn.Linear(emb_dim, hid, bias=False)
        self.w_phi = nn.Linear(emb_dim, hid, bias=False)

    def forward(self, label_emb):
        theta = self.w_theta(label_emb)
        phi = self.w_phi(label_emb)
        sim = theta @ phi.t()
        adj = F.softmax(sim, dim=-1)
        return adj


class AGCN(nn.Module):
    def __init__(self, n_labels=6, emb_dim=12, feat_dim=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, feat_dim))
        self.attention = AdaptiveAdjacency(emb_dim, 8)
        self.gc1 = GraphConvolution(emb_dim, 16)
        self.gc2 = GraphConvolution(16, feat_dim)

    def forward(self, img, label_emb):
        feature = self.backbone(img)
        adj = self.attention(label_emb)
        adj = adj.detach()  # <-- CUT
        x = F.leaky_relu(self.gc1(label_emb, adj), 0.2)
        x = self.gc2(x, adj)
        return feature @ x.t()


def run():
    torch.manual_seed(0)
    model = AGCN()
    label_emb = torch.randn(6, 12)  # word-vector inputs, fixed
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    img = torch.randn(4, 3, 8, 8)
    target = (torch.rand(4, 6) > 0.5).float()
    logits = model(img, label_emb)
    loss = F.multilabel_soft_margin_loss(logits, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "opt": opt}
