"""The names of minifw's autograd nodes: each is the name PyTorch gives the node of the same
operation (`type(y.grad_fn).__name__`, `y.grad_fn.name()`), its numeric suffix included:
MulBackward0, SumBackward1 (a sum over dims), MmBackward0, ViewBackward0, ...

A Function that serves one PyTorch operation has its name here; one that serves several
reads which from its context (Pointwise's op name, Activation's mode, Index's index), and
an operation that PyTorch names otherwise renames its node where it is made
(minifw.autograd.rename: t() is a Permute, named TBackward0). A Function with no entry is
named after itself: its class name, then "Backward0"."""
import functools

import numpy as np

from .. import devices


@functools.lru_cache(maxsize=None)
def camel(op):
    """An op's name as PyTorch's node names spell it: log1p -> Log1P, nan_to_num -> NanToNum."""
    out, up = [], True
    for c in op:
        if c == "_":
            up = True
            continue
        out.append(c.upper() if up else c)
        up = c.isdigit()
    return "".join(out)


def _is_array(a):
    return devices.is_array(a) and a.ndim > 0


def _index(ctx):
    """x[index]: PyTorch applies a basic index's items one by one (a whole-dim slice inside a
    tuple is skipped), so the node is the last one's; an advanced index is one index op."""
    shape, index = ctx.args
    if not isinstance(index, tuple):
        index = (index,)
        if isinstance(index[0], slice):
            return "SliceBackward0"
    if not all(i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice)) for i in index):
        return "IndexBackward0"
    name, dim = "AliasBackward0", 0
    rest = len(shape) - sum(1 for i in index if i is not None and i is not Ellipsis)
    for i in index:
        if i is None:
            name = "UnsqueezeBackward0"
        elif i is Ellipsis:
            dim += rest
        elif isinstance(i, slice):
            if i.indices(shape[dim]) != (0, shape[dim], 1):
                name = "SliceBackward0"
            dim += 1
        else:
            name = "SelectBackward0"
            dim += 1
    return name


def _matmul(ctx):
    a, b = (np.ndim(s) for s in ctx._saved[:2])
    if a <= 2 and b <= 2:
        return {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4",
                (2, 2): "MmBackward0"}[a, b]
    return "UnsafeViewBackward0"  # batches folded into one product, then viewed


def _pow(ctx):
    a, b = ctx._saved[:2]
    if not _is_array(b):
        return "PowBackward0"  # tensor ** number
    return "PowBackward1" if _is_array(a) else "PowBackward2"


def _reduction(name):
    return lambda ctx: f"{name}Backward0" if ctx.args[1] is None else f"{name}Backward1"


def _clamp(ctx):
    return "ClampBackward0" if any(_is_array(b) for b in ctx.bounds) else "ClampBackward1"


# Pointwise ops PyTorch names otherwise
POINTWISE = {"sqrt_of_squares": "StdBackward0"}

