"""AdaptiveLogSoftmaxWithLoss (as torch.nn.modules.adaptive): the adaptive softmax of Grave et
al., 2017 ("Efficient softmax approximation for GPUs").

The classes, sorted by frequency, are split by `cutoffs` into a shortlist (the frequent ones)
and clusters of rarer ones. The head, a Linear layer, scores the shortlist classes and one
entry per cluster; each cluster has its own small tail (a projection to in_features //
div_value**(i + 1) features, then to the cluster's classes). log p(class) is the head's log
probability for a shortlist class, and the head's log probability of the cluster plus the
tail's log probability of the class within it otherwise, so a batch pays for a rare cluster
only on the rows whose target lies in it. Everything is composed of differentiable
operations (linear, log_softmax, gather, scatter, cat).
"""
import collections
import numbers

import numpy as np

from ... import devices
from ...tensor import Tensor, cat
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module
from .utils import _empty_parameter, _factory, _positive_int

_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


class _ZeroSizeLinear(Linear):
    """A Linear without bias of which one size is 0 (a weight of no elements), as PyTorch's
    Linear allows: an AdaptiveLogSoftmaxWithLoss cluster's projection when in_features //
    div_value**(i + 1) is 0. Its output (no features, or zeros) stays in the graph."""

    def __init__(self, in_features, out_features, device=None, dtype=None):
        Module.__init__(self)
        dtype, dev = _factory("Linear", dtype, device)
        self.in_features, self.out_features = in_features, out_features
        self.weight = _empty_parameter((out_features, in_features), dtype, dev)
        self.register_parameter("bias", None)

    def reset_parameters(self):
        pass  # (nothing to initialize)

    def _get_name(self):
        return "Linear"

    def forward(self, input):
        return (input.unsqueeze(-2) * self.weight).sum(-1)


class AdaptiveLogSoftmaxWithLoss(Module):
    """forward(input (N, in_features) or (in_features,), target (N,) or ()) returns
    (output, loss): output the log probability of each target, loss the mean of -output.
    log_prob(input) gives every class's log probability, predict(input) the likeliest class."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None,
                 dtype=None):
        super().__init__()
        cls = "AdaptiveLogSoftmaxWithLoss"
        in_features = _positive_int(cls, "in_features", in_features)
        n_classes = _positive_int(cls, "n_classes", n_classes)
        if not isinstance(cutoffs, (list, tuple)):
            raise TypeError(f"{cls}: cutoffs must be a sequence of ints, got {type(cutoffs).__name__}")
        cutoffs = list(cutoffs)
        if (not cutoffs or any(isinstance(c, bool) or not isinstance(c, (int, np.integer)) for c in cutoffs)
                or cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs)):
            raise ValueError(f"{cls}: cutoffs should be a sequence of unique, positive integers "
                             f"sorted in an increasing order, where each value is between 1 and "
                             f"n_classes-1 ({n_classes - 1}); got {cutoffs!r}")
        if isinstance(div_value, (bool, np.bool_)) or not isinstance(div_value, numbers.Real):
            raise TypeError(f"{cls}: div_value must be a real number, got "
                            f"{type(div_value).__name__} {div_value!r}")
        if not div_value > 0:
            raise ValueError(f"{cls}: div_value must be a number > 0 (inf allowed), got "
                             f"{div_value!r}")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = [int(c) for c in cutoffs] + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        factory = dict(device=device, dtype=dtype)
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            if hidden > 0:
                projection = (Linear(in_features, hidden, bias=False, **factory),
                              Linear(hidden, size, bias=False, **factory))
            else:  # in_features < div_value**(i + 1): PyTorch's zero-sized projection
                projection = (_ZeroSizeLinear(in_features, 0, **factory),
                              _ZeroSizeLinear(0, size, **factory))
            self.tail.append(Sequential(*projection))

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def _batched(self, fn, input):
        if not isinstance(input, Tensor):
            raise TypeError(f"AdaptiveLogSoftmaxWithLoss.{fn}: input must be a minifw.Tensor, got "
                            f"{type(input).__name__}")
        if input.ndim not in (1, 2) or input.shape[-1] != self.in_features:
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss.{fn}: input must be (N, {self.in_features}) "
                             f"or ({self.in_features},), got shape {tuple(input.shape)}")
        return input.unsqueeze(0) if input.ndim == 1 else input

    def forward(self, input, target):
        cls = "AdaptiveLogSoftmaxWithLoss"
        x = self._batched("forward", input)
        if not isinstance(target, Tensor) or target.dtype.kind not in "iu":
            raise TypeError(f"{cls}: target must be a minifw.Tensor of int64 class indices")
        if target.ndim != input.ndim - 1:
            raise ValueError(f"{cls}: target must be 1-D (N,) for a 2-D input or 0-D for a 1-D "
                             f"input; got input {tuple(input.shape)} and target {tuple(target.shape)}")
        t = target.reshape(-1).long()
        if t.shape[0] != x.shape[0]:
            raise ValueError(f"{cls}: input and target should have the same size in the batch "
                             f"dimension; got {x.shape[0]} and {t.shape[0]}")
        labels = devices.to_device(t._data, devices.CPU)
        if labels.size and (labels.min() < 0 or labels.max() >= self.n_classes):
            raise ValueError(f"{cls}: target values should be in [0, {self.n_classes - 1}], got "
                             f"values from {labels.min()} to {labels.max()}")
        dev = x.device
        as_tensor = lambda a: Tensor._make(devices.to_device(np.asarray(a, np.int64), dev))
        # the head's entry of each row: its class when in the shortlist, else its cluster
        head_index = labels.copy()
        output = Tensor._make(devices.zeros((x.shape[0],), x.dtype, dev))
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            rows = np.nonzero((labels >= low) & (labels < high))[0]
            if not len(rows):
                continue
            head_index[rows] = self.shortlist_size + i
            logprob = F.log_softmax(self.tail[i](x[as_tensor(rows)]), dim=1)
            local = logprob.gather(1, as_tensor(labels[rows] - low)[:, None]).squeeze(1)
            output = output + Tensor._make(devices.zeros((x.shape[0],), x.dtype, dev)).scatter(
                0, as_tensor(rows), local)
        head_logprob = F.log_softmax(self.head(x), dim=1)
        output = output + head_logprob.gather(1, as_tensor(head_index)[:, None]).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output.squeeze(0) if input.ndim == 1 else output, loss)

    def _full_log_prob(self, x, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](x), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i:self.shortlist_size + i + 1])
        return cat(parts, 1)

    def log_prob(self, input):
        """The log probability of every class: (N, n_classes) or (n_classes,)."""
        x = self._batched("log_prob", input)
        out = self._full_log_prob(x, self.head(x))
        return out.squeeze(0) if input.ndim == 1 else out

    def predict(self, input):
        """The likeliest class of each row, as log_prob(input).argmax(1) (computing the tails only
        for the rows whose head does not pick a shortlist class)."""
        x = self._batched("predict", input)
        head_output = self.head(x)
        best = devices.to_device(head_output.argmax(1)._data, devices.CPU).copy()
        outside = np.nonzero(best >= self.shortlist_size)[0]
        if len(outside):
            rows = Tensor._make(devices.to_device(outside, x.device))
            full = self._full_log_prob(x[rows], head_output[rows])
            best[outside] = devices.to_device(full.argmax(1)._data, devices.CPU)
        out = Tensor._make(devices.to_device(best.astype(np.int64), x.device))
        return out.squeeze(0) if input.ndim == 1 else out

    def extra_repr(self):
        return ""
