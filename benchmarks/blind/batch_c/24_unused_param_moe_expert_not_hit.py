"""Sparse MoE block in the HF Mixtral/Qwen-MoE style: the expert loop does
`if top_x.shape[0] == 0: continue`, skipping experts that got no tokens. With top-1
routing on this batch several experts are never selected, so their weights get no gradient,
while the router (through the load-balancing loss) and the other experts train.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.moe.experts[UNUSED].w1.weight"
EXPECT = "grad_none"

UNUSED = 3


class ExpertMLP(nn.Module):
    def __init__(self, d, ff):
        super().__init__()
        self.w1 = nn.Linear(d, ff, bias=False)
        self.w2 = nn.Linear(ff, d, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)))


class SparseMoeBlock(nn.Module):
    def __init__(self, d=16, ff=32, num_experts=8, top_k=1):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.gate = nn.Linear(d, num_experts, bias=False)
        self.experts = nn.ModuleList([ExpertMLP(d, ff) for _ in range(num_experts)])

    def forward(self, hidden_states):
        b, t, d = hidden_states.shape
        h = hidden_states.view(-1, d)
        router_logits = self.gate(h)
        routing_weights = F.softmax(router_logits, dim=1)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        final = torch.zeros_like(h)
        expert_mask = F.one_hot(selected_experts, self.num_experts).permute(2, 1, 0)
        for expert_idx in range(self.num_experts):
            idx, top_x = torch.where(expert_mask[expert_idx])
            if top_x.shape[0] == 0:
                continue  # <-- CUT
            current = h[top_x]
            out = self.experts[expert_idx](current) * routing_weights[top_x, idx, None]
            final.index_add_(0, top_x, out)
        return final.view(b, t, d), router_logits


def load_balancing_loss(router_logits, num_experts):
    probs = F.softmax(router_logits, dim=-1)
    mask = F.one_hot(probs.argmax(dim=-1), num_experts).float()
    return num_experts * (mask.mean(0) * probs.mean(0)).sum()


class TinyMoELM(nn.Module):
    def __init__(self, vocab=40, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.moe = SparseMoeBlock(d)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, ids):
        h = self.embed(ids)
        moe_out, router_logits = self.moe(h)
        return self.lm_head(h + moe_out), router_logits


def run():
    torch.manual_seed(0)
    model = TinyMoELM()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 40, (2, 6))
    logits, router_logits = model(ids)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 40), ids[:, 1:].reshape(-1))
    loss = loss + 0.01 * load_balancing_loss(router_logits, 8)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "UNUSED": UNUSED}
