"""The primitives API: problem descriptors, algorithms, workspace queries and
forward/backward entry points of every primitive family, shaped like cuDNN.

NumPy arrays in, NumPy arrays out. Inputs that are not C-contiguous are copied
to a contiguous array first (outputs are always new contiguous arrays). Arrays a
primitive updates in place (batch norm's running statistics, x of an activation
with inplace=True, sgd_step's parameter and momentum buffer) cannot be copied:
they must be writable and C-contiguous.

Every argument is checked before anything reaches native code, with minifw.checks,
and a refusal names the function, the argument, what was expected and what arrived:
ints must be Python or NumPy integers (never bools or floats) that fit int64, and
sizes, strides, paddings and counts at most 2**58 (the largest buffer the native
library indexes); float parameters must be finite (gemm's alpha and beta and
cross_entropy_backward's grad_loss may be inf or NaN, as in BLAS) and representable
in the dtype of the data (alpha=1e308 for float32 data is refused rather than turned
into inf or NaN); flags must be bools; modes and directions strings from their set.
Shapes and problem sizes are checked before a non-contiguous input is copied.
find_conv_algorithms times each algorithm at most conv.MAX_REPEATS (1000) times.
"""
from .gemm import gemm
from .conv import (ConvAlgoPerf, ConvProblem, autotune_cache, clear_autotune_cache, conv2d_backward_bias,
                   conv2d_backward_data, conv2d_backward_filter, conv2d_forward, conv_algorithm,
                   conv_algorithms, conv_workspace_size, find_conv_algorithms)
from .activation import activation_backward, activation_forward
from .softmax import cross_entropy_backward, cross_entropy_forward, softmax_backward, softmax_forward
from .pooling import PoolProblem, pool2d_backward, pool2d_forward
from .lrn import lrn_backward, lrn_forward
from .batchnorm import batch_norm_backward, batch_norm_forward_inference, batch_norm_forward_training
from .dropout import dropout_backward, dropout_forward
from .tensor_ops import add_tensor, bias_add, bias_backward, embedding_backward, scale_tensor
from .optim import sgd_step
from .rnn import RNNDescriptor, rnn_backward_data, rnn_backward_weights, rnn_forward
