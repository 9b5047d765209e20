"""Control. TGN-style link prediction training loop from the TGB examples: the epoch
loss is accumulated with total_loss += float(loss) * n_events (the "converting a tensor
with requires_grad=True to a scalar" warning), the memory is detached between batches
and evaluation runs under no_grad. None of it touches the training graph.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "link_pred.lin_final.weight"
EXPECT = "grad_ok"

NUM_NODES, MEM_DIM, EMB_DIM = 20, 16, 16


class Memory(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRUCell(MEM_DIM + 1, MEM_DIM)
        self.register_buffer("memory", torch.zeros(NUM_NODES, MEM_DIM))

    def update(self, src, dst, t):
        msg = torch.cat([self.memory[dst], t.unsqueeze(1)], dim=1)
        new = self.gru(msg, self.memory[src])
        mem = self.memory.clone()
        mem[src] = new
        return mem

    def detach(self, mem):
        self.memory = mem.detach()


class GraphEmbedding(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(MEM_DIM, EMB_DIM)

    def forward(self, mem, nodes):
        return torch.relu(self.lin(mem[nodes]))


class LinkPredictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin_src = nn.Linear(EMB_DIM, EMB_DIM)
        self.lin_dst = nn.Linear(EMB_DIM, EMB_DIM)
        self.lin_final = nn.Linear(EMB_DIM, 1)

    def forward(self, z_src, z_dst):
        return self.lin_final(torch.relu(self.lin_src(z_src) + self.lin_dst(z_dst)))


def run():
    torch.manual_seed(0)
    memory, gnn, link_pred = Memory(), GraphEmbedding(), LinkPredictor()
    params = set(memory.parameters()) | set(gnn.parameters()) | set(link_pred.parameters())
    optimizer = torch.optim.Adam(params, lr=1e-4)
    batches = [(torch.randint(0, NUM_NODES, (8,)), torch.randint(0, NUM_NODES, (8,)),
                torch.rand(8)) for _ in range(3)]
    total_loss, total_events = 0.0, 0
    for src, dst, t in batches:
        optimizer.zero_grad()
        neg_dst = torch.randint(0, NUM_NODES, (8,))
        mem = memory.update(src, dst, t)
        pos_out = link_pred(gnn(mem, src), gnn(mem, dst))
        neg_out = link_pred(gnn(mem, src), gnn(mem, neg_dst))
        loss = F.binary_cross_entropy_with_logits(pos_out, torch.ones_like(pos_out)) + F.binary_cross_entropy_with_logits(neg_out, torch.zeros_like(neg_out))  # <-- CUT
        loss.backward()
        optimizer.step()
        memory.detach(mem)
        total_loss += float(loss) * src.numel()
        total_events += src.numel()
    with torch.no_grad():
        val_score = torch.sigmoid(link_pred(gnn(memory.memory, src), gnn(memory.memory, dst))).mean()
    return {"memory": memory, "gnn": gnn, "link_pred": link_pred, "optimizer": optimizer,
            "loss": loss, "avg_loss": total_loss / total_events, "val_score": val_score}
