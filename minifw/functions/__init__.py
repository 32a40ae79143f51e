"""The differentiable operations: one module per family, each a set of Function
classes with forward and backward side by side (see minifw.autograd).

    convolution     Convolution2D, TransposedConvolution2D, ConvolutionFilterGradient
    pooling         MaxPooling2D, AveragePooling2D, AveragePoolingGradient, AdaptiveAveragePooling2D,
                    AdaptiveMaxPooling2D
    activation      Activation (relu, leaky_relu, elu, sigmoid, tanh), SmoothRectifier (softplus),
                    GaussianErrorLinearUnit, SigmoidLinearUnit, HardTanh, HardSwish, HardSigmoid,
                    Mish, LogSigmoid, ScaledExponentialLinear (selu, celu), Shrink, Threshold
    softmax         SoftmaxAlongDim, SoftmaxCrossEntropy, NegativeLogLikelihood, SquaredError
    losses          BinaryCrossEntropy(WithLogits), AbsoluteError, SmoothAbsoluteError,
                    KullbackLeiblerDivergence, ConnectionistTemporalClassification
    normalization   LocalResponseNormalization, BatchNormalization, LayerNormalization,
                    VectorNorm, LpNormalization, VectorCosine
    dropout         InvertedDropout, ChannelDropout
    linear          MatMul, InnerProduct, MatrixProduct
    einsum          Einsum
    distance        PairwiseDistance
    interpolation   Interpolation
    sampling        GridSampling, Unfolding, Folding
    elementwise     Add, Sub, Mul, Div, Remainder, Maximum, Neg, Pow, Exp, Log, Sqrt, Abs,
                    Pointwise (sin, cos, ..., round), BinaryPointwise (atan2, hypot, ...), Clamp,
                    Overwrite, Triangle, Cast, Clone, ToDevice, Where
    reductions      Sum, Mean, Product, Amax, MaxDim, Median(Dim), CumulativeSum,
                    CumulativeProduct, CumulativeExtreme, LogCumulativeSumExp, KthValue
    shape           Reshape, Permute, Expand, Index, IndexScatter, Flip, Roll, Diagonal, Cat,
                    Stack, Split, Repeat, Padding, DiagonalAlong, DiagonalEmbed
    indexing        Gather, Scatter, IndexSelect, IndexFill, IndexAdd, IndexPut, ScatterReduce
    sorting         Sort (sort, topk)
    embedding       EmbeddingLookup, BagReduction
    linalg          Inverse, Determinant, SignLogDeterminant, Solve, Cholesky, SymmetricEigen,
                    SingularValueDecomposition, SingularValues, QRDecomposition, PseudoInverse,
                    LeastSquares, MatrixDiagonal, LUFactorization
    recurrent       RecurrentNetwork, PackedWeights
    zero_gradient   ZeroGradient (random draws from tensors of parameters, angle of real numbers)

Functions work on the arrays of a device. Those with a primitive reach it through
the current engine (minifw.set_engine), the one they ran forward on also running
their backward; the rest are array code, allocating through minifw.devices. Their
names say what they compute and never repeat a Module's name: nn.Conv2d is the
layer, Convolution2D the operation it applies. Tensor methods and
nn.functional (the PyTorch-signature wrappers) apply them.

A Function with second derivatives (create_graph=True) also has a backward_graph: its
backward written with recorded Tensor operations (docs/autograd.md lists them).
"""
from . import (activation, convolution, dropout, elementwise, embedding, indexing, linear,
               normalization, pooling, recurrent, reductions, shape, softmax, sorting,
               zero_gradient)
