"""A tiny ResNet trained the way CIFAR-10 training scripts do it, on synthetic 12x12 color
images, with only its imports renamed: `import torch` became `import minifw as torch`.
The network is a stem convolution and two stages of BasicBlocks (the second with a strided
1x1-convolution shortcut), BatchNorm2d throughout, AdaptiveAvgPool2d and torch.flatten before
the classifier; Kaiming initialization through self.modules(). Training uses SGD with Nesterov
momentum and weight decay, OneCycleLR stepped once per optimizer step, gradients accumulated
over two micro-batches, CrossEntropyLoss with label smoothing, and random crops (after a
4-pixel padding) and horizontal flips done with tensor operations on each batch, no transforms.
Evaluation runs under torch.inference_mode() and counts correct predictions with
argmax/eq/sum().item(). After each epoch a checkpoint dict with the epoch and the model's,
optimizer's and scheduler's state_dicts is written with torch.save; halfway through, training
is resumed from it into a new model, optimizer and scheduler. The four classes are stripe
patterns (horizontal, vertical, diagonal, checkerboard) in random colors and phases under
noise, drawn with NumPy, as are the crop offsets and flips."""
import os
import tempfile

import numpy as np

import minifw as torch
import minifw.nn as nn
import minifw.nn.functional as F
from minifw.utils.data import DataLoader, TensorDataset

NUM_CLASSES = 4


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=NUM_CLASSES, width=8):
        super().__init__()
        self.inplanes = width
        self.conv1 = conv3x3(3, width)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = self._make_layer(block, width, layers[0])
        self.layer2 = self._make_layer(block, 2 * width, layers[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(2 * width * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


def make_images(n, rng, size=12):
    yy, xx = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    labels = rng.randint(NUM_CLASSES, size=n)
    images = np.empty((n, 3, size, size), dtype=np.float32)
    for img, label in zip(images, labels):
        phase = rng.uniform(0, 2 * np.pi)
        if label == 0:
            pattern = np.sin(yy * 1.2 + phase)
        elif label == 1:
            pattern = np.sin(xx * 1.2 + phase)
        elif label == 2:
            pattern = np.sin((xx + yy) * 0.9 + phase)
        else:
            pattern = np.sin(xx * 1.2 + phase) * np.sin(yy * 1.2 + phase)
        color = rng.uniform(0.3, 1.0, size=3)
        img[:] = color[:, None, None] * pattern[None] + 0.4 * rng.randn(3, size, size)
    return images, labels.astype(np.int64)


def random_crop_flip(images, rng, padding=4):
    """A random crop of each padded image back to its size, and a horizontal flip of about
    half of them, with tensor operations."""
    n, _, h, w = images.shape
    padded = F.pad(images, (padding, padding, padding, padding))
    offsets = rng.randint(0, 2 * padding + 1, size=(n, 2))
    crops = torch.stack([padded[i, :, top:top + h, left:left + w]
                         for i, (top, left) in enumerate(offsets)])
    flip = torch.from_numpy(rng.rand(n) < 0.5)
    return torch.where(flip[:, None, None, None], crops.flip(3), crops)


def make_training(model, lr, epochs, steps_per_epoch):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True,
                                weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, epochs=epochs,
                                                    steps_per_epoch=steps_per_epoch)
    return optimizer, scheduler


def evaluate(model, loader, criterion):
    model.eval()
    correct, total, loss = 0, 0, 0.0
    with torch.inference_mode():
        for inputs, targets in loader:
            outputs = model(inputs)
            loss += criterion(outputs, targets).item() * targets.size(0)
            correct += outputs.argmax(dim=1).eq(targets).sum().item()
            total += targets.size(0)
    return loss / total, correct / total


def main(epochs=4, batch_size=16, accumulation_steps=2, lr=0.1, seed=0, shuffle=True,
         augment=True, resume_at=2, checkpoint_dir=None, init=None, log=print):
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    x_train, y_train = make_images(256, rng)
    x_test, y_test = make_images(128, rng)
    loader_generator = torch.Generator()
    loader_generator.manual_seed(seed)
    train_loader = DataLoader(TensorDataset(torch.from_numpy(x_train), torch.from_numpy(y_train)),
                              batch_size=batch_size, shuffle=shuffle, generator=loader_generator,
                              drop_last=True)
    test_loader = DataLoader(TensorDataset(torch.from_numpy(x_test), torch.from_numpy(y_test)),
                             batch_size=64)
    steps_per_epoch = len(train_loader) // accumulation_steps

    model = ResNet(BasicBlock, [1, 1])
    if init is not None:
        init(model)
    initial = {k: v.detach().clone() for k, v in model.state_dict().items()}
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer, scheduler = make_training(model, lr, epochs, steps_per_epoch)

    temporary = None
    if checkpoint_dir is None:
        temporary = tempfile.TemporaryDirectory()
        checkpoint_dir = temporary.name
    path = os.path.join(checkpoint_dir, "checkpoint.pth")

    before = evaluate(model, test_loader, criterion)
    losses, lrs, results = [], [], []
    start_epoch = 0
    epoch = start_epoch
    while epoch < epochs:
        model.train()
        optimizer.zero_grad(set_to_none=True)
        for i, (inputs, targets) in enumerate(train_loader):
            if augment:
                inputs = random_crop_flip(inputs, rng)
            outputs = model(inputs)
            loss = criterion(outputs, targets) / accumulation_steps
            loss.backward()
            losses.append(loss.item() * accumulation_steps)
            if (i + 1) % accumulation_steps == 0:
                optimizer.step()
                lrs.append(scheduler.get_last_lr()[0])
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
        results.append(evaluate(model, test_loader, criterion))
        log(f"epoch {epoch}: train loss {np.mean(losses[-len(train_loader):]):.4f}, "
            f"test loss {results[-1][0]:.4f}, test accuracy {100 * results[-1][1]:.1f}%")
        torch.save({"epoch": epoch, "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}, path)
        if epoch + 1 == resume_at:
            # start over from the file, as a new process would
            model = ResNet(BasicBlock, [1, 1])
            optimizer, scheduler = make_training(model, lr, epochs, steps_per_epoch)
            checkpoint = torch.load(path, map_location="cpu")
            # a checkpoint written from a DataParallel wrapper has "module." before each key
            torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(checkpoint["model"],
                                                                           "module.")
            model.load_state_dict(checkpoint["model"])
            optimizer.load_state_dict(checkpoint["optimizer"])
            scheduler.load_state_dict(checkpoint["scheduler"])
            epoch = checkpoint["epoch"]
        epoch += 1
    if temporary is not None:
        temporary.cleanup()
    return {"before": before, "results": results, "losses": losses, "lrs": lrs, "model": model,
            "initial": initial, "optimizer": optimizer, "scheduler": scheduler}


if __name__ == "__main__":
    main()
