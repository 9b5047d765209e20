"""ReLeaSE-style REINFORCE step for a SMILES generator. To dodge a "can't convert
cuda tensor to numpy" error the user changed the policy term to
`rl_loss -= log_probs[0, top_i].item() * discounted_reward` and wrapped the sum
in a tensor so .backward() runs. Every generator layer ends up with .grad None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "generator.rnn.weight_ih_l0"
EXPECT = "grad_none"


class StackAugmentedRNN(nn.Module):
    def __init__(self, n_tokens=12, hidden=24):
        super().__init__()
        self.encoder = nn.Embedding(n_tokens, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.decoder = nn.Linear(hidden, n_tokens)

    def forward(self, inp, hidden):
        out, hidden = self.rnn(self.encoder(inp).unsqueeze(1), hidden)
        return self.decoder(out.squeeze(1)), hidden

    def init_hidden(self):
        return torch.zeros(1, 1, self.rnn.hidden_size)


def get_reward(trajectory):
    # stand-in for the property predictor: favour token 3
    return 1.0 + 0.5 * sum(1 for t in trajectory if t == 3)


class Reinforcement:
    def __init__(self, generator, gamma=0.97, n_steps=6):
        self.generator = generator
        self.gamma = gamma
        self.n_steps = n_steps
        self.optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)

    def policy_gradient(self, n_batch=2, gen=None):
        rl_loss = 0.0
        total_reward = 0.0
        for _ in range(n_batch):
            hidden = self.generator.init_hidden()
            inp = torch.tensor([0])
            traj, log_probs_list = [], []
            for _ in range(self.n_steps):
                logits, hidden = self.generator(inp, hidden)
                log_probs = F.log_softmax(logits, dim=1)
                top_i = int(torch.multinomial(log_probs.exp(), 1, generator=gen))
                traj.append(top_i)
                log_probs_list.append((log_probs, top_i))
                inp = torch.tensor([top_i])
            reward = get_reward(traj)
            discounted_reward = reward
            total_reward += reward
            for log_probs, top_i in reversed(log_probs_list):
                rl_loss -= log_probs[0, top_i].item() * discounted_reward  # <-- CUT
                discounted_reward = discounted_reward * self.gamma
        rl_loss = torch.tensor(rl_loss / n_batch, requires_grad=True)
        self.optimizer.zero_grad()
        rl_loss.backward()
        self.optimizer.step()
        return total_reward / n_batch, rl_loss


def run():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    generator = StackAugmentedRNN()
    rl = Reinforcement(generator)
    mean_reward, rl_loss = rl.policy_gradient(gen=gen)
    return {"generator": generator, "rl": rl, "mean_reward": mean_reward, "rl_loss": rl_loss}
