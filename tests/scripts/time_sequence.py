"""Sine-wave prediction in the style of the classic time-sequence-prediction example, with only
its imports renamed: `import torch` became `import minifw as torch`.
Two stacked nn.LSTMCell layers and a Linear read a batch of sine waves one time step at a time
(the input split into steps with torch.chunk, the hidden states carried by hand), then keep
going past the input's end by feeding each prediction back in as the next input (under a bare
@torch.no_grad decorator). The model is
in float64 (model.double()) and is trained with L-BFGS, whose step() calls a closure that
recomputes the loss and its gradients. The waves (shifted by random phases) are made with
NumPy and go through torch.save/torch.load as a NumPy array."""
import os
import tempfile

import numpy as np

import minifw as torch
import minifw.nn as nn
import minifw.optim as optim

HIDDEN = 16


def make_waves(n, length, rng):
    x = np.arange(length) + rng.randint(-20, 20, size=(n, 1))
    return np.sin(x / 2.0).astype(np.float64)


class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, HIDDEN)
        self.lstm2 = nn.LSTMCell(HIDDEN, HIDDEN)
        self.linear = nn.Linear(HIDDEN, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        c_t = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)

        for input_t in torch.chunk(input, input.size(1), dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # predict beyond the input, one step at a time
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


@torch.no_grad
def predict(seq, input, future):
    return seq(input, future=future)


def main(steps=4, length=24, future=12, seed=0, init=None, log=print):
    np.random.seed(seed)
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    with tempfile.TemporaryDirectory() as tmp:
        # written once and read back, as a script that generates its data separately does
        with open(os.path.join(tmp, "traindata.pt"), "wb") as f:
            torch.save(make_waves(24, length + 1 + future, rng), f)
        data = torch.load(os.path.join(tmp, "traindata.pt"), weights_only=False)
    input = torch.from_numpy(data[4:, :length])
    target = torch.from_numpy(data[4:, 1:length + 1])
    test_input = torch.from_numpy(data[:4, :length])
    test_target = torch.from_numpy(data[:4, 1:])

    seq = Sequence()
    seq.double()
    if init is not None:
        init(seq)
    initial = {k: v.detach().clone() for k, v in seq.state_dict().items()}
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=8)
    closure_losses, step_losses, test_losses = [], [], []

    def evaluate():
        pred = predict(seq, test_input, future)
        loss = criterion(pred[:, :-future], test_target[:, :-future])
        return loss.item(), pred.detach().numpy()

    before, prediction = evaluate()
    future_before = float(np.abs(prediction[:, -future:] - test_target.numpy()[:, -future:]).mean())
    for i in range(steps):
        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            closure_losses.append(loss.item())
            loss.backward()
            return loss
        loss = optimizer.step(closure)
        step_losses.append(loss.item())
        test_loss, prediction = evaluate()
        test_losses.append(test_loss)
        log(f"STEP: {i} loss: {loss.item():.6f} test loss: {test_loss:.6f}")
    future_error = float(np.abs(prediction[:, -future:] - test_target.numpy()[:, -future:]).mean())
    return {"before": before, "step_losses": step_losses, "closure_losses": closure_losses,
            "test_losses": test_losses, "prediction": prediction, "model": seq,
            "initial": initial, "future_before": future_before, "future_error": future_error}


if __name__ == "__main__":
    main()
