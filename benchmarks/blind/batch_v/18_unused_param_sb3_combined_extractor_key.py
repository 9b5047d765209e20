"""SB3-style custom CombinedExtractor for a Dict observation space: one sub-extractor per key of
the space. The forward loop skips keys missing from the observation dict, and the user's env
wrapper renames "goal" to "desired_goal", so the goal extractor is silently never used.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.features_extractor.extractors['goal'][0].weight"
EXPECT = "grad_none"


class CombinedExtractor(nn.Module):
    def __init__(self, observation_space):
        super().__init__()
        extractors, total = {}, 0
        for key, dim in observation_space.items():
            extractors[key] = nn.Sequential(nn.Linear(dim, 16), nn.ReLU())
            total += 16
        self.extractors = nn.ModuleDict(extractors)
        self.features_dim = total

    def forward(self, observations):
        encoded = []
        for key, extractor in self.extractors.items():
            if key not in observations:
                continue  # <-- CUT
            encoded.append(extractor(observations[key]))
        feats = torch.cat(encoded, dim=1)
        return F.pad(feats, (0, self.features_dim - feats.size(1)))


class ActorCriticPolicy(nn.Module):
    def __init__(self, observation_space, n_actions=4):
        super().__init__()
        self.features_extractor = CombinedExtractor(observation_space)
        self.action_net = nn.Linear(self.features_extractor.features_dim, n_actions)
        self.value_net = nn.Linear(self.features_extractor.features_dim, 1)

    def evaluate_actions(self, obs, actions):
        f = self.features_extractor(obs)
        dist = torch.distributions.Categorical(logits=self.action_net(f))
        return self.value_net(f).flatten(), dist.log_prob(actions), dist.entropy()


def run():
    torch.manual_seed(0)
    observation_space = {"observation": 10, "goal": 3}
    policy = ActorCriticPolicy(observation_space)
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
    obs = {"observation": torch.randn(8, 10), "desired_goal": torch.randn(8, 3)}
    actions, returns, adv = torch.randint(0, 4, (8,)), torch.randn(8), torch.randn(8)
    values, log_prob, entropy = policy.evaluate_actions(obs, actions)
    loss = -(adv * log_prob).mean() + 0.5 * F.mse_loss(values, returns) - 0.01 * entropy.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"policy": policy, "loss": loss}
