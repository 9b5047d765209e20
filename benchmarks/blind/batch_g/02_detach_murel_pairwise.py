"""MuRel-style VQA cell: a bilinear fusion of region features with the question,
then a pairwise relation module over the fused regions. When porting to a newer
PyTorch the authors detached the pairwise input to avoid a slow indexing
backward, so the question/region fusion layer never receives a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.cell.fusion.linear_v.weight"
EXPECT = "grad_none"


class Block(nn.Module):
    """Low-rank bilinear fusion (very small stand-in for block fusion)."""

    def __init__(self, dim_v, dim_q, dim_out, rank=16):
        super().__init__()
        self.linear_v = nn.Linear(dim_v, rank)
        self.linear_q = nn.Linear(dim_q, rank)
        self.linear_out = nn.Linear(rank, dim_out)

    def forward(self, v, q):
        return self.linear_out(torch.tanh(self.linear_v(v)) * torch.tanh(self.linear_q(q)))


class Pairwise(nn.Module):
    def __init__(self, dim, coords_dim=4):
        super().__init__()
        self.f_feat = nn.Linear(2 * dim, dim)
        self.f_coord = nn.Linear(2 * coords_dim, dim)

    def forward(self, mm, coords):
        b, n, d = mm.shape
        # all region pairs (i, j)
        mm_i = mm[:, :, None, :].expand(b, n, n, d)
        mm_j = mm[:, None, :, :].expand(b, n, n, d)
        c_i = coords[:, :, None, :].expand(b, n, n, coords.shape[-1])
        c_j = coords[:, None, :, :].expand(b, n, n, coords.shape[-1])
        rel = self.f_feat(torch.cat([mm_i, mm_j], -1)) + self.f_coord(torch.cat([c_i, c_j], -1))
        return rel.max(dim=2)[0]


class MuRelCell(nn.Module):
    def __init__(self, dim_v=24, dim_q=20, dim=24):
        super().__init__()
        self.fusion = Block(dim_v, dim_q, dim)
        self.pairwise = Pairwise(dim)

    def forward(self, q, v, coords):
        n = v.shape[1]
        q_rep = q[:, None, :].expand(-1, n, -1)
        mm = self.fusion(v, q_rep)
        mm = mm.detach()  # <-- CUT
        mm_new = self.pairwise(mm, coords)
        return v + mm_new


class MuRelNet(nn.Module):
    def __init__(self, n_answers=10):
        super().__init__()
        self.q_enc = nn.GRU(16, 20, batch_first=True)
        self.cell = MuRelCell()
        self.classif = nn.Linear(24, n_answers)

    def forward(self, q_tokens, v, coords, n_steps=2):
        _, h = self.q_enc(q_tokens)
        q = h[-1]
        for _ in range(n_steps):
            v = self.cell(q, v, coords)
        return self.classif(v.max(dim=1)[0])


def run():
    torch.manual_seed(0)
    model = MuRelNet()
    opt = torch.optim.Adamax(model.parameters(), lr=3e-4)
    q_tokens = torch.randn(3, 6, 16)
    v = torch.randn(3, 5, 24)
    coords = torch.rand(3, 5, 4)
    answers = torch.tensor([1, 4, 7])
    logits = model(q_tokens, v, coords)
    loss = F.cross_entropy(logits, answers)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
