"""Control: the thread's toy token-sequence policy gradient. Each step samples a token,
stores Categorical.log_prob, writes the token into the Python state list with .item(),
and estimates the return with Monte-Carlo rollouts under torch.no_grad(). The loss uses
the stored log-probs times the rollout rewards, so the policy gets its gradient.
"""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"

SEQ_LEN = 10
HIDDEN_SIZE = 50
ROLLOUT_NUM = 3
N_TOKENS = 11
LR = 1e-3
EPS = np.finfo(np.float32).eps.item()


def get_rw(beh):
    r = 0.0
    for i in range(SEQ_LEN):
        if beh[i] == i + 1:
            r += 1
        else:
            break
    return torch.tensor(r)


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(SEQ_LEN, HIDDEN_SIZE), nn.Linear(HIDDEN_SIZE, N_TOKENS), nn.LogSoftmax(-1))
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    rb = [0.0] * SEQ_LEN
    rewards, l_probs = [], []
    for c in range(SEQ_LEN):
        out = model(torch.tensor(rb))
        cd = Categorical(logits=out)
        r = cd.sample()
        l_probs.append(cd.log_prob(r))
        rb[c] = r.item()
        with torch.no_grad():
            rew = 0.0
            for _ in range(ROLLOUT_NUM):
                i_rb = list(rb)
                for u in range(c + 1, SEQ_LEN):
                    i_out = model(torch.tensor(i_rb))
                    i_rb[u] = Categorical(logits=i_out).sample().item()
                rew += get_rw(i_rb)
            rewards.append(rew / ROLLOUT_NUM + 0.1 * (c + 1))
    rewards = torch.stack(rewards)
    rewards = (rewards - rewards.mean()) / (rewards.std() + EPS)
    loss = -(torch.stack(l_probs) * rewards).sum()  # <-- CUT
    optimizer.zero_grad()
    loss.backward()
    grads = model[0].weight.grad.clone()
    optimizer.step()
    return {"model": model, "loss": loss, "grads": grads}
