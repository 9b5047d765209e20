"""Reproduces nianticlabs/monodepth2#24: a user modified the trainer so that the validation
batch also updates the depth network, but `val()` runs `process_batch` inside
`with torch.no_grad():`. The loss has no grad_fn and backward raises "element 0 of tensors
does not require grad and does not have a grad_fn" (maintainers: you backprop on validation).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ELU(), nn.Conv2d(8, 8, 3, padding=1), nn.ELU())
        self.disp = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.disp(self.enc(x)))


class Trainer:
    def __init__(self):
        self.model = DepthNet()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.min_depth, self.max_depth = 0.1, 100.0

    def disp_to_depth(self, disp):
        min_disp, max_disp = 1 / self.max_depth, 1 / self.min_depth
        return 1 / (min_disp + (max_disp - min_disp) * disp)

    def compute_losses(self, inputs, outputs):
        target = inputs["color_next"]
        warped = inputs["color"] * outputs["disp"]  # stand-in for the reprojection
        reproj = (warped - target).abs().mean()
        grad_disp = (outputs["disp"][..., 1:] - outputs["disp"][..., :-1]).abs().mean()
        return {"loss": reproj + 1e-3 * grad_disp}

    def process_batch(self, inputs):
        disp = self.model(inputs["color"])
        outputs = {"disp": disp, "depth": self.disp_to_depth(disp)}
        return outputs, self.compute_losses(inputs, outputs)

    def val(self, inputs):
        self.model.eval()
        with torch.no_grad():
            outputs, losses = self.process_batch(inputs)  # <-- CUT
            depth_mean = outputs["depth"].mean().item()
        # modified: also adapt on the validation batch
        self.optimizer.zero_grad()
        losses["loss"].backward()
        self.optimizer.step()
        self.model.train()
        return losses, depth_mean


def run():
    torch.manual_seed(0)
    trainer = Trainer()
    inputs = {"color": torch.rand(2, 3, 8, 8), "color_next": torch.rand(2, 3, 8, 8)}
    losses, depth_mean = trainer.val(inputs)
    return {"trainer": trainer, "losses": losses}
