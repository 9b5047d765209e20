"""Person re-ID baseline: ft_net wraps a ResNet and replaces its last layer by
a ClassBlock, but forward re-implements the ResNet stages and returns
`self.classifier(x)` after avgpool. The backbone's own fc is never used, yet the
optimizer still lists model.model.fc.parameters(): its grad is None
(layumi/Person_reID_baseline_pytorch#90).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.model.fc.weight"
EXPECT = "grad_none"


class TinyResNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, num_classes)


class ClassBlock(nn.Module):
    def __init__(self, input_dim, class_num, num_bottleneck=12):
        super().__init__()
        self.add_block = nn.Sequential(nn.Linear(input_dim, num_bottleneck), nn.BatchNorm1d(num_bottleneck),
                                       nn.LeakyReLU(0.1), nn.Dropout(0.5))
        self.classifier = nn.Linear(num_bottleneck, class_num)

    def forward(self, x):
        return self.classifier(self.add_block(x))


class ft_net(nn.Module):
    def __init__(self, class_num):
        super().__init__()
        self.model = TinyResNet()
        self.classifier = ClassBlock(16, class_num)

    def forward(self, x):
        x = F.relu(self.model.bn1(self.model.conv1(x)))
        x = self.model.layer1(x)
        x = self.model.avgpool(x).flatten(1)
        return self.classifier(x)  # <-- CUT


def run():
    torch.manual_seed(0)
    model = ft_net(class_num=5).train()
    ignored_params = list(map(id, model.model.fc.parameters())) + list(map(id, model.classifier.parameters()))
    base_params = filter(lambda p: id(p) not in ignored_params, model.parameters())
    optimizer_ft = torch.optim.SGD([
        {"params": base_params, "lr": 0.01},
        {"params": model.model.fc.parameters(), "lr": 0.1},
        {"params": model.classifier.parameters(), "lr": 0.1},
    ], weight_decay=5e-4, momentum=0.9, nesterov=True)
    inputs = torch.randn(4, 3, 16, 8)
    labels = torch.tensor([0, 1, 2, 3])
    loss = F.cross_entropy(model(inputs), labels)
    optimizer_ft.zero_grad()
    loss.backward()
    optimizer_ft.step()
    return {"model": model, "loss": loss}
