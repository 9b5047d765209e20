"""Reproduces Ugenteraan/Deep_Hierarchical_Classification#6: the hierarchical dependency loss
D_l is computed from `argmax` predictions of each level, so it carries no gradient (the user
saw identical updates for every beta). Backpropagating the dependency loss on its own to
check its effect raises "element 0 of tensors does not require grad".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

# level-1 superclass -> allowed level-2 subclasses
HIERARCHY = {0: [0, 1], 1: [2, 3], 2: [4, 5]}


class HierarchicalNet(nn.Module):
    def __init__(self, n_sup=3, n_sub=6):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.level_1_fc = nn.Linear(8, n_sup)
        self.level_2_fc = nn.Linear(8 + n_sup, n_sub)

    def forward(self, x):
        h = self.features(x)
        lvl1 = self.level_1_fc(h)
        lvl2 = self.level_2_fc(torch.cat([h, lvl1], dim=1))
        return [lvl1, lvl2]


class HierarchicalLossNetwork:
    def __init__(self, hierarchy, alpha=1.0, beta=0.8, p_loss=3.0):
        self.hierarchy = hierarchy
        self.alpha, self.beta, self.p_loss = alpha, beta, p_loss

    def to_labels(self, logits):
        return torch.argmax(F.softmax(logits, dim=1), dim=1)  # <-- CUT

    def check_hierarchy(self, current_level, previous_level):
        bool_tensor = [int(c) not in self.hierarchy[int(p)]
                       for c, p in zip(current_level, previous_level)]
        return torch.FloatTensor(bool_tensor)

    def calculate_lloss(self, predictions, true_labels):
        return self.alpha * sum(F.cross_entropy(p, t) for p, t in zip(predictions, true_labels))

    def calculate_dloss(self, predictions, true_labels):
        dloss = 0
        for l in range(1, len(predictions)):
            current_lvl_pred = self.to_labels(predictions[l])
            prev_lvl_pred = self.to_labels(predictions[l - 1])
            D_l = self.check_hierarchy(current_lvl_pred, prev_lvl_pred)
            l_prev = torch.where(prev_lvl_pred == true_labels[l - 1], 0.0, 1.0)
            l_curr = torch.where(current_lvl_pred == true_labels[l], 0.0, 1.0)
            dloss = dloss + torch.sum(torch.pow(self.p_loss, D_l * l_prev)
                                      * torch.pow(self.p_loss, D_l * l_curr) - 1)
        return self.beta * dloss


def run():
    torch.manual_seed(0)
    model = HierarchicalNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    criterion = HierarchicalLossNetwork(HIERARCHY)
    images = torch.randn(6, 3, 8, 8)
    sup = torch.tensor([0, 1, 2, 0, 1, 2])
    sub = torch.tensor([1, 2, 4, 0, 3, 5])
    preds = model(images)
    lloss = criterion.calculate_lloss(preds, [sup, sub])
    dloss = criterion.calculate_dloss(preds, [sup, sub])
    print(f"lloss={lloss.item():.4f} dloss={float(dloss):.4f}")
    opt.zero_grad()
    dloss.backward()  # ablation: does the dependency term move the weights at all?
    opt.step()
    return {"model": model, "lloss": lloss, "dloss": dloss}
