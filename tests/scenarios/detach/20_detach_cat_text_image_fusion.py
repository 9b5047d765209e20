"""Late fusion of image and text features with `torch.cat`. The text branch output is
detached (left over from caching text embeddings), so the fusion head and image encoder
train while the text encoder's weight grad stays None.
"""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "txt_enc.weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    img_enc = nn.Linear(10, 6)
    txt_enc = nn.Linear(7, 6)
    fuse = nn.Linear(12, 2)
    params = [*img_enc.parameters(), *txt_enc.parameters(), *fuse.parameters()]
    opt = torch.optim.Adam(params, lr=1e-3)
    img, txt = torch.randn(5, 10), torch.randn(5, 7)
    y = torch.randint(0, 2, (5,))
    z = torch.cat([torch.relu(img_enc(img)), torch.relu(txt_enc(txt)).detach()], dim=-1)  # <-- CUT
    loss = nn.functional.cross_entropy(fuse(z), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"img_enc": img_enc, "txt_enc": txt_enc, "fuse": fuse, "loss": loss}
