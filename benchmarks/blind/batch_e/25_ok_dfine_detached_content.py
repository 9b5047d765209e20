"""Control (Peterande/D-FINE#121): the decoder's initial content queries are
`enc_topk_memory.detach()`, and the asker worries that the backbone then cannot be
trained by the decoder. It can: the full memory is still the key/value of the
decoder's cross-attention and the encoder heads are supervised, so the backbone
gets a normal gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.backbone[0].weight"
EXPECT = "grad_ok"


class DetrLite(nn.Module):
    def __init__(self, d=16, n_cls=3, num_queries=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, d, 4, 4), nn.ReLU())
        self.enc_score_head = nn.Linear(d, n_cls)
        self.enc_bbox_head = nn.Linear(d, 4)
        self.cross_attn = nn.MultiheadAttention(d, 2, batch_first=True)
        self.dec_score_head = nn.Linear(d, n_cls)
        self.num_queries = num_queries

    def forward(self, img):
        memory = self.backbone(img).flatten(2).transpose(1, 2)
        enc_logits = self.enc_score_head(memory)
        topk_ind = enc_logits.max(-1).values.topk(self.num_queries, dim=1).indices
        enc_topk_memory = memory.gather(1, topk_ind.unsqueeze(-1).expand(-1, -1, memory.shape[-1]))
        enc_topk_logits = enc_logits.gather(1, topk_ind.unsqueeze(-1).expand(-1, -1, enc_logits.shape[-1]))
        content = enc_topk_memory.detach()
        out, _ = self.cross_attn(content, memory, memory)
        return self.dec_score_head(out), enc_topk_logits


def run():
    torch.manual_seed(0)
    model = DetrLite()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    img = torch.randn(2, 3, 16, 16)
    labels = torch.randint(0, 3, (2, 4))
    opt.zero_grad()
    dec_logits, enc_logits = model(img)
    loss = F.cross_entropy(dec_logits.flatten(0, 1), labels.flatten()) + F.cross_entropy(enc_logits.flatten(0, 1), labels.flatten())  # <-- CUT
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
