"""A variational autoencoder in the style of the classic VAE example, on synthetic 8x8 binary
images, with only its imports renamed: `import torch` became `import minifw as torch`.
The encoder gives a mean and a log-variance, the reparameterization trick draws
z = mu + eps * std with torch.randn_like, and the loss is the summed binary cross-entropy of the
reconstruction plus the KL divergence to N(0, I). Samples are decoded from N(0, I) by a
generator function decorated with torch.no_grad(). Halfway through, the model's and the
optimizer's state_dicts are saved with torch.save into an in-memory buffer, loaded back with
torch.load into a new model and a new Adam, and training resumes from there. The images (a
horizontal or vertical bar, or both, with a few flipped pixels) are drawn with NumPy."""
import io

import numpy as np

import minifw as torch
from minifw import nn, optim
from minifw.nn import functional as F
from minifw.utils.data import DataLoader, TensorDataset

IMAGE = 64
LATENT = 4


def make_images(n, rng):
    images = np.zeros((n, 1, 8, 8), dtype=np.float32)
    for img in images:
        kind = rng.randint(3)
        if kind in (0, 2):
            img[0, rng.randint(8), :] = 1.0
        if kind in (1, 2):
            img[0, :, rng.randint(8)] = 1.0
    flips = rng.rand(*images.shape) < 0.03
    return np.where(flips, 1.0 - images, images).astype(np.float32)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(IMAGE, 32)
        self.fc21 = nn.Linear(32, LATENT)
        self.fc22 = nn.Linear(32, LATENT)
        self.fc3 = nn.Linear(LATENT, 32)
        self.fc4 = nn.Linear(32, IMAGE)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, IMAGE))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    """Reconstruction (summed binary cross-entropy) plus KL(q(z|x) || N(0, I))."""
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, IMAGE), reduction='sum')
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def train(model, optimizer, loader, epoch, log):
    model.train()
    train_loss = 0
    losses = []
    for batch_idx, (data, _) in enumerate(loader):
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        losses.append(loss.item() / len(data))
    log(f"====> Epoch: {epoch} Average loss: {train_loss / len(loader.dataset):.4f}")
    return losses


def test(model, loader):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for data, _ in loader:
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
    return test_loss / len(loader.dataset)


@torch.no_grad()
def decoded_samples(model, batches, n=8):
    """Batches of images decoded from N(0, I), one batch per step of the generator."""
    for _ in range(batches):
        sample = torch.randn(n, LATENT)
        yield model.decode(sample).view(n, 1, 8, 8)


def checkpoint_roundtrip(model, optimizer, epoch, lr):
    """Save both state_dicts into a buffer and rebuild the model and optimizer from it."""
    buffer = io.BytesIO()
    torch.save({'epoch': epoch, 'model_state_dict': model.state_dict(),
                'optimizer_state_dict': optimizer.state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer)
    model = VAE()
    model.load_state_dict(checkpoint['model_state_dict'])
    optimizer = optim.Adam(model.parameters(), lr=lr)
    optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
    return model, optimizer, checkpoint['epoch']


def main(epochs=6, batch_size=32, lr=1e-2, seed=0, resume_at=3, init=None, log=print):
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    train_set = TensorDataset(torch.from_numpy(make_images(512, rng)), torch.zeros(512))
    test_set = TensorDataset(torch.from_numpy(make_images(128, rng)), torch.zeros(128))
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=False)
    test_loader = DataLoader(test_set, batch_size=batch_size, shuffle=False)

    model = VAE()
    if init is not None:
        init(model)
    initial = {k: v.detach().clone() for k, v in model.state_dict().items()}
    optimizer = optim.Adam(model.parameters(), lr=lr)
    before = test(model, test_loader)
    losses, test_losses = [], []
    epoch = 1
    while epoch <= epochs:
        losses += train(model, optimizer, train_loader, epoch, log)
        test_losses.append(test(model, test_loader))
        log(f"====> Test set loss: {test_losses[-1]:.4f}")
        if epoch == resume_at:
            model, optimizer, epoch = checkpoint_roundtrip(model, optimizer, epoch, lr)
        epoch += 1
    sample = torch.cat(list(decoded_samples(model, 2)))
    return {"losses": losses, "before": before, "test_losses": test_losses, "sample": sample,
            "model": model, "optimizer": optimizer, "initial": initial}


if __name__ == "__main__":
    main()
