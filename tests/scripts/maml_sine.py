"""MAML on sine-wave regression (Finn, Abbeel and Levine, 2017), with only its imports renamed:
`import torch` became `import minifw as torch`.
Each task is a sine wave with its own amplitude and phase. A small MLP, written as a function of
an explicit list of parameters (torch.nn.functional.linear), adapts to a task by one SGD step
on K examples; the meta-loss is its error on other points of the same task after that step,
and its gradient reaches the initial parameters through the inner step, whose gradient was
taken with autograd.grad(create_graph=True): a second derivative. Tasks are drawn with
NumPy, so the same run can be repeated under PyTorch step by step."""
import numpy as np

import minifw as torch
import minifw.nn.functional as F


def init_params(rng, hidden=40):
    sizes = [(hidden, 1), (hidden, hidden), (1, hidden)]
    params = []
    for out_features, in_features in sizes:
        bound = 1.0 / np.sqrt(in_features)
        params.append(torch.tensor(rng.uniform(-bound, bound, (out_features, in_features)),
                                   dtype=torch.float32, requires_grad=True))
        params.append(torch.zeros(out_features, requires_grad=True))
    return params


def forward(params, x):
    w1, b1, w2, b2, w3, b3 = params
    h = F.relu(F.linear(x, w1, b1))
    h = F.relu(F.linear(h, w2, b2))
    return F.linear(h, w3, b3)


def sample_task(rng, k):
    amplitude, phase = rng.uniform(0.1, 5.0), rng.uniform(0, np.pi)

    def points(n):
        x = rng.uniform(-5.0, 5.0, (n, 1))
        return (torch.tensor(x, dtype=torch.float32),
                torch.tensor(amplitude * np.sin(x + phase), dtype=torch.float32))
    return points(k), points(k)


def adapt(params, x, y, inner_lr, create_graph):
    loss = F.mse_loss(forward(params, x), y)
    grads = torch.autograd.grad(loss, params, create_graph=create_graph)
    return [p - inner_lr * g for p, g in zip(params, grads)]


def evaluate(params, rng, inner_lr, k, tasks=20):
    """The mean error on new tasks after one adaptation step (no second derivatives needed)."""
    errors = []
    for _ in range(tasks):
        (xs, ys), (xq, yq) = sample_task(rng, k)
        adapted = adapt(params, xs, ys, inner_lr, create_graph=False)
        errors.append(F.mse_loss(forward(adapted, xq), yq).item())
    return float(np.mean(errors))


def main(iterations=600, meta_batch=4, k=10, inner_lr=0.01, meta_lr=3e-3, seed=0, params=None,
         log=print):
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    drawn = init_params(rng)  # drawn either way, so that the tasks that follow are the same
    params = drawn if params is None else params
    initial = [p.detach().clone() for p in params]
    optimizer = torch.optim.Adam(params, lr=meta_lr)
    before = evaluate(params, np.random.RandomState(seed + 1), inner_lr, k)
    losses = []
    for iteration in range(iterations):
        optimizer.zero_grad()
        meta_loss = 0.0
        for _ in range(meta_batch):
            (xs, ys), (xq, yq) = sample_task(rng, k)
            adapted = adapt(params, xs, ys, inner_lr, create_graph=True)
            meta_loss = meta_loss + F.mse_loss(forward(adapted, xq), yq)
        meta_loss = meta_loss / meta_batch
        meta_loss.backward()
        optimizer.step()
        losses.append(meta_loss.item())
        if iteration % 100 == 0:
            log(f"iteration {iteration}: meta-loss {meta_loss.item():.4f}")
    after = evaluate(params, np.random.RandomState(seed + 1), inner_lr, k)
    log(f"error after one step on new tasks: {before:.3f} -> {after:.3f}")
    return {"losses": losses, "before": before, "after": after, "initial": initial,
            "params": params}


if __name__ == "__main__":
    main()
