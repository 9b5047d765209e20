"""A deterministic stand-in for gymnasium's CartPole-v1 (gymnasium is not a test dependency).

Same interface as the parts of ``gym.make('CartPole-v1')`` the RL examples use: ``reset(seed=)`` ->
``(state, info)``, ``step(action)`` -> ``(state, reward, terminated, truncated, info)``, ``spec.reward_threshold``.
States are 4 float32 values, every step is rewarded 1.0 and an episode ends after ``episode_len`` steps.
The threshold is chosen so that the examples' "solved" test ends ``main()`` after two episodes.
"""
import types

import numpy as np


class SyntheticCartPole:
    def __init__(self, episode_len=20, reward_threshold=10.7):
        self.episode_len = episode_len
        self.spec = types.SimpleNamespace(reward_threshold=reward_threshold)
        self.observation_space = types.SimpleNamespace(shape=(4,))
        self.action_space = types.SimpleNamespace(n=2, sample=self._sample)
        self._rng = np.random.default_rng(0)
        self._t = 0

    def _sample(self):
        return int(self._rng.integers(2))

    def reset(self, seed=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._t = 0
        return self._rng.standard_normal(4).astype(np.float32), {}

    def step(self, action):
        self._t += 1
        state = self._rng.standard_normal(4).astype(np.float32)
        return state, 1.0, self._t >= self.episode_len, False, {}

    def render(self):
        pass


def make(name, render_mode=None):
    """``gym.make`` for the one environment the examples use."""
    assert name == 'CartPole-v1', name
    return SyntheticCartPole()
