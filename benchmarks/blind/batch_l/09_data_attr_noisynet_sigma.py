"""Noisy-Net DQN. NoisyLinear.forward builds the noisy weight as
weight_mu + weight_sigma.data * eps (the .data was copied from a reset_noise snippet).
The target network synced with load_state_dict and the no_grad bootstrap are correct;
weight_mu trains, weight_sigma gets no gradient, so exploration noise never adapts.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "online.fc2.weight_sigma"
EXPECT = "grad_none"


class NoisyLinear(nn.Module):
    def __init__(self, d_in, d_out, sigma0=0.5):
        super().__init__()
        self.weight_mu = nn.Parameter(torch.empty(d_out, d_in).uniform_(-d_in ** -0.5, d_in ** -0.5))
        self.weight_sigma = nn.Parameter(torch.full((d_out, d_in), sigma0 * d_in ** -0.5))
        self.bias = nn.Parameter(torch.zeros(d_out))
        self.register_buffer("eps", torch.zeros(d_out, d_in))

    def reset_noise(self):
        self.eps.normal_()

    def forward(self, x):
        w = self.weight_mu + self.weight_sigma.data * self.eps  # <-- CUT
        return F.linear(x, w, self.bias)


class NoisyQNet(nn.Module):
    def __init__(self, n_obs=6, n_act=3):
        super().__init__()
        self.fc1 = nn.Linear(n_obs, 32)
        self.fc2 = NoisyLinear(32, n_act)

    def forward(self, s):
        return self.fc2(F.relu(self.fc1(s)))

    def reset_noise(self):
        self.fc2.reset_noise()


def run():
    torch.manual_seed(0)
    online, target = NoisyQNet(), NoisyQNet()
    target.load_state_dict(online.state_dict())
    opt = torch.optim.Adam(online.parameters(), lr=1e-4)
    s, s2 = torch.randn(32, 6), torch.randn(32, 6)
    a = torch.randint(0, 3, (32,))
    r = torch.randn(32)
    done = torch.zeros(32)
    online.reset_noise()
    target.reset_noise()
    q = online(s).gather(1, a.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        y = r + 0.99 * (1 - done) * target(s2).max(1).values
    loss = F.smooth_l1_loss(q, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"online": online, "target": target, "loss": loss}
