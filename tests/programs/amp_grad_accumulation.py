# Source: github.com/pytorch/pytorch docs/source/notes/amp_examples.rst ("Gradient accumulation" and
#         "Typical Mixed Precision Training") @ af616bb641d3825cc8216e583f2918912cc77103
# Adapted for gradscope's test suite: the gradient-accumulation loop as written (autocast around the
# forward and the loss, loss / iters_to_accumulate, scaler.scale(loss).backward(), scaler.step /
# update / zero_grad every iters_to_accumulate iterations) on CPU with bfloat16 autocast (a GradScaler
# that is disabled, as bf16 needs no scaling) and a StepLR scheduler stepped per optimizer step; the
# model and data, which the docs leave to the reader ("net", "data"), are a small MLP and synthetic
# batches: 4 micro-batches, 2 optimizer steps.
import torch
import torch.nn as nn


def make_model(in_size, out_size, num_layers):
    layers = []
    for _ in range(num_layers - 1):
        layers.append(torch.nn.Linear(in_size, in_size))
        layers.append(torch.nn.ReLU())
    layers.append(torch.nn.Linear(in_size, out_size))
    return torch.nn.Sequential(*tuple(layers))


def main():
    torch.manual_seed(0)
    device = "cpu"
    batch_size, in_size, out_size, num_layers = 8, 16, 4, 3
    epochs, iters_to_accumulate = 1, 2

    data = [torch.randn(batch_size, in_size, device=device) for _ in range(4)]
    targets = [torch.randn(batch_size, out_size, device=device) for _ in range(4)]

    model = make_model(in_size, out_size, num_layers).to(device)
    loss_fn = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    scaler = torch.amp.GradScaler(device, enabled=False)

    for epoch in range(epochs):
        for i, (input, target) in enumerate(zip(data, targets)):
            with torch.autocast(device_type=device, dtype=torch.bfloat16):
                output = model(input)
                loss = loss_fn(output, target)
                loss = loss / iters_to_accumulate

            # Accumulates scaled gradients.
            scaler.scale(loss).backward()

            if (i + 1) % iters_to_accumulate == 0:
                # may unscale_ here if desired (e.g., to allow clipping unscaled gradients)

                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
                scheduler.step()
                print(f"step {(i + 1) // iters_to_accumulate} loss {loss.item() * iters_to_accumulate:.4f} "
                      f"lr {scheduler.get_last_lr()[0]:.6f}")


if __name__ == "__main__":
    main()
