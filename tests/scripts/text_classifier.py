"""A small text classifier of the kind written to learn PyTorch's sequence layers, with only its
imports renamed: `import torch` became `import minifw as torch`.
Token sequences of varying length (padded with token 0) are labelled 1 when token 1 occurs
more often than token 2. The model embeds the tokens, adds learned positions, runs a Conv1d
with Hardswish over the sequence and a TransformerEncoder (pre-norm, GELU, batch_first, with
the padding as src_key_padding_mask), then pools over the real tokens, concatenates an
AdaptiveMaxPool1d of the convolution's features, and classifies. The training loop uses AdamW,
a warmup-then-cosine schedule (LinearLR and CosineAnnealingLR joined by SequentialLR),
clip_grad_norm_, and a state_dict saved and loaded back; the attention weights of one layer
are read through nn.MultiheadAttention with need_weights=True."""
import io

import numpy as np

import minifw as torch
import minifw.nn as nn
import minifw.nn.functional as F

PAD = 0
VOCAB = 12


def make_data(n, rng, min_len=6, max_len=20):
    """Sequences over tokens 1..VOCAB-1, padded with PAD to max_len; label 1 when token 1 is
    more frequent than token 2 (ties are resampled)."""
    tokens = np.zeros((n, max_len), dtype=np.int64)
    labels = np.zeros(n, dtype=np.int64)
    i = 0
    while i < n:
        length = rng.randint(min_len, max_len + 1)
        seq = rng.randint(1, VOCAB, size=length)
        ones, twos = int((seq == 1).sum()), int((seq == 2).sum())
        if ones == twos:
            continue
        tokens[i, :length] = seq
        labels[i] = int(ones > twos)
        i += 1
    return tokens, labels


class TextClassifier(nn.Module):
    def __init__(self, vocab=VOCAB, d_model=32, nhead=4, num_layers=2, max_len=20, dropout=0.1,
                 num_classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.pos = nn.Parameter(torch.zeros(1, max_len, d_model))
        nn.init.normal_(self.pos, std=0.02)
        self.conv = nn.Sequential(
            nn.Conv1d(d_model, d_model, kernel_size=3, padding=1),
            nn.Hardswish(),
        )
        self.pool = nn.AdaptiveMaxPool1d(1)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=2 * d_model,
                                           dropout=dropout, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers, norm=nn.LayerNorm(d_model),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(2 * d_model, num_classes)

    def forward(self, tokens):
        padding = tokens == PAD                               # (N, L), True where padded
        x = self.embed(tokens) + self.pos[:, :tokens.size(1)]
        conv = self.conv(x.transpose(1, 2))                   # (N, d_model, L)
        conv = conv.masked_fill(padding.unsqueeze(1), -1e4)
        pooled_conv = self.pool(conv).squeeze(-1)             # (N, d_model)
        h = self.encoder(x, src_key_padding_mask=padding)     # (N, L, d_model)
        keep = (~padding).unsqueeze(-1).float()
        pooled = (h * keep).sum(dim=1) / keep.sum(dim=1)
        return self.head(torch.cat([pooled, pooled_conv], dim=1))


def batches(tokens, labels, batch_size, rng):
    order = rng.permutation(len(tokens))
    for start in range(0, len(order) - batch_size + 1, batch_size):
        ix = order[start:start + batch_size]
        yield torch.from_numpy(tokens[ix]), torch.from_numpy(labels[ix])


@torch.no_grad()
def evaluate(model, tokens, labels):
    model.eval()
    logits = model(torch.from_numpy(tokens))
    target = torch.from_numpy(labels)
    model.train()
    return F.cross_entropy(logits, target).item(), (logits.argmax(1) == target).float().mean().item()


def train(model, data, epochs, batch_size=32, lr=3e-3, seed=0, log=print):
    tokens, labels = data
    rng = np.random.RandomState(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    steps = epochs * (len(tokens) // batch_size)
    warmup = max(1, steps // 10)
    scheduler = torch.optim.lr_scheduler.SequentialLR(
        optimizer,
        [torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=warmup),
         torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps - warmup)],
        milestones=[warmup])
    losses = []
    for epoch in range(epochs):
        for xb, yb in batches(tokens, labels, batch_size, rng):
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
        log(f"epoch {epoch}: loss {losses[-1]:.4f}, lr {scheduler.get_last_lr()[0]:.2e}")
    return losses


def attention_of_first_layer(model, tokens):
    """The first encoder layer's attention weights (averaged over heads) for one batch."""
    model.eval()
    with torch.no_grad():
        layer = model.encoder.layers[0]
        x = model.embed(tokens) + model.pos[:, :tokens.size(1)]
        x = layer.norm1(x)
        _, weights = layer.self_attn(x, x, x, key_padding_mask=tokens == PAD, need_weights=True)
    model.train()
    return weights


def main(epochs=4, seed=0, log=print):
    torch.manual_seed(seed)
    rng = np.random.RandomState(seed)
    train_data = make_data(512, rng)
    test_data = make_data(256, rng)
    model = TextClassifier()
    before = evaluate(model, *test_data)
    log(f"before: test loss {before[0]:.4f}, accuracy {before[1]:.3f}")
    losses = train(model, train_data, epochs, seed=seed, log=log)
    after = evaluate(model, *test_data)
    log(f"after: test loss {after[0]:.4f}, accuracy {after[1]:.3f}")

    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    restored = TextClassifier()
    restored.load_state_dict(torch.load(buffer))
    return {"before": before, "after": after, "losses": losses, "model": model,
            "restored": restored, "test": test_data}


if __name__ == "__main__":
    main()
