"""Differentially private SGD with per-sample gradients in the style of the torch.func
tutorial, with only its imports renamed: `import torch` became `import minifw as torch`.
A small CNN whose last layer is lazy (nn.LazyLinear learns its input size at the first call)
is written as a function of its parameters (torch.func.functional_call); vmap(grad(loss))
gives every sample's gradient at once; each is clipped to norm C, they are summed, Gaussian
noise is added and the mean updates the parameters. The first batch's per-sample gradients
are checked against one ordinary backward per sample (torch.testing.assert_close), one step
is profiled (torch.profiler), and torch.compile and torch.backends.cudnn are touched as
scripts do. Data, weights and noise come from NumPy, so the run can be repeated under PyTorch
step by step."""
import numpy as np

import minifw as torch
import minifw.nn as nn
import minifw.nn.functional as F
from minifw.func import functional_call, grad, vmap
from minifw.profiler import ProfilerActivity, profile


def make_data(rng, n=96):
    """8x8 one-channel images whose label is the quadrant holding most of their mass."""
    images = rng.uniform(0.0, 0.2, (n, 1, 8, 8))
    labels = rng.integers(0, 4, n)
    for image, label in zip(images, labels):
        r, c = divmod(int(label), 2)
        image[0, 4 * r:4 * r + 4, 4 * c:4 * c + 4] += rng.uniform(0.5, 1.0, (4, 4))
    return images.astype(np.float32), labels.astype(np.int64)


def build(rng):
    model = nn.Sequential(nn.Conv2d(1, 6, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.LazyLinear(4))
    model(torch.zeros(1, 1, 8, 8))  # the lazy layer learns in_features = 6 * 3 * 3
    state = {}
    for name, value in model.state_dict().items():
        fan_in = int(np.prod(value.shape[1:])) if value.ndim > 1 else 6
        bound = 1.0 / np.sqrt(fan_in)
        state[name] = torch.tensor(rng.uniform(-bound, bound, tuple(value.shape)).astype(np.float32))
    model.load_state_dict(state)
    return model


def main(steps=12, batch=16, clip=1.0, noise_multiplier=0.3, lr=0.5, log=print):
    rng = np.random.default_rng(0)
    torch.backends.cudnn.benchmark = True
    images, labels = make_data(rng)
    model = torch.compile(build(rng))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def compute_loss(params, sample, target):
        prediction = functional_call(model, params, (sample.unsqueeze(0),))
        return F.cross_entropy(prediction, target.unsqueeze(0))

    per_sample_grads = vmap(grad(compute_loss), in_dims=(None, 0, 0))
    losses = []
    for step in range(steps):
        start = (step * batch) % len(images)
        x = torch.tensor(images[start:start + batch])
        y = torch.tensor(labels[start:start + batch])
        grads = per_sample_grads(params, x, y)
        if step == 0:  # the same gradients, one sample at a time through ordinary autograd
            for i in range(3):
                model.zero_grad()
                F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
                for name, p in model.named_parameters():
                    torch.testing.assert_close(grads[name][i], p.grad, rtol=1e-4, atol=1e-6)
        norms = torch.stack([g.reshape(batch, -1).norm(dim=1) for g in grads.values()]).norm(dim=0)
        scale = (clip / (norms + 1e-6)).clamp(max=1.0)
        new_params = {}
        for name, g in grads.items():
            clipped = (g * scale.reshape((batch,) + (1,) * (g.ndim - 1))).sum(0)
            noise = torch.tensor(rng.normal(0.0, noise_multiplier * clip, tuple(clipped.shape))
                                 .astype(np.float32))
            new_params[name] = params[name] - lr * (clipped + noise) / batch
        params = new_params
        with torch.no_grad():
            loss = F.cross_entropy(functional_call(model, params, (torch.tensor(images),)),
                                   torch.tensor(labels)).item()
        losses.append(loss)
        log(f"step {step:2d}  loss on all {len(images)} images {loss:.4f}")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        per_sample_grads(params, x, y)
    events = prof.key_averages()
    log(f"profiled one step: {len(events)} kinds of operations, "
        f"{sum(e.count for e in events)} calls")
    return {"losses": losses, "profiled_calls": sum(e.count for e in events)}


if __name__ == "__main__":
    main()
