"""Parameter fit for a decay ODE: the rate constant is created as a leaf with
requires_grad=True and then moved with k = k.to(cfg["device"], cfg["dtype"]),
where the config asks for float64. The manual update reads k.grad of the new
tensor, a non-leaf copy, finds None and skips, so the fit never moves: k.grad is None.
Thread: SO "How to understand creating leaf tensors in PyTorch?".
"""
import torch

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "k"
EXPECT = "grad_none"

CFG = {"device": "cpu", "dtype": torch.float64, "dt": 0.1, "steps": 20, "lr": 0.05}


def simulate(y0, k, cfg):
    ys = [y0]
    for _ in range(cfg["steps"]):
        ys.append(ys[-1] - cfg["dt"] * k * ys[-1])
    return torch.stack(ys)


def run():
    torch.manual_seed(0)
    t_obs = torch.exp(-0.7 * torch.arange(CFG["steps"] + 1) * CFG["dt"]).to(CFG["dtype"])
    k = torch.tensor([0.2], requires_grad=True)
    k = k.to(CFG["device"], CFG["dtype"])  # <-- CUT
    y0 = torch.ones(1, dtype=CFG["dtype"])
    pred = simulate(y0, k, CFG).squeeze(-1)
    loss = ((pred - t_obs) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        if k.grad is not None:
            k -= CFG["lr"] * k.grad
    return {"k": k, "loss": loss}
