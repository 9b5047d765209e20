"""Multi-view transformer refiner (qianyu-dlut/MVANet#2): after building the model,
the init code walks self.modules() and sets `m.inplace = True` on every ReLU and
Dropout to save memory. In the feed-forward block the in-place dropout then
overwrites the ReLU output that ReLU saved for backward, and loss.backward() raises
"output 0 of ReluBackward0 ... modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TransformerEncoderLayer(nn.Module):
    def __init__(self, d_model=16, nhead=2, dim_ff=32, dropout=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=True)
        self.linear1 = nn.Linear(d_model, dim_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.activation = nn.ReLU()

    def forward(self, src):
        src2, _ = self.self_attn(src, src, src)
        src = self.norm1(src + src2)
        h = self.activation(self.linear1(src))
        h = self.dropout(h)  # <-- CUT
        src = self.norm2(src + self.linear2(h))
        return src


class MVANetLite(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, 16, 4, 4)
        self.refiner = TransformerEncoderLayer()
        self.head = nn.Linear(16, 16)
        for m in self.modules():
            if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
                m.inplace = True

    def forward(self, x):
        tok = self.patch(x).flatten(2).transpose(1, 2)
        tok = self.refiner(tok)
        b, n, _ = tok.shape
        logits = self.head(tok).view(b, n, 4, 4)
        side = int(n ** 0.5)
        return logits.reshape(b, side, side, 4, 4).permute(0, 1, 3, 2, 4).reshape(b, 1, side * 4, side * 4)


def run():
    torch.manual_seed(0)
    model = MVANetLite()
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-5)
    img = torch.randn(2, 3, 16, 16)
    gt = (torch.rand(2, 1, 16, 16) > 0.5).float()
    opt.zero_grad()
    pred = model(img)
    loss = F.binary_cross_entropy_with_logits(pred, gt)
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
