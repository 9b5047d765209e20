"""AgentTorch-style SEIRM transition calibrated against observed daily deaths. The
recovered/dead mask is built with (stages == INFECTED) * (transition_times <= t); the
transition times depend on the learnable infected-to-recovered time, and the <= on them
cuts the chain: the mortality rate M trains, the learnable duration gets no gradient.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.learnable_args['infected_to_recovered_time']"
EXPECT = "grad_none"

SUSCEPTIBLE_VAR, EXPOSED_VAR, INFECTED_VAR, RECOVERED_VAR, MORTALITY_VAR = 0, 1, 2, 3, 4


class SEIRMProgression(nn.Module):
    def __init__(self):
        super().__init__()
        self.learnable_args = nn.ParameterDict({
            "infected_to_recovered_time": nn.Parameter(torch.tensor(4.0)),
            "M": nn.Parameter(torch.tensor(0.1)),
        })

    def update_transition_times(self, t, stages, times, newly_infected):
        duration = self.learnable_args["infected_to_recovered_time"]
        return torch.where(newly_infected, t + duration * torch.ones_like(times), times)

    def forward(self, t, stages, times, exposed_days):
        newly_infected = (stages == EXPOSED_VAR) & (exposed_days >= 2)
        times = self.update_transition_times(t, stages, times, newly_infected)
        stages = torch.where(newly_infected, torch.full_like(stages, INFECTED_VAR), stages)
        recovered_and_dead_mask = (stages == INFECTED_VAR) * (times <= t)  # <-- CUT
        new_death_recovered_today = stages * recovered_and_dead_mask / INFECTED_VAR
        daily_dead = self.learnable_args["M"] * new_death_recovered_today.sum()
        stages = torch.where(recovered_and_dead_mask, torch.full_like(stages, RECOVERED_VAR), stages)
        return stages, times, daily_dead


def run():
    torch.manual_seed(0)
    n_agents, n_days = 200, 10
    model = SEIRMProgression()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    stages = torch.randint(0, 3, (n_agents,)).float()
    times = torch.full((n_agents,), 1.0)
    exposed_days = torch.randint(0, 4, (n_agents,)).float()
    observed_deaths = torch.tensor([0.0, 1, 2, 2, 3, 3, 2, 2, 1, 1])
    predicted = []
    for t in range(n_days):
        stages, times, daily_dead = model(float(t), stages, times, exposed_days)
        exposed_days = exposed_days + 1
        predicted.append(daily_dead)
    loss = ((torch.stack(predicted) - observed_deaths) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss}
