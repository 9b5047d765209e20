"""SAC-style agent: the critic's features_extractor output is detached inside the critic
forward (meant only for the actor's shared extractor), so the critic extractor never trains.
Thread: DLR-RM/stable-baselines3 share_features_extractor discussion (reconstructed)."""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "critic.features.weight"
EXPECT = "grad_none"


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(4, 8)
        self.q = nn.Linear(8 + 2, 1)

    def forward(self, obs, act):
        f = torch.relu(self.features(obs))
        f = f.detach()  # <-- CUT
        return self.q(torch.cat([f, act], -1))


def run():
    torch.manual_seed(0)
    critic = Critic()
    target = Critic()
    target.load_state_dict(critic.state_dict())
    opt = torch.optim.Adam(critic.parameters(), 1e-3)
    obs, act, rew, nxt = torch.randn(6, 4), torch.randn(6, 2), torch.randn(6, 1), torch.randn(6, 4)
    with torch.no_grad():
        y = rew + 0.99 * target(nxt, torch.zeros(6, 2))
    loss = ((critic(obs, act) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"critic": critic, "loss": loss}
