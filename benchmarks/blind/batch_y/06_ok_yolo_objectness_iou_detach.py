"""Control: YOLOv5 ComputeLoss for one detection layer. build_targets only indexes, and the
objectness target is the detached, clamped IoU of each matched prediction (iou.detach().clamp(0)),
which is deliberate. Loss items are logged via .detach()/.item(). The box, objectness and class
losses all reach the head, so model.m[0].weight has a normal gradient.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.m[0].weight"
EXPECT = "grad_ok"

HYP = {"box": 0.05, "obj": 1.0, "cls": 0.5, "anchor_t": 4.0}


class Detect(nn.Module):
    def __init__(self, nc=2, ch=8):
        super().__init__()
        self.nc, self.na, self.no = nc, 3, nc + 5
        self.anchors = torch.tensor([[1.25, 1.625], [2.0, 3.75], [4.125, 2.875]])
        self.backbone = nn.Sequential(nn.Conv2d(3, ch, 3, 2, 1), nn.SiLU())
        self.m = nn.ModuleList([nn.Conv2d(ch, self.na * self.no, 1)])

    def forward(self, x):
        p = self.m[0](self.backbone(x))
        bs, _, ny, nx = p.shape
        return [p.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()]


def bbox_iou(box1, box2, eps=1e-7):
    (x1, y1, w1, h1), (x2, y2, w2, h2) = box1.chunk(4, -1), box2.chunk(4, -1)
    iw = (torch.min(x1 + w1 / 2, x2 + w2 / 2) - torch.max(x1 - w1 / 2, x2 - w2 / 2)).clamp(0)
    ih = (torch.min(y1 + h1 / 2, y2 + h2 / 2) - torch.max(y1 - h1 / 2, y2 - h2 / 2)).clamp(0)
    inter = iw * ih
    return inter / (w1 * h1 + w2 * h2 - inter + eps)


class ComputeLoss:
    def __init__(self, model):
        self.model = model
        self.BCEcls = nn.BCEWithLogitsLoss()
        self.BCEobj = nn.BCEWithLogitsLoss()

    def build_targets(self, p, targets):
        na = self.model.na
        ny, nx = p[0].shape[2:4]
        t = targets.repeat(na, 1, 1)
        ai = torch.arange(na).view(na, 1).repeat(1, targets.shape[0])
        gain = torch.tensor([1, 1, nx, ny, nx, ny], dtype=torch.float)
        t = t * gain
        r = t[..., 4:6] / self.model.anchors[:, None]
        j = torch.max(r, 1 / r).max(2)[0] < HYP["anchor_t"]
        t, a = t[j], ai[j]
        b, c = t[:, 0].long(), t[:, 1].long()
        gxy, gwh = t[:, 2:4], t[:, 4:6]
        gij = gxy.long()
        gi, gj = gij.T
        tbox = torch.cat((gxy - gij, gwh), 1)
        return c, tbox, (b, a, gj.clamp_(0, ny - 1), gi.clamp_(0, nx - 1)), self.model.anchors[a]

    def __call__(self, p, targets):
        lcls, lbox, lobj = torch.zeros(1), torch.zeros(1), torch.zeros(1)
        tcls, tbox, (b, a, gj, gi), anch = self.build_targets(p, targets)
        pi = p[0]
        tobj = torch.zeros(pi.shape[:4])
        pxy, pwh, _, pcls = pi[b, a, gj, gi].split((2, 2, 1, self.model.nc), 1)
        pxy = pxy.sigmoid() * 2 - 0.5
        pwh = (pwh.sigmoid() * 2) ** 2 * anch
        iou = bbox_iou(torch.cat((pxy, pwh), 1), tbox).squeeze()
        lbox += (1.0 - iou).mean()
        iou = iou.detach().clamp(0).type(tobj.dtype)
        tobj[b, a, gj, gi] = iou
        t = torch.zeros_like(pcls)
        t[range(len(tcls)), tcls] = 1.0
        lcls += self.BCEcls(pcls, t)
        lobj += self.BCEobj(pi[..., 4], tobj)
        bs = tobj.shape[0]
        loss = (lbox * HYP["box"] + lobj * HYP["obj"] + lcls * HYP["cls"]) * bs  # <-- CUT
        return loss, torch.cat((lbox, lobj, lcls)).detach()


def run():
    torch.manual_seed(0)
    model = Detect()
    compute_loss = ComputeLoss(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937, nesterov=True)
    imgs = torch.rand(2, 3, 16, 16)
    targets = torch.tensor([[0, 1, 0.30, 0.40, 0.20, 0.30],
                            [1, 0, 0.60, 0.55, 0.35, 0.25],
                            [1, 1, 0.20, 0.70, 0.15, 0.20]])
    pred = model(imgs)
    loss, loss_items = compute_loss(pred, targets)
    optimizer.zero_grad()
    loss.backward()
    log = {"box": loss_items[0].item(), "obj": loss_items[1].item(), "cls": loss_items[2].item()}
    optimizer.step()
    return {"model": model, "loss": loss, "loss_items": loss_items, "log": log}
