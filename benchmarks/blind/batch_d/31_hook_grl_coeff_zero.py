"""CDAN-style domain adaptation: the gradient reversal is a tensor hook,
`x.register_hook(grl_hook(coeff))`, with coeff from the calc_coeff(iter_num)
warm-up schedule. The user's refactor computes coeff before incrementing
iter_num, so on the first iteration coeff is exactly 0 and the hook returns
-0 * grad: the target-domain adapter gets an all-zero gradient (thuml/CDAN#6; adapted).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "target_adapter.weight"
EXPECT = "grad_zero"


def calc_coeff(iter_num, high=1.0, low=0.0, alpha=10.0, max_iter=10000.0):
    return float(2.0 * (high - low) / (1.0 + np.exp(-alpha * iter_num / max_iter)) - (high - low) + low)


def grl_hook(coeff):
    def fun1(grad):
        return -coeff * grad.clone()  # <-- CUT
    return fun1


class AdversarialNetwork(nn.Module):
    def __init__(self, in_feature, hidden_size):
        super().__init__()
        self.ad_layer1 = nn.Linear(in_feature, hidden_size)
        self.ad_layer2 = nn.Linear(hidden_size, 1)
        self.iter_num = 0

    def forward(self, x):
        coeff = calc_coeff(self.iter_num)
        if self.training:
            self.iter_num += 1
        x = x * 1.0
        x.register_hook(grl_hook(coeff))
        return torch.sigmoid(self.ad_layer2(F.relu(self.ad_layer1(x))))


def run():
    torch.manual_seed(0)
    base = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
    target_adapter = nn.Linear(16, 16)  # only sees target-domain features
    classifier = nn.Linear(16, 3)
    ad_net = AdversarialNetwork(16 * 3, 8).train()
    params = list(base.parameters()) + list(target_adapter.parameters()) + list(classifier.parameters()) + list(ad_net.parameters())
    optimizer = torch.optim.SGD(params, lr=0.001, momentum=0.9)
    xs, ys = torch.randn(4, 10), torch.tensor([0, 1, 2, 0])
    xt = torch.randn(4, 10)
    fs, ft = base(xs), target_adapter(base(xt))
    outputs = classifier(torch.cat([fs, ft]))
    softmax_out = outputs.softmax(dim=1).detach()
    op_out = torch.bmm(softmax_out.unsqueeze(2), torch.cat([fs, ft]).unsqueeze(1))
    ad_out = ad_net(op_out.view(-1, softmax_out.size(1) * 16))
    dc_target = torch.cat([torch.ones(4, 1), torch.zeros(4, 1)])
    transfer_loss = F.binary_cross_entropy(ad_out, dc_target)
    classifier_loss = F.cross_entropy(outputs[:4], ys)
    total_loss = transfer_loss + classifier_loss
    optimizer.zero_grad()
    total_loss.backward()
    optimizer.step()
    return {"target_adapter": target_adapter, "ad_net": ad_net, "total_loss": total_loss}
