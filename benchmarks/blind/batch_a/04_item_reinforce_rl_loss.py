"""ReLeaSE policy-gradient update for a SMILES generator (isayev/ReLeaSE#39): to
dodge a CUDA->numpy error the user writes log_probs[0, top_i].item() in the
REINFORCE sum, then wraps rl_loss in torch.tensor(..., requires_grad=True) so
backward() runs. Every generator weight, e.g. generator.rnn.weight_ih_l0, gets no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "generator.rnn.weight_ih_l0"
EXPECT = "grad_none"


class StackRNNGenerator(nn.Module):
    def __init__(self, n_tokens=12, hidden=24):
        super().__init__()
        self.encoder = nn.Embedding(n_tokens, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.decoder = nn.Linear(hidden, n_tokens)

    def forward(self, inp, hidden=None):
        out, hidden = self.rnn(self.encoder(inp), hidden)
        return self.decoder(out), hidden


class Reinforcement:
    def __init__(self, generator, gamma=0.97):
        self.generator = generator
        self.gamma = gamma
        self.opt = torch.optim.Adam(generator.parameters(), lr=1e-3)

    def policy_gradient(self, trajectories, rewards):
        rl_loss = 0.0
        for traj, reward in zip(trajectories, rewards):
            discounted_reward = reward
            hidden = None
            for p in range(len(traj) - 1):
                output, hidden = self.generator(traj[None, p:p + 1], hidden)
                log_probs = F.log_softmax(output[:, -1], dim=1)
                top_i = traj[p + 1]
                rl_loss -= (log_probs[0, top_i].item() * discounted_reward)  # <-- CUT
                discounted_reward = discounted_reward * self.gamma
        rl_loss = torch.tensor(rl_loss / len(trajectories), requires_grad=True)
        self.opt.zero_grad()
        rl_loss.backward()
        self.opt.step()
        return rl_loss


def run():
    torch.manual_seed(0)
    generator = StackRNNGenerator()
    rl = Reinforcement(generator)
    trajectories = [torch.randint(0, 12, (6,)) for _ in range(3)]
    rewards = [1.0, 0.5, 2.0]
    rl_loss = rl.policy_gradient(trajectories, rewards)
    return {"generator": generator, "rl": rl, "rl_loss": rl_loss}
