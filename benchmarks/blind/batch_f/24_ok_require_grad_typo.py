"""Control from udacity/deep-learning-v2-pytorch#12: the transfer-learning notebook "freezes"
the VGG feature layers with `param.require_grad = False` (missing "s"). That only adds an
unused attribute; the features keep requires_grad=True and receive gradients from the new
classifier head's loss. features[0].weight.grad is a normal nonzero gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "vgg16.features[0].weight"
EXPECT = "grad_ok"


class VGGLite(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Linear(16 * 2 * 2, 32), nn.ReLU(inplace=True),
                                        nn.Dropout(0.5), nn.Linear(32, 1000))

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def run():
    torch.manual_seed(0)
    vgg16 = VGGLite()
    # Freeze training for all "features" layers
    for param in vgg16.features.parameters():
        param.require_grad = False
    n_inputs = vgg16.classifier[3].in_features
    vgg16.classifier[3] = nn.Linear(n_inputs, 5)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(vgg16.classifier.parameters(), lr=0.001)
    data = torch.randn(4, 3, 8, 8)
    target = torch.tensor([0, 4, 2, 1])
    vgg16.train()
    optimizer.zero_grad()
    output = vgg16(data)
    loss = criterion(output, target)  # <-- CUT
    loss.backward()
    optimizer.step()
    return {"vgg16": vgg16, "optimizer": optimizer, "loss": loss}
