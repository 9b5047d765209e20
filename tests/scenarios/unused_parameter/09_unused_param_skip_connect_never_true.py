"""Reproduces Lee-zix/RE-GCN#8: the RGCN layers are built with skip_connect=True, but the model
always calls `layer(g, [], init_rel_emb[i])`, so in the layer's forward the condition
`len(prev_h) != 0 and self.skip_connect` is never true and the skip-connection gate is
skipped every step: layers[1].skip_connect_weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.layers[1].skip_connect_weight"
EXPECT = "grad_none"


class Graph:
    """Minimal stand-in for a DGL graph: edge list plus a node-data dict."""

    def __init__(self, src, dst, rel, num_nodes):
        self.src, self.dst, self.rel = src, dst, rel
        self.num_nodes = num_nodes
        self.ndata = {}


class UnionRGCNLayer(nn.Module):
    def __init__(self, in_feat, out_feat, skip_connect=False, self_loop=True):
        super().__init__()
        self.skip_connect = skip_connect
        self.self_loop = self_loop
        self.weight_neighbor = nn.Parameter(torch.empty(in_feat, out_feat))
        nn.init.xavier_uniform_(self.weight_neighbor)
        if self_loop:
            self.loop_weight = nn.Parameter(torch.empty(in_feat, out_feat))
            nn.init.xavier_uniform_(self.loop_weight)
        if skip_connect:
            self.skip_connect_weight = nn.Parameter(torch.empty(out_feat, out_feat))
            nn.init.xavier_uniform_(self.skip_connect_weight)
            self.skip_connect_bias = nn.Parameter(torch.zeros(out_feat))

    def forward(self, g, prev_h, emb_rel):
        h = g.ndata["h"]
        if len(prev_h) != 0 and self.skip_connect:  # <-- CUT
            skip_weight = torch.sigmoid(prev_h @ self.skip_connect_weight + self.skip_connect_bias)
        else:
            skip_weight = None
        msg = (h[g.src] + emb_rel[g.rel]) @ self.weight_neighbor
        agg = torch.zeros(g.num_nodes, msg.shape[1]).index_add(0, g.dst, msg)
        deg = torch.zeros(g.num_nodes).index_add(0, g.dst, torch.ones(len(g.dst))).clamp(min=1)
        node_repr = agg / deg[:, None]
        if self.self_loop:
            node_repr = node_repr + h @ self.loop_weight
        if skip_weight is not None:
            node_repr = skip_weight * node_repr + (1 - skip_weight) * prev_h
        g.ndata["h"] = F.rrelu(node_repr, training=False)


class RecurrentRGCN(nn.Module):
    def __init__(self, num_ents=6, num_rels=3, h_dim=8, num_layers=2):
        super().__init__()
        self.dynamic_emb = nn.Parameter(torch.randn(num_ents, h_dim) * 0.1)
        self.emb_rel = nn.Parameter(torch.randn(num_rels, h_dim) * 0.1)
        self.layers = nn.ModuleList(
            [UnionRGCNLayer(h_dim, h_dim, skip_connect=True) for _ in range(num_layers)])
        self.decoder = nn.Linear(2 * h_dim, num_ents)

    def forward(self, g, triples):
        g.ndata["h"] = F.normalize(self.dynamic_emb)
        init_rel_emb = [self.emb_rel] * len(self.layers)
        for i, layer in enumerate(self.layers):
            layer(g, [], init_rel_emb[i])
        h = g.ndata["h"]
        query = torch.cat([h[triples[:, 0]], self.emb_rel[triples[:, 1]]], dim=1)
        return self.decoder(query)


def run():
    torch.manual_seed(0)
    model = RecurrentRGCN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = Graph(src=torch.tensor([0, 1, 2, 3, 4, 5, 1]), dst=torch.tensor([1, 2, 3, 4, 5, 0, 3]),
              rel=torch.tensor([0, 1, 2, 0, 1, 2, 0]), num_nodes=6)
    triples = torch.tensor([[0, 1, 2], [3, 0, 4], [5, 2, 1]])
    loss = F.cross_entropy(model(g, triples), triples[:, 2])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
