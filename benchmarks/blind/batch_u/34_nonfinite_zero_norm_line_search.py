"""pytorch/pytorch#2421 ("Gradient of zero norm is nan", hit during exact line searches):
a trust-region style penalty uses the step length ||delta||, written by hand as
sqrt(sum(delta**2)), and the solver starts from delta = 0. sqrt's backward at 0 is inf
and inf * 0 = nan, so the step gets a nan gradient: delta.grad is nan."""
import torch

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "delta"
EXPECT = "grad_nonfinite"


def model_value(theta, A, b):
    return 0.5 * theta @ A @ theta - b @ theta


def trust_region_objective(theta0, delta, A, b, radius=0.5, mu=10.0):
    step_len = torch.sqrt((delta ** 2).sum())  # <-- CUT
    penalty = mu * torch.relu(step_len - radius) + 0.1 * step_len
    return model_value(theta0 + delta, A, b) + penalty


def run():
    torch.manual_seed(0)
    A = torch.eye(3) * 2.0
    b = torch.tensor([1.0, -1.0, 0.5])
    theta0 = torch.zeros(3)
    delta = torch.zeros(3, requires_grad=True)
    obj = trust_region_objective(theta0, delta, A, b)
    obj.backward()
    return {"delta": delta, "obj": obj}
