"""A small DCGAN in the style of the classic DCGAN example, on synthetic 16x16 grayscale images,
with only its imports renamed: `import torch` became `import minifw as torch`.
The generator maps a noise vector through transposed convolutions (ConvTranspose2d, BatchNorm2d,
ReLU) to a Tanh image; the discriminator is strided convolutions with LeakyReLU and BatchNorm2d
ending in a Sigmoid. Weights start from N(0, 0.02) (N(1, 0.02) for the BatchNorm scales) through
model.apply and a class-name test. Each step trains the discriminator on a real batch and on a
detached fake batch with BCELoss, then the generator against the discriminator's "real" label,
both with Adam(betas=(0.5, 0.999)). A fixed noise batch is rendered in eval mode to follow
progress. The images (a bright square on a dark field, at a random place and size) and the
noise are drawn with NumPy, so the same run can be repeated under PyTorch step by step."""
import numpy as np

import minifw as torch
import minifw.nn as nn
import minifw.optim as optim

nz = 8     # size of the latent vector
ngf = 8    # generator feature maps
ndf = 8    # discriminator feature maps
nc = 1     # image channels


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            # nz x 1 x 1 -> (ngf*4) x 4 x 4
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            # -> (ngf*2) x 8 x 8
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            # -> nc x 16 x 16
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            # nc x 16 x 16 -> ndf x 8 x 8
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            # -> (ndf*2) x 4 x 4
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            # -> 1 x 1 x 1
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input)


def real_images(rng, n):
    """Squares of side 4 to 8 at random places: 1 inside, -1 outside (Tanh's range)."""
    images = -np.ones((n, nc, 16, 16), dtype=np.float32)
    for img in images:
        side = rng.randint(4, 9)
        top, left = rng.randint(0, 17 - side, size=2)
        img[:, top:top + side, left:left + side] = 1.0
    return images


def pixel_distance(fake, real):
    """The 1-D Wasserstein distance between the pixel values of two image batches."""
    a = np.sort(fake.reshape(-1))
    b = np.sort(real.reshape(-1))
    return float(np.abs(a - b).mean())


def main(steps=100, batch_size=16, lr=2e-3, seed=0, init=None, log=print):
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    netG = Generator()
    netG.apply(weights_init)
    netD = Discriminator()
    netD.apply(weights_init)
    if init is not None:
        init(netG, netD)
    initial = {"G": {k: v.detach().clone() for k, v in netG.state_dict().items()},
               "D": {k: v.detach().clone() for k, v in netD.state_dict().items()}}

    criterion = nn.BCELoss()
    fixed_noise = torch.from_numpy(rng.randn(64, nz, 1, 1).astype(np.float32))
    real_label = 1.
    fake_label = 0.
    optimizerD = optim.Adam(netD.parameters(), lr=lr, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=lr, betas=(0.5, 0.999))
    reference = real_images(np.random.RandomState(seed + 1), 64)

    def render():
        netG.eval()
        with torch.no_grad():
            fake = netG(fixed_noise).detach()
        netG.train()
        return fake

    before = pixel_distance(render().numpy(), reference)
    history = {"D": [], "G": [], "D_x": [], "D_G_z1": [], "D_G_z2": []}
    for step in range(steps):
        ############################
        # (1) the discriminator: maximize log(D(x)) + log(1 - D(G(z)))
        ###########################
        netD.zero_grad()
        real = torch.from_numpy(real_images(rng, batch_size))
        b_size = real.size(0)
        label = torch.full((b_size,), real_label, dtype=torch.float)
        output = netD(real).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        noise = torch.from_numpy(rng.randn(b_size, nz, 1, 1).astype(np.float32))
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()

        ############################
        # (2) the generator: maximize log(D(G(z)))
        ###########################
        netG.zero_grad()
        label.fill_(real_label)  # the generator wants its fakes called real
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()

        history["D"].append(errD.item())
        history["G"].append(errG.item())
        history["D_x"].append(D_x)
        history["D_G_z1"].append(D_G_z1)
        history["D_G_z2"].append(D_G_z2)
        if step % 25 == 0:
            log(f"[{step}/{steps}] Loss_D: {errD.item():.4f} Loss_G: {errG.item():.4f} "
                f"D(x): {D_x:.4f} D(G(z)): {D_G_z1:.4f} / {D_G_z2:.4f}")

    samples = render()
    after = pixel_distance(samples.numpy(), reference)
    log(f"pixel distance of the fixed-noise samples to real images: {before:.3f} -> {after:.3f}")
    return {"history": history, "before": before, "after": after, "initial": initial,
            "samples": samples, "netG": netG, "netD": netD}


if __name__ == "__main__":
    main()
