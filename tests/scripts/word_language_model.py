"""PyTorch's word_language_model example (model.py and main.py's training loop, shortened to a
tiny corpus), with only its imports renamed: `import torch` became `import minifw as torch`.
It exercises what such scripts lean on: getattr(nn, "LSTM"), nn.init, weight.new_zeros,
narrow/view/t/contiguous batching, detach()ed hidden states, clip_grad_norm_, and the manual
SGD update through p.data.add_(p.grad, alpha=-lr)."""
import math
import minifw as torch
import minifw.nn as nn

class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)

def batchify(data, bsz, device):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)

def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)

def get_batch(source, i, bptt=8):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target

def run(rnn_type="LSTM", device="cpu"):
    torch.manual_seed(1111)
    words = ("the cat sat on the mat and the dog sat on the log " * 20).split()
    vocab = {w: i for i, w in enumerate(sorted(set(words)))}
    ids = torch.tensor([vocab[w] for w in words], dtype=torch.int64)
    train_data = batchify(ids, 4, device)
    ntokens = len(vocab)
    model = RNNModel(rnn_type, ntokens, 16, 16, 2, 0.2).to(device)
    criterion = nn.NLLLoss()
    lr, clip = 5.0, 0.25
    losses = []
    for epoch in range(1, 6):
        model.train()
        total_loss = 0.
        hidden = model.init_hidden(4)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, 8)):
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            total_loss += loss.item()
        model.eval()
        with torch.no_grad():
            hidden = model.init_hidden(4)
            eval_loss = 0.
            for i in range(0, train_data.size(0) - 1, 8):
                data, targets = get_batch(train_data, i)
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
                eval_loss += len(data) * criterion(output, targets).item()
            losses.append(eval_loss / (len(train_data) - 1))
    print(rnn_type, [round(math.exp(l), 2) for l in losses])
    return losses

if __name__ == "__main__":
    run("LSTM")
    run("GRU")
