"""Control: BYOL with the target network under no_grad and the EMA update written through .data;
the target's parameters are frozen on purpose. The online encoder gets a gradient.
Thread: none (control shaped like byol-pytorch)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "ok"
QUERY = 'online[0].weight'
EXPECT = "grad_ok"

def run():
    torch.manual_seed(0)
    online = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16))
    predictor = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16))
    target = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16))
    target.load_state_dict(online.state_dict())
    for p in target.parameters():
        p.requires_grad = False
    opt = torch.optim.SGD(list(online.parameters()) + list(predictor.parameters()), lr=0.05)
    x = torch.randn(8, 10)
    v1, v2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
    with torch.no_grad():
        t1, t2 = target(v1), target(v2)
    p1, p2 = predictor(online(v1)), predictor(online(v2))
    loss = (2 - 2 * F.cosine_similarity(p1, t2.detach(), dim=-1)).mean() + (2 - 2 * F.cosine_similarity(p2, t1, dim=-1)).mean()  # <-- CUT
    opt.zero_grad(); loss.backward(); opt.step()
    for po, pt in zip(online.parameters(), target.parameters()):
        pt.data = 0.99 * pt.data + 0.01 * po.data
    return {"online": online}
