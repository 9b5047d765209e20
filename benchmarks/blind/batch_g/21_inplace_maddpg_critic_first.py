"""MADDPG agent.train(): following the paper, the user moved the critic update
before the actor update. Both losses are built first; critic_optim.step() then
changes the critic weights in place, and actor_loss (which went through the
critic) fails in backward with "modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "None"
EXPECT = "backward_error"


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.action_out = nn.Linear(hidden, act_dim)

    def forward(self, o):
        return torch.tanh(self.action_out(F.relu(self.fc2(F.relu(self.fc1(o))))))


class Critic(nn.Module):
    def __init__(self, obs_dims, act_dims, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(sum(obs_dims) + sum(act_dims), hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.q_out = nn.Linear(hidden, 1)

    def forward(self, o, u):
        x = torch.cat(o + u, dim=1)
        return self.q_out(F.relu(self.fc2(F.relu(self.fc1(x)))))


class MADDPG:
    def __init__(self, agent_id, obs_dims, act_dims, gamma=0.95):
        self.agent_id = agent_id
        self.gamma = gamma
        self.actor_network = Actor(obs_dims[agent_id], act_dims[agent_id])
        self.critic_network = Critic(obs_dims, act_dims)
        self.actor_target_network = Actor(obs_dims[agent_id], act_dims[agent_id])
        self.critic_target_network = Critic(obs_dims, act_dims)
        self.actor_target_network.load_state_dict(self.actor_network.state_dict())
        self.critic_target_network.load_state_dict(self.critic_network.state_dict())
        self.actor_optim = torch.optim.Adam(self.actor_network.parameters(), lr=1e-4)
        self.critic_optim = torch.optim.Adam(self.critic_network.parameters(), lr=1e-3)

    def train(self, transitions, other_agents):
        r = transitions["r"][self.agent_id]
        o, u, o_next = transitions["o"], transitions["u"], transitions["o_next"]
        with torch.no_grad():
            u_next = [a.actor_target_network(o_next[i]) if a is not None else
                      self.actor_target_network(o_next[i]) for i, a in enumerate(other_agents)]
            q_next = self.critic_target_network(o_next, u_next)
            target_q = r.unsqueeze(1) + self.gamma * q_next
        q_value = self.critic_network(o, u)
        critic_loss = (target_q - q_value).pow(2).mean()

        u_pi = list(u)
        u_pi[self.agent_id] = self.actor_network(o[self.agent_id])
        actor_loss = -self.critic_network(o, u_pi).mean()

        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()  # <-- CUT

        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        return critic_loss, actor_loss


def run():
    torch.manual_seed(0)
    obs_dims, act_dims, B = [6, 6], [2, 2], 8
    agent = MADDPG(0, obs_dims, act_dims)
    transitions = {
        "o": [torch.randn(B, d) for d in obs_dims],
        "u": [torch.rand(B, d) * 2 - 1 for d in act_dims],
        "o_next": [torch.randn(B, d) for d in obs_dims],
        "r": [torch.randn(B) for _ in obs_dims],
    }
    other = [None, MADDPG(1, obs_dims, act_dims)]
    critic_loss, actor_loss = agent.train(transitions, other)
    return {"agent": agent, "critic_loss": critic_loss, "actor_loss": actor_loss}