# Function class name -> node name, or a function of the call's context giving it
NAMES = {
    "Add": "AddBackward0", "Sub": "SubBackward0", "Mul": "MulBackward0", "Div": "DivBackward0",
    "Neg": "NegBackward0", "Exp": "ExpBackward0", "Log": "LogBackward0", "Sqrt": "SqrtBackward0",
    "Abs": "AbsBackward0", "Remainder": "RemainderBackward0", "Pow": _pow,
    "Pointwise": lambda ctx: POINTWISE.get(ctx.name) or f"{camel(ctx.name)}Backward0",
    "BinaryPointwise": lambda ctx: f"{camel(ctx.name)}Backward0",
    "Maximum": lambda ctx: "MinimumBackward0" if ctx.smallest else "MaximumBackward0",
    "Clamp": _clamp, "Where": "WhereBackward0", "Cast": "ToCopyBackward0",
    "ToDevice": "ToCopyBackward0", "Clone": "CloneBackward0",
    "Triangle": lambda ctx: "TriuBackward0" if ctx.upper else "TrilBackward0",
    # shapes
    "Reshape": "ViewBackward0", "Permute": "PermuteBackward0", "Expand": "ExpandBackward0",
    "Index": _index, "Flip": "FlipBackward0", "Roll": "RollBackward0",
    "Diagonal": "DiagonalBackward0", "DiagonalEmbed": "DiagEmbedBackward0", "Cat": "CatBackward0",
    "Stack": "StackBackward0", "Split": "SplitBackward0", "Repeat": "RepeatBackward0",
    "Padding": "ConstantPadNdBackward0", "Unfold": "UnfoldBackward0",
    # reductions
    "Sum": _reduction("Sum"), "Mean": _reduction("Mean"),
    "Product": lambda ctx: "ProdBackward0" if ctx.args[0] is None else "ProdBackward1",
    "Amax": lambda ctx: ("MinBackward1" if ctx.smallest else "MaxBackward1") if ctx.args[1] is None
    else ("AminBackward0" if ctx.smallest else "AmaxBackward0"),
    "MaxDim": lambda ctx: "MinBackward0" if ctx.smallest else "MaxBackward0",
    "Median": "MedianBackward0", "MedianDim": "MedianBackward1", "KthValue": "KthvalueBackward0",
    "CumulativeSum": "CumsumBackward0", "CumulativeProduct": "CumprodBackward0",
    "CumulativeExtreme": lambda ctx: "CumminBackward0" if ctx.smallest else "CummaxBackward0",
    "LogCumulativeSumExp": "LogcumsumexpBackward0", "Sort": "SortBackward0",
    "VectorNorm": "LinalgVectorNormBackward0",
    # products
    "MatMul": _matmul, "MatrixProduct": "MmBackward0",
    # layers
    # relu6 is PyTorch's hardtanh(0, 6), so its node is hardtanh's
    "Activation": lambda ctx: ({"selu": "EluBackward0", "relu6": "HardtanhBackward0"}.get(ctx.args[0])
                               or f"{camel(ctx.args[0])}Backward0"),
    "GaussianErrorLinearUnit": "GeluBackward0", "SigmoidLinearUnit": "SiluBackward0",
    "HardTanh": "HardtanhBackward0", "SmoothRectifier": "SoftplusBackward0",
    "HardSwish": "HardswishBackward0", "HardSigmoid": "HardsigmoidBackward0",
    "Mish": "MishBackward0", "LogSigmoid": "LogSigmoidBackward0",
    "ScaledExponentialLinear": "EluBackward0",
    "Shrink": lambda ctx: "SoftshrinkBackward0" if ctx.soft else "HardshrinkBackward0",
    "Threshold": "ThresholdBackward0",
    "Convolution2D": "ConvolutionBackward0", "TransposedConvolution2D": "ConvolutionBackward0",
    "MaxPooling2D": "MaxPool2DWithIndicesBackward0", "AveragePooling2D": "AvgPool2DBackward0",
    "AdaptiveAveragePooling2D": "AdaptiveAvgPool2DBackward0",
    "AdaptiveMaxPooling2D": "AdaptiveMaxPool2DBackward0",
    "BatchNormalization": "NativeBatchNormBackward0", "LayerNormalization": "NativeLayerNormBackward0",
    "SoftmaxAlongDim": lambda ctx: "LogSoftmaxBackward0" if ctx.log else "SoftmaxBackward0",
    "SoftmaxCrossEntropy": "NllLossBackward0", "NegativeLogLikelihood": "NllLossBackward0",
    "SquaredError": "MseLossBackward0",
    "SmoothAbsoluteError": lambda ctx: "HuberLossBackward0" if ctx.huber else "SmoothL1LossBackward0",
    "BinaryCrossEntropy": "BinaryCrossEntropyBackward0",
    "BinaryCrossEntropyWithLogits": "BinaryCrossEntropyWithLogitsBackward0",
    "ConnectionistTemporalClassification": "CtcLossBackward0",
    "EmbeddingLookup": "EmbeddingBackward0", "BagReduction": "EmbeddingBagBackward0",
    "InvertedDropout": "MulBackward0", "ChannelDropout": "MulBackward0",
    "GridSampling": "GridSampler2DBackward0", "Unfolding": "Im2ColBackward0",
    "Folding": "Col2ImBackward0",
    "IndexFill": "IndexFillBackward0", "IndexAdd": "IndexAddBackward0",
    "IndexPut": "IndexPutBackward0", "ScatterReduce": "ScatterReduceBackward0",
    # a Python Function of PyTorch's own: no suffix
    "BackwardHookFunction": "BackwardHookFunctionBackward",
}


def fixed(function):
    """Whether every node recording a call of minifw's `function` has the same name (when its
    forward sets no ctx.node_name): it has no entry here, or a name, not a function of the
    call, as its entry."""
    return isinstance(NAMES.get(function.__name__, ""), str)


def of(function, ctx):
    """The name of the node recording a call of minifw's `function` with context `ctx`."""
    name = NAMES.get(function.__name__)
    if name is None:
        return f"{function.__name__}Backward0"
    return name if isinstance(name, str) else name(ctx)
