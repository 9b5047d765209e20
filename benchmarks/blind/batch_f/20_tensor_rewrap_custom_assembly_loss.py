"""After Wuziyi616/multi_part_assembly#4 ("Including a new loss in the computation graph"):
a user adds a custom loss to `_calc_loss` next to trans_loss / rot_pt_cd_loss. It is computed
per sample and packed with torch.tensor(...), so in the printed loss_dict it is the only entry
without grad_fn; the contact head that only this loss uses gets .grad None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.contact_head.weight"
EXPECT = "grad_none"


class PNTransformerLite(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(3, d), nn.ReLU(), nn.Linear(d, d))
        self.pose_head = nn.Linear(d, 7)      # translation (3) + quaternion (4)
        self.contact_head = nn.Linear(d, 3)   # predicted contact point per part

    def forward(self, part_pcs):
        feat = self.encoder(part_pcs).max(dim=2).values          # B, P, d
        pose = self.pose_head(feat)
        trans, quat = pose[..., :3], F.normalize(pose[..., 3:], dim=-1)
        return {"trans": trans, "quat": quat, "contact": self.contact_head(feat)}


class BaseModel:
    def __init__(self, model, loss_w):
        self.model, self.loss_w = model, loss_w

    def compute_custom_loss(self, out_dict, data_dict):
        per_sample = []
        for b in range(len(data_dict["data_id"])):
            c = out_dict["contact"][b]
            gap = (c[:, None] - c[None]).norm(dim=-1).min(dim=1).values.mean()
            per_sample.append(gap)
        return torch.tensor(per_sample)  # <-- CUT

    def _calc_loss(self, out_dict, data_dict):
        trans_loss = F.mse_loss(out_dict["trans"], data_dict["gt_trans"], reduction="none").mean(-1).mean(-1)
        rot_loss = (1 - (out_dict["quat"] * data_dict["gt_quat"]).sum(-1).abs()).mean(-1)
        custom_loss = self.compute_custom_loss(out_dict, data_dict)
        loss_dict = {"trans_loss": trans_loss, "rot_loss": rot_loss, "custom_loss": custom_loss}
        return loss_dict

    def training_step(self, data_dict, optimizer):
        out_dict = self.model(data_dict["part_pcs"])
        loss_dict = self._calc_loss(out_dict, data_dict)
        loss = sum(self.loss_w[k] * v.mean() for k, v in loss_dict.items())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss, loss_dict


def run():
    torch.manual_seed(0)
    model = PNTransformerLite()
    wrapper = BaseModel(model, {"trans_loss": 1.0, "rot_loss": 0.2, "custom_loss": 0.5})
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    B, P, N = 2, 3, 10
    data_dict = {
        "data_id": list(range(B)),
        "part_pcs": torch.randn(B, P, N, 3),
        "gt_trans": torch.randn(B, P, 3) * 0.1,
        "gt_quat": F.normalize(torch.randn(B, P, 4), dim=-1),
    }
    loss, loss_dict = wrapper.training_step(data_dict, optimizer)
    return {"model": model, "loss": loss, "loss_dict": loss_dict}
