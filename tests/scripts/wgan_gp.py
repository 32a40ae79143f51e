"""A WGAN-GP on a toy 2-D distribution (eight Gaussians on a circle), in the style of the
gradient-penalty papers' reference code, with only its imports renamed: `import torch` became
`import minifw as torch`.
The critic's loss has Gulrajani et al.'s gradient penalty: the critic's gradient with respect
to points between real and generated samples, taken with autograd.grad(create_graph=True) so
that the penalty on its norm is differentiated again, down to the critic's weights. Five
critic steps per generator step, Adam(0.5, 0.9) for both. Noise and interpolation weights are
drawn with NumPy, so the same run can be repeated under PyTorch step by step."""
import math

import numpy as np

import minifw as torch
from minifw import nn

CENTERS = [(2 * math.cos(2 * math.pi * k / 8), 2 * math.sin(2 * math.pi * k / 8)) for k in range(8)]


def real_batch(rng, n):
    centers = np.array(CENTERS)[rng.randint(8, size=n)]
    return torch.tensor(centers + 0.05 * rng.randn(n, 2), dtype=torch.float32)


class Generator(nn.Module):
    def __init__(self, noise=2, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(noise, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, 2))

    def forward(self, z):
        return self.net(z)


class Critic(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, hidden),
                                 nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def gradient_penalty(critic, real, fake, alpha):
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interpolates)
    gradients = torch.autograd.grad(outputs=scores, inputs=interpolates,
                                    grad_outputs=torch.ones_like(scores),
                                    create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def distance_to_modes(samples):
    """The mean distance from each sample to its nearest center."""
    points = samples.detach().numpy()[:, None, :]
    return float(np.sqrt(((points - np.array(CENTERS)[None]) ** 2).sum(-1)).min(1).mean())


def main(steps=300, batch_size=64, critic_iters=5, lam=10.0, seed=0, init=None, log=print):
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    generator, critic = Generator(), Critic()
    if init is not None:
        init(generator, critic)
    initial = {"generator": {k: v.detach().clone() for k, v in generator.state_dict().items()},
               "critic": {k: v.detach().clone() for k, v in critic.state_dict().items()}}
    opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.5, 0.9))
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
    fixed_noise = torch.tensor(rng.randn(256, 2), dtype=torch.float32)
    with torch.no_grad():
        before = distance_to_modes(generator(fixed_noise))
    history = {"critic": [], "penalty": [], "generator": []}
    for step in range(steps):
        for _ in range(critic_iters):
            real = real_batch(rng, batch_size)
            with torch.no_grad():
                fake = generator(torch.tensor(rng.randn(batch_size, 2), dtype=torch.float32))
            alpha = torch.tensor(rng.rand(batch_size, 1), dtype=torch.float32)
            opt_c.zero_grad()
            penalty = gradient_penalty(critic, real, fake, alpha)
            loss_c = critic(fake).mean() - critic(real).mean() + lam * penalty
            loss_c.backward()
            opt_c.step()
        history["critic"].append(loss_c.item())
        history["penalty"].append(penalty.item())
        opt_g.zero_grad()
        loss_g = -critic(generator(torch.tensor(rng.randn(batch_size, 2), dtype=torch.float32))).mean()
        loss_g.backward()
        opt_g.step()
        history["generator"].append(loss_g.item())
        if step % 100 == 0:
            log(f"step {step}: critic {loss_c.item():.4f}, penalty {penalty.item():.4f}, "
                f"generator {loss_g.item():.4f}")
    with torch.no_grad():
        after = distance_to_modes(generator(fixed_noise))
    log(f"mean distance to the nearest mode: {before:.3f} -> {after:.3f}")
    return {"history": history, "before": before, "after": after, "initial": initial,
            "generator": generator, "critic": critic}


if __name__ == "__main__":
    main()
