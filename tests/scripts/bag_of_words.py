"""A bag-of-words text classifier in the style of PyTorch's text classification tutorial, with
only its imports renamed: `import torch` became `import minifw as torch`.
Sentences of varying length are tokenized into a vocabulary, a DataLoader's collate_fn
concatenates a batch's token ids into one 1-D tensor with the offsets where each sentence
starts (a cumsum of the lengths), and nn.EmbeddingBag averages each sentence's embeddings
before a Linear layer classifies it. The training loop is the tutorial's: SGD with a large
learning rate, StepLR, clip_grad_norm_, and accuracy per epoch. The sentences are generated:
four topics, each with its own words, mixed with words common to all."""
import numpy as np

import minifw as torch
from minifw import nn
from minifw.utils.data import DataLoader

TOPICS = {
    0: "goal match striker keeper league season coach penalty",
    1: "market shares profit bank inflation investor trade earnings",
    2: "galaxy orbit telescope planet comet nebula astronaut rocket",
    3: "recipe oven flour butter garlic simmer roast sauce",
}
COMMON = "the a of and in to with for on at this that".split()


def make_sentences(n, rng):
    data = []
    for _ in range(n):
        label = int(rng.randint(4))
        own = TOPICS[label].split()
        words = [own[rng.randint(len(own))] if rng.rand() < 0.4 else COMMON[rng.randint(len(COMMON))]
                 for _ in range(rng.randint(4, 15))]
        data.append((label, " ".join(words)))
    return data


def build_vocab(sentences):
    vocab = {"<unk>": 0}
    for _, text in sentences:
        for word in text.split():
            vocab.setdefault(word, len(vocab))
    return vocab


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


def collate_batch(vocab):
    def collate(batch):
        label_list, text_list, offsets = [], [], [0]
        for label, text in batch:
            label_list.append(label)
            ids = torch.tensor([vocab.get(w, 0) for w in text.split()], dtype=torch.int64)
            text_list.append(ids)
            offsets.append(ids.size(0))
        label_list = torch.tensor(label_list, dtype=torch.int64)
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        return label_list, torch.cat(text_list), offsets
    return collate


def train_epoch(model, dataloader, criterion, optimizer):
    model.train()
    losses, correct, count = [], 0, 0
    for label, text, offsets in dataloader:
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        losses.append(loss.item())
        correct += (predicted_label.argmax(1) == label).sum().item()
        count += label.size(0)
    return losses, correct / count


def evaluate(model, dataloader):
    model.eval()
    correct, count = 0, 0
    with torch.no_grad():
        for label, text, offsets in dataloader:
            correct += (model(text, offsets).argmax(1) == label).sum().item()
            count += label.size(0)
    return correct / count


def main(epochs=5, batch_size=16, lr=5.0, seed=0, init=None, log=print):
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    train_data, test_data = make_sentences(480, rng), make_sentences(160, rng)
    vocab = build_vocab(train_data)
    collate = collate_batch(vocab)
    train_loader = DataLoader(train_data, batch_size=batch_size, shuffle=False, collate_fn=collate)
    test_loader = DataLoader(test_data, batch_size=batch_size, shuffle=False, collate_fn=collate)

    model = TextClassificationModel(len(vocab), 32, len(TOPICS))
    if init is not None:
        init(model)
    initial_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.5)
    before = evaluate(model, test_loader)
    losses, accuracies = [], []
    for epoch in range(epochs):
        epoch_losses, train_acc = train_epoch(model, train_loader, criterion, optimizer)
        losses += epoch_losses
        accuracies.append(evaluate(model, test_loader))
        scheduler.step()
        log(f"| epoch {epoch + 1:3d} | train accuracy {train_acc:8.3f} | test accuracy "
            f"{accuracies[-1]:8.3f} | lr {scheduler.get_last_lr()[0]:.3f}")
    return {"before": before, "accuracies": accuracies, "losses": losses, "model": model,
            "initial_state": initial_state, "vocab": vocab}


if __name__ == "__main__":
    main()
