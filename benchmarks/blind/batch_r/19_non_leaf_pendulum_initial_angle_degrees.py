"""Shooting problem with a differentiable pendulum: find the initial angle that reaches a
target after 1 s. The angle is created in degrees with requires_grad=True and converted to
radians on the same line, so `theta0` is a non-leaf and theta0.grad is None.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import numpy as np
import torch

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "theta0"
EXPECT = "grad_none"


def simulate(theta0, omega0, g=9.81, L=1.0, dt=0.01, steps=100):
    theta, omega = theta0, omega0
    for _ in range(steps):
        omega = omega - dt * g / L * torch.sin(theta)
        theta = theta + dt * omega
    return theta, omega


def run():
    torch.manual_seed(0)
    theta0 = torch.tensor(30.0, requires_grad=True) * np.pi / 180.0  # <-- CUT
    omega0 = torch.zeros(())
    target = torch.tensor(-0.3)
    theta_T, _ = simulate(theta0, omega0)
    loss = (theta_T - target) ** 2
    loss.backward()
    return {"theta0": theta0, "loss": loss}
