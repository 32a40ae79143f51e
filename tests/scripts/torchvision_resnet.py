"""torchvision's ResNet-18 trained from scratch on a tiny synthetic image dataset, with only its
imports renamed: `import torch` became `import minifw as torch`, `import torchvision` became
`import minifw.vision as torchvision` and `from torchvision import models` became
`from minifw.vision import models`. The model comes from torchvision.models.resnet18(weights=None,
num_classes=10) (a check through models.list_models() and models.get_model first); the inputs are
standardized with transforms.Normalize. Training uses SGD with momentum and weight decay,
MultiStepLR stepped once per epoch and CrossEntropyLoss; evaluation under torch.no_grad() counts
correct predictions with argmax. The ten classes are 8x8 bright squares at ten places of a
32x32 color image, in a color of their own, under noise, drawn with NumPy."""
import numpy as np

import minifw as torch
import minifw.nn as nn
import minifw.vision as torchvision
from minifw.utils.data import DataLoader, TensorDataset
from minifw.vision import models

NUM_CLASSES = 10
# top-left corners of the ten classes' squares
CORNERS = [(2, 2), (2, 12), (2, 22), (12, 2), (12, 12), (12, 22), (22, 2), (22, 12), (22, 22), (7, 7)]


def make_images(n, rng, size=32):
    labels = rng.randint(NUM_CLASSES, size=n)
    images = (0.3 * rng.randn(n, 3, size, size)).astype(np.float32)
    for img, label in zip(images, labels):
        top, left = CORNERS[label]
        color = np.array([label % 3 == 0, label % 3 == 1, label % 3 == 2], dtype=np.float32) + 0.5
        img[:, top:top + 8, left:left + 8] += color[:, None, None]
    return images, labels.astype(np.int64)


def make_model():
    assert "resnet18" in models.list_models()
    model = torchvision.models.resnet18(weights=None, num_classes=NUM_CLASSES)
    assert isinstance(model, models.ResNet)
    assert type(models.get_model("resnet18", num_classes=NUM_CLASSES)) is type(model)
    return model


def evaluate(model, loader):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for inputs, targets in loader:
            correct += model(inputs).argmax(dim=1).eq(targets).sum().item()
            total += targets.size(0)
    return correct / total


def main(epochs=3, batch_size=16, lr=0.01, seed=0, shuffle=True, init=None, log=print):
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    x_train, y_train = make_images(128, rng)
    x_test, y_test = make_images(64, rng)
    normalize = torchvision.transforms.Normalize(x_train.mean(axis=(0, 2, 3)).tolist(),
                                                 x_train.std(axis=(0, 2, 3)).tolist())
    x_train = normalize(torch.from_numpy(x_train))
    x_test = normalize(torch.from_numpy(x_test))
    order = torch.Generator()
    order.manual_seed(seed)
    train_loader = DataLoader(TensorDataset(x_train, torch.from_numpy(y_train)), batch_size=batch_size,
                              shuffle=shuffle, generator=order)
    test_loader = DataLoader(TensorDataset(x_test, torch.from_numpy(y_test)), batch_size=64)

    model = make_model()
    if init is not None:
        init(model)
    initial = {k: v.detach().clone() for k, v in model.state_dict().items()}
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2], gamma=0.2)

    before = evaluate(model, test_loader)
    losses, accuracies = [], []
    for epoch in range(epochs):
        model.train()
        for inputs, targets in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
        accuracies.append(evaluate(model, test_loader))
        log(f"epoch {epoch}: train loss {np.mean(losses[-len(train_loader):]):.4f}, "
            f"lr {scheduler.get_last_lr()[0]:.3f}, test accuracy {100 * accuracies[-1]:.1f}%")
    return {"before": before, "accuracies": accuracies, "losses": losses, "model": model,
            "initial": initial}


if __name__ == "__main__":
    main()
