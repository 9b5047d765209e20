"""ReLeaSE REINFORCE step (isayev/ReLeaSE#39): to avoid a CUDA error the user
rewrites the loss term as log_probs[0, top_i].cpu().detach().numpy() *
discounted_reward. rl_loss becomes a numpy float; converting it back with
torch.as_tensor() lets the code reach rl_loss.backward(), which raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Generator(nn.Module):
    def __init__(self, n_tokens=10, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(n_tokens, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.out = nn.Linear(hidden, n_tokens)

    def step(self, tok, h):
        h = self.cell(self.embed(tok), h)
        return self.out(h), h


def policy_gradient_step(generator, optimizer, trajectory, reward, gamma=0.97):
    rl_loss = 0
    discounted_reward = reward
    h = torch.zeros(1, 16)
    for p in range(len(trajectory) - 1):
        output, h = generator.step(trajectory[p:p + 1], h)
        log_probs = F.log_softmax(output, dim=1)
        top_i = trajectory[p + 1]
        rl_loss -= (log_probs[0, top_i].cpu().detach().numpy() * discounted_reward)  # <-- CUT
        discounted_reward = discounted_reward * gamma
    rl_loss = torch.as_tensor(rl_loss)
    optimizer.zero_grad()
    rl_loss.backward()
    optimizer.step()
    return rl_loss


def run():
    torch.manual_seed(0)
    generator = Generator()
    optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
    trajectory = torch.randint(0, 10, (7,))
    rl_loss = policy_gradient_step(generator, optimizer, trajectory, reward=1.5)
    return {"generator": generator, "rl_loss": rl_loss}
