"""EdgeConnect-style model.backward(gen_loss, dis_loss): the generator optimizer
steps right after gen_loss.backward(), and only then dis_loss.backward() runs.
dis_loss saw a non-detached fake, so its graph saved G's weights, which the step
changed in place: "modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class EdgeGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, padding=1)
        self.dec = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.dec(F.relu(self.enc(x))))


class EdgeModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.generator = EdgeGenerator()
        self.discriminator = nn.Sequential(nn.Conv2d(4, 8, 3, stride=2), nn.LeakyReLU(0.2),
                                           nn.Conv2d(8, 1, 3))
        self.gen_optimizer = torch.optim.Adam(self.generator.parameters(), lr=1e-4)
        self.dis_optimizer = torch.optim.Adam(self.discriminator.parameters(), lr=1e-5)

    def process(self, images, edges):
        outputs = self.generator(images)
        dis_real = self.discriminator(torch.cat([images, edges], 1))
        dis_fake = self.discriminator(torch.cat([images, outputs], 1))
        dis_loss = (F.relu(1 - dis_real).mean() + F.relu(1 + dis_fake).mean()) / 2
        gen_fake = self.discriminator(torch.cat([images, outputs], 1))
        gen_loss = -gen_fake.mean() + F.l1_loss(outputs, edges)
        return outputs, gen_loss, dis_loss

    def backward(self, gen_loss, dis_loss):
        self.gen_optimizer.zero_grad()
        gen_loss.backward(retain_graph=True)
        self.gen_optimizer.step()  # <-- CUT
        self.dis_optimizer.zero_grad()
        dis_loss.backward()
        self.dis_optimizer.step()


def run():
    torch.manual_seed(0)
    model = EdgeModel()
    images = torch.rand(2, 3, 12, 12)
    edges = (torch.rand(2, 1, 12, 12) > 0.8).float()
    outputs, gen_loss, dis_loss = model.process(images, edges)
    model.backward(gen_loss, dis_loss)
    return {"model": model}
