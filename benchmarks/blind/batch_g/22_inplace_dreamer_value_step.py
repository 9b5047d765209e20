"""Dreamer update: imagined trajectories are rolled out with the action model,
lambda returns come from the value model, then the value model is updated and
only afterwards the action model (action_loss = -lambda_target_values.mean()).
value_optimizer.step() bumped the value weights' version: backward fails.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "None"
EXPECT = "backward_error"


class ValueModel(nn.Module):
    def __init__(self, state_dim, rnn_dim, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(state_dim + rnn_dim, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, state, rnn_hidden):
        return self.fc2(F.elu(self.fc1(torch.cat([state, rnn_hidden], dim=1))))


class ActionModel(nn.Module):
    def __init__(self, state_dim, rnn_dim, action_dim, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(state_dim + rnn_dim, hidden)
        self.fc_mean = nn.Linear(hidden, action_dim)

    def forward(self, state, rnn_hidden):
        return torch.tanh(self.fc_mean(F.elu(self.fc1(torch.cat([state, rnn_hidden], dim=1)))))


class RSSM(nn.Module):
    def __init__(self, state_dim, action_dim, rnn_dim):
        super().__init__()
        self.rnn = nn.GRUCell(state_dim + action_dim, rnn_dim)
        self.prior = nn.Linear(rnn_dim, state_dim)

    def prior_step(self, state, action, rnn_hidden):
        rnn_hidden = self.rnn(torch.cat([state, action], dim=1), rnn_hidden)
        return torch.tanh(self.prior(rnn_hidden)), rnn_hidden


def lambda_target(rewards, values, gamma=0.99, lambda_=0.95):
    V_lambda = torch.zeros_like(rewards)
    H = rewards.shape[0] - 1
    V_n = torch.zeros_like(rewards)
    V_n[H] = values[H]
    for n in range(1, H + 1):
        V_n[:-n] = (gamma ** n) * values[n:]
        for k in range(1, n + 1):
            if k == n:
                V_n[:-n] += (gamma ** (n - 1)) * rewards[k:]
            else:
                V_n[:-n] += (gamma ** (k - 1)) * rewards[k:-n + k]
        if n == H:
            V_lambda += (lambda_ ** (H - 1)) * V_n
        else:
            V_lambda += (1 - lambda_) * (lambda_ ** (n - 1)) * V_n
    return V_lambda


def run():
    torch.manual_seed(0)
    S, A, R, B, H = 6, 2, 8, 4, 5
    rssm = RSSM(S, A, R)
    reward_model = nn.Linear(S + R, 1)
    value_model = ValueModel(S, R)
    action_model = ActionModel(S, R, A)
    value_optimizer = torch.optim.Adam(value_model.parameters(), lr=8e-5)
    action_optimizer = torch.optim.Adam(action_model.parameters(), lr=8e-5)

    state = torch.randn(B, S)
    rnn_hidden = torch.zeros(B, R)
    states, hiddens = [state], [rnn_hidden]
    for _ in range(H):
        action = action_model(state, rnn_hidden)
        state, rnn_hidden = rssm.prior_step(state, action, rnn_hidden)
        states.append(state)
        hiddens.append(rnn_hidden)
    flatten_states = torch.cat(states[1:])
    flatten_rnn_hiddens = torch.cat(hiddens[1:])

    imaginated_rewards = reward_model(torch.cat([flatten_states, flatten_rnn_hiddens], 1)).view(H, B)
    imaginated_values = value_model(flatten_states, flatten_rnn_hiddens).view(H, B)
    lambda_target_values = lambda_target(imaginated_rewards, imaginated_values)

    # update value model
    value_loss = 0.5 * F.mse_loss(
        value_model(flatten_states.detach(), flatten_rnn_hiddens.detach()).view(H, B),
        lambda_target_values.detach())
    value_optimizer.zero_grad()
    value_loss.backward()
    clip_grad_norm_(value_model.parameters(), 100)
    value_optimizer.step()  # <-- CUT

    # update action model (multiply -1 for gradient ascent)
    action_loss = -1 * (lambda_target_values.mean())
    action_optimizer.zero_grad()
    action_loss.backward()
    clip_grad_norm_(action_model.parameters(), 100)
    action_optimizer.step()
    return {"action_model": action_model, "value_loss": value_loss, "action_loss": action_loss}
