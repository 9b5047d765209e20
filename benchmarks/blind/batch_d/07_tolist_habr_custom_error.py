"""An agent network's answers are scored by the user's own function f(): it
walks `answers.tolist()` in Python, computes a per-sample error and the loss
tensor is rebuilt from that list. There is no graph between the answers and the
loss, so the agent does not learn (qna.habr.com/q/1285818; adapted).
"""
import torch
import torch.nn as nn

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.net[2].weight"
EXPECT = "grad_none"


def f(answers, wanted_actions):
    """Evaluate the answers: error = 1 - probability given to the wanted action."""
    errors = []
    rows = answers.tolist()  # <-- CUT
    for probs, a in zip(rows, wanted_actions.tolist()):
        errors.append(1.0 - probs[a])
    return errors


class Agent(nn.Module):
    def __init__(self, n_obs=6, n_act=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_obs, 16), nn.ReLU(), nn.Linear(16, n_act))

    def forward(self, obs):
        return torch.softmax(self.net(obs), dim=-1)


def run():
    torch.manual_seed(0)
    agent = Agent()
    optimizer = torch.optim.Adam(agent.parameters(), lr=1e-3)
    train_data = torch.randn(8, 6)
    wanted = torch.randint(0, 3, (8,))
    optimizer.zero_grad()
    answers = agent.forward(train_data)
    errors = f(answers, wanted)
    loss = torch.tensor(errors, requires_grad=True).mean()
    loss.backward()
    optimizer.step()
    return {"agent": agent, "loss": loss, "answers": answers}
