"""Message-passing layer with an edge-feature gate. The gate helper returns the raw
messages when edge_attr is None, which is meant for graphs without edge features. The
batch dict stores them under "edge_features", and the model reads batch.get("edge_attr"),
so the gate is always skipped: node MLPs train and edge_mlp gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.layers[0].edge_mlp.weight"
EXPECT = "grad_none"


class MPLayer(nn.Module):
    def __init__(self, d=16, d_edge=4):
        super().__init__()
        self.msg = nn.Linear(d, d)
        self.edge_mlp = nn.Linear(d_edge, d)
        self.update = nn.Linear(2 * d, d)

    def edge_gate(self, msg, edge_attr):
        if edge_attr is None:
            return msg  # <-- CUT
        return msg * torch.sigmoid(self.edge_mlp(edge_attr))

    def forward(self, x, edge_index, edge_attr=None):
        src, dst = edge_index
        m = self.edge_gate(self.msg(x)[src], edge_attr)
        agg = torch.zeros_like(x).index_add_(0, dst, m)
        return F.relu(self.update(torch.cat([x, agg], dim=-1)))


class EdgeGNN(nn.Module):
    def __init__(self, d_in=8, d=16, n_layers=2):
        super().__init__()
        self.inp = nn.Linear(d_in, d)
        self.layers = nn.ModuleList([MPLayer(d) for _ in range(n_layers)])
        self.out = nn.Linear(d, 1)

    def forward(self, batch):
        x = self.inp(batch["x"])
        for layer in self.layers:
            x = layer(x, batch["edge_index"], batch.get("edge_attr"))
        return self.out(x.mean(0))


def run():
    torch.manual_seed(0)
    batch = {"x": torch.randn(10, 8), "edge_index": torch.randint(0, 10, (2, 24)),
             "edge_features": torch.randn(24, 4), "y": torch.randn(1)}
    model = EdgeGNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = F.mse_loss(model(batch), batch["y"])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
