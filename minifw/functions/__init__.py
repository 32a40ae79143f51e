"""The differentiable operations: one module per family, each a set of Function
classes with forward and backward side by side (see minifw.autograd).

    convolution     Convolution2D, TransposedConvolution2D
    pooling         MaxPooling2D, AveragePooling2D
    activation      Activation (relu, leaky_relu, elu, sigmoid, tanh), SmoothRectifier (softplus)
    softmax         SoftmaxAlongDim, SoftmaxCrossEntropy, NegativeLogLikelihood, SquaredError
    normalization   LocalResponseNormalization, BatchNormalization, LayerNormalization,
                    VectorNorm, LpNormalization, VectorCosine
    dropout         InvertedDropout
    linear          MatMul, InnerProduct
    elementwise     Add, Sub, Mul, Div, Remainder, Maximum, Neg, Pow, Exp, Log, Sqrt, Abs,
                    Pointwise (sin, cos, ..., round), Clamp, Overwrite, Triangle, Cast, Clone,
                    ToDevice, Where
    reductions      Sum, Mean, Product, Amax, MaxDim, CumulativeSum
    shape           Reshape, Permute, Expand, Index, Flip, Roll, Diagonal, Cat, Stack, Repeat,
                    Padding
    indexing        Gather, Scatter, IndexSelect, IndexFill, IndexPut
    sorting         Sort (sort, topk)
    embedding       EmbeddingLookup
    recurrent       RecurrentNetwork, PackedWeights

Functions work on the arrays of a device. Those with a primitive reach it through
the current engine (minifw.set_engine), the one they ran forward on also running
their backward; the rest are array code, allocating through minifw.devices. Their
names say what they compute and never repeat a Module's name: nn.Conv2d is the
layer, Convolution2D the operation it applies. Tensor methods and
nn.functional (the PyTorch-signature wrappers) apply them.
"""
from . import (activation, convolution, dropout, elementwise, embedding, indexing, linear,
               normalization, pooling, recurrent, reductions, shape, softmax, sorting)
