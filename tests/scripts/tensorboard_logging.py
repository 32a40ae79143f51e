"""A training loop that logs to TensorBoard as a PyTorch user writes it, with only its imports
renamed (`from torch.utils.tensorboard import SummaryWriter` became
`from minifw.utils.tensorboard import SummaryWriter`): a linear regression on synthetic data,
trained by SGD in mini-batches, writing the loss per step and per epoch, the weights'
histogram and the parameters as one chart of several lines per epoch, a text summary and the
run's hyperparameters with its final loss. The weights start at zero and the batches come from
NumPy, so that the run is the same under both frameworks."""
import numpy as np

import minifw as torch
from minifw import nn, optim
from minifw.utils.tensorboard import SummaryWriter


def main(log_dir, epochs=4, lr=0.1, batch_size=16):
    rng = np.random.RandomState(0)
    features = rng.randn(64, 3).astype(np.float32)
    targets = (features @ np.array([[1.5], [-2.0], [0.5]], np.float32) + 0.25).astype(np.float32)
    inputs, labels = torch.from_numpy(features), torch.from_numpy(targets)

    model = nn.Linear(3, 1)
    nn.init.zeros_(model.weight)
    nn.init.zeros_(model.bias)
    optimizer = optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()

    epoch_losses = []
    writer = SummaryWriter(log_dir)
    step = 0
    for epoch in range(epochs):
        total = 0.0
        for start in range(0, len(inputs), batch_size):
            optimizer.zero_grad()
            loss = loss_fn(model(inputs[start:start + batch_size]), labels[start:start + batch_size])
            loss.backward()
            optimizer.step()
            writer.add_scalar("loss/step", loss, step)
            total += loss.item() * batch_size
            step += 1
        epoch_losses.append(total / len(inputs))
        writer.add_scalar("loss/epoch", epoch_losses[-1], epoch)
        writer.add_histogram("weight", model.weight, epoch)
        writer.add_scalars("parameters", {f"w{i}": w for i, w in enumerate(model.weight.detach()[0].tolist())},
                           epoch)
    writer.add_text("summary", f"final loss {epoch_losses[-1]:.4f} after {epochs} epochs", epochs)
    writer.add_hparams({"lr": lr, "batch_size": batch_size}, {"hparam/loss": epoch_losses[-1]},
                       run_name="hparams")
    writer.close()
    return epoch_losses
