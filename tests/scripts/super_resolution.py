"""Single-image super-resolution with an efficient sub-pixel CNN, in the style of the classic
super-resolution example, with only its imports renamed: `import torch` became
`import minifw as torch`.
Four convolutions bring a low-resolution image to upscale_factor**2 channels, which
nn.PixelShuffle rearranges into an image upscale_factor times larger. The convolutions start
orthogonal (init.orthogonal_ scaled by init.calculate_gain('relu') for the ReLU layers), the
loss is MSELoss and progress is measured as PSNR (10 * log10(1 / mse)). The images are smooth
random patterns (sums of a few sinusoids) made with NumPy; their low-resolution inputs are
2x2 block averages, taken with F.avg_pool2d."""
import math

import numpy as np

import minifw as torch
import minifw.nn as nn
import minifw.nn.init as init
import minifw.nn.functional as F
import minifw.optim as optim
from minifw.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, upscale_factor, channels=16):
        super(Net, self).__init__()

        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, channels, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(channels, channels, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(channels, channels // 2, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(channels // 2, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


def make_images(n, size, rng):
    """Smooth patterns in [0, 1]: 0.5 plus a few random plane waves."""
    yy, xx = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    images = np.full((n, 1, size, size), 0.5, dtype=np.float64)
    for img in images:
        for _ in range(3):
            fy, fx = rng.uniform(-0.8, 0.8, size=2)
            img[0] += 0.15 * np.sin(fy * yy + fx * xx + rng.uniform(0, 2 * np.pi))
    return np.clip(images, 0, 1).astype(np.float32)


def make_dataset(n, size, upscale_factor, rng):
    target = torch.from_numpy(make_images(n, size, rng))
    input = F.avg_pool2d(target, upscale_factor)
    return TensorDataset(input, target)


def train(model, loader, criterion, optimizer):
    model.train()
    epoch_loss = 0
    losses = []
    for iteration, batch in enumerate(loader, 1):
        input, target = batch[0], batch[1]
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return epoch_loss / len(loader), losses


def test(model, loader, criterion):
    model.eval()
    avg_psnr = 0
    with torch.no_grad():
        for batch in loader:
            input, target = batch[0], batch[1]
            prediction = model(input)
            mse = criterion(prediction, target)
            psnr = 10 * math.log10(1 / mse.item())
            avg_psnr += psnr
    return avg_psnr / len(loader)


def main(epochs=4, upscale_factor=2, batch_size=8, lr=5e-3, seed=0, init=None, log=print):
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    train_loader = DataLoader(make_dataset(128, 16, upscale_factor, rng), batch_size=batch_size,
                              shuffle=False)
    test_loader = DataLoader(make_dataset(32, 16, upscale_factor, rng), batch_size=batch_size,
                             shuffle=False)
    model = Net(upscale_factor=upscale_factor)
    if init is not None:
        init(model)
    initial = {k: v.detach().clone() for k, v in model.state_dict().items()}
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=lr)

    before = test(model, test_loader, criterion)
    losses, psnrs = [], []
    for epoch in range(1, epochs + 1):
        avg_loss, epoch_losses = train(model, train_loader, criterion, optimizer)
        losses += epoch_losses
        psnrs.append(test(model, test_loader, criterion))
        log(f"===> Epoch {epoch} Complete: Avg. Loss: {avg_loss:.4f}  "
            f"Avg. PSNR: {psnrs[-1]:.4f} dB")

    # the naive baseline: each low-resolution pixel repeated upscale_factor times each way
    with torch.no_grad():
        mse = sum(criterion(F.interpolate(input, scale_factor=upscale_factor, mode="nearest"),
                            target).item() for input, target in test_loader) / len(test_loader)
    nearest = 10 * math.log10(1 / mse)
    return {"before": before, "psnrs": psnrs, "losses": losses, "nearest": nearest,
            "model": model, "initial": initial}


if __name__ == "__main__":
    main()
