"""A BinaryConnect-style classifier on the CS231n spiral data: the hidden layer's weights are
binarized in the forward pass by a custom autograd.Function with a straight-through estimator,
trained with mixup (class-probability targets for cross_entropy) and an input-gradient penalty,
with only its imports renamed: `import torch` became `import minifw as torch`.
It exercises what such scripts lean on: torch.autograd.Function (save_for_backward,
saved_tensors, a backward that masks grad_output), nn.ModuleDict (layers and a choice of
activation by name), Tensor.register_hook on an activation (recording gradient norms) and on
every parameter (clamping gradients), retain_grad() on the logits, torch.autograd.grad for the
input gradient, F.one_hot and probability-target cross_entropy, torch.amp.GradScaler and
torch.autocast with enabled=False (as on a machine without a GPU), Adam, clamp_ of the
real-valued weights under no_grad, and DataLoader/TensorDataset batching.

The input-gradient penalty is the finite-difference form of Finlay and Oberman ("Scaleable input
gradient regularization for adversarial robustness", 2019): (loss(x + h d) - loss(x)) / h
approximates the input gradient's norm along d = grad / |grad|, so the penalty trains with
first-order gradients only."""
import numpy as np

import minifw as torch
import minifw.nn as nn
import minifw.nn.functional as F
from minifw.utils.data import DataLoader, TensorDataset


class BinarizeSTE(torch.autograd.Function):
    """sign(x) forward; the straight-through estimator backward (the gradient passes where
    |x| <= 1 and is cancelled elsewhere)."""
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.sign()

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input.abs() > 1] = 0
        return grad_input


class BinaryLinear(nn.Linear):
    """A Linear layer whose forward pass uses sign(weight), scaled per output row by the mean
    absolute weight (as XNOR-Net); the optimizer updates the real-valued weight."""
    def forward(self, input):
        alpha = self.weight.abs().mean(dim=1, keepdim=True).detach()
        return F.linear(input, BinarizeSTE.apply(self.weight) * alpha, self.bias)


class Net(nn.Module):
    def __init__(self, in_features=2, hidden=64, num_classes=3, activation="prelu"):
        super().__init__()
        self.layers = nn.ModuleDict({
            "fc1": nn.Linear(in_features, hidden),
            "norm": nn.LayerNorm(hidden),
            "fc2": BinaryLinear(hidden, hidden),
            "out": nn.Linear(hidden, num_classes),
        })
        self.activations = nn.ModuleDict([
            ["prelu", nn.PReLU()],
            ["gelu", nn.GELU()],
        ])
        self.activation = activation
        self.grad_norms = []

    def _record_grad(self, grad):
        self.grad_norms.append(grad.norm().item())

    def forward(self, x):
        act = self.activations[self.activation]
        h = act(self.layers["norm"](self.layers["fc1"](x)))
        h = act(self.layers["fc2"](h))
        if h.requires_grad:
            h.register_hook(self._record_grad)
        return self.layers["out"](h)


def spiral_data(points_per_class, num_classes, rng):
    """The CS231n spiral: num_classes interleaved arms in the plane."""
    X = np.zeros((points_per_class * num_classes, 2), dtype=np.float32)
    y = np.zeros(points_per_class * num_classes, dtype=np.int64)
    for j in range(num_classes):
        ix = range(points_per_class * j, points_per_class * (j + 1))
        r = np.linspace(0.0, 1, points_per_class)
        t = np.linspace(j * 4, (j + 1) * 4, points_per_class) + rng.randn(points_per_class) * 0.2
        X[ix] = np.c_[r * np.sin(t), r * np.cos(t)]
        y[ix] = j
    return X, y


def clip_gradients_with_hooks(model, clip_value):
    """Clamp every parameter's gradient as it is computed."""
    for p in model.parameters():
        p.register_hook(lambda grad: torch.clamp(grad, -clip_value, clip_value))


@torch.no_grad()
def evaluate(model, X, y):
    model.eval()
    logits = model(X)
    model.train()
    return F.cross_entropy(logits, y).item(), (logits.argmax(dim=1) == y).float().mean().item()


def main(epochs=40, batch_size=32, lr=1e-2, mixup_alpha=0.4, gp_weight=0.1, gp_h=1e-2,
         clip_value=0.5, seed=0, shuffle=True, init=None, device="cpu", log=print):
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    device = torch.device(device)
    use_amp = device.type == "cuda"

    X, y = spiral_data(100, 3, rng)
    X_train, y_train = torch.from_numpy(X), torch.from_numpy(y)
    X_test, y_test = spiral_data(50, 3, np.random.RandomState(seed + 1))
    X_test, y_test = torch.from_numpy(X_test).to(device), torch.from_numpy(y_test).to(device)
    num_classes = int(y_train.max()) + 1
    loader = DataLoader(TensorDataset(X_train, y_train), batch_size=batch_size, shuffle=shuffle,
                        drop_last=True)

    model = Net(num_classes=num_classes).to(device)
    if init is not None:
        init(model)
    initial_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    clip_gradients_with_hooks(model, clip_value)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    before = evaluate(model, X_test, y_test)
    log(f"before: test loss {before[0]:.4f}, accuracy {before[1]:.3f}")

    history = {"loss": [], "penalty": [], "input_grad_norm": []}
    first_step = None
    for epoch in range(epochs):
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            # mixup: convex combinations of inputs and of their one-hot targets
            lam = float(rng.beta(mixup_alpha, mixup_alpha))
            index = torch.from_numpy(rng.permutation(xb.size(0)))
            x_mix = lam * xb + (1 - lam) * xb[index]
            y_soft = (lam * F.one_hot(yb, num_classes).float()
                      + (1 - lam) * F.one_hot(yb[index], num_classes).float())
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
                x_in = x_mix.clone().requires_grad_(True)
                logits = model(x_in)
                logits.retain_grad()
                losses = F.cross_entropy(logits, y_soft, reduction="none")
                loss = losses.mean()
                grad_x, = torch.autograd.grad(losses.sum(), x_in, retain_graph=True)
                d = grad_x / (grad_x.norm(dim=1, keepdim=True) + 1e-12)
                losses_h = F.cross_entropy(model(x_mix + gp_h * d), y_soft, reduction="none")
                penalty = ((losses_h - losses) / gp_h).pow(2).mean()
                total = loss + gp_weight * penalty
            optimizer.zero_grad()
            scaler.scale(total).backward()
            scaler.unscale_(optimizer)
            if first_step is None:
                first_step = {
                    "loss": loss.item(), "penalty": penalty.item(), "grad_x": grad_x.detach().clone(),
                    "logits_grad": logits.grad.clone(),
                    "param_grads": {n: p.grad.clone() for n, p in model.named_parameters()},
                    "hook_calls": len(model.grad_norms),
                }
            scaler.step(optimizer)
            scaler.update()
            with torch.no_grad():
                w = model.layers["fc2"].weight
                w.clamp_(-1, 1)
            history["loss"].append(loss.item())
            history["penalty"].append(penalty.item())
            history["input_grad_norm"].append(grad_x.norm().item())
        if epoch % 5 == 0 or epoch == epochs - 1:
            log(f"epoch {epoch}: loss {loss:.4f}, penalty {penalty:.4f}, |grad_x| {grad_x.norm():.3f}")

    after = evaluate(model, X_test, y_test)
    log(f"after: test loss {after[0]:.4f}, accuracy {after[1]:.3f}")
    return {"before": before, "after": after, "history": history, "first_step": first_step,
            "model": model, "initial_state": initial_state, "grad_norms": model.grad_norms}


if __name__ == "__main__":
    main()
