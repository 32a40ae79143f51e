"""The layers, one file per family as in torch.nn.modules (module, container, linear,
conv, pooling, activation, normalization, batchnorm, dropout, flatten, sparse, loss,
rnn, upsampling, distance, padding, pixelshuffle), so that both `nn.Linear` and
`nn.modules.linear.Linear` name the same class."""
from .module import Buffer, Module
from .activation import (ELU, GELU, Hardtanh, LeakyReLU, LogSoftmax, PReLU, ReLU, ReLU6, Sigmoid,
                         SiLU, Softmax, Softmax2d, Softmin, Softplus, Tanh)
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv2d, ConvTranspose2d
from .conv import Conv1d, ConvTranspose1d
from .conv import Conv3d, ConvTranspose3d
from .distance import CosineSimilarity
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MSELoss, NLLLoss, SmoothL1Loss)
from .normalization import GroupNorm, LayerNorm, LocalResponseNorm
from .pooling import AdaptiveAvgPool2d, AdaptiveMaxPool2d, AvgPool2d, MaxPool2d
from .pooling import AdaptiveAvgPool1d, AdaptiveMaxPool1d, AvgPool1d, MaxPool1d
from .pooling import AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, MaxPool3d
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding, EmbeddingBag
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .activation import (CELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, LogSigmoid, Mish,
                         Softshrink, Softsign, Tanhshrink, Threshold)
from .loss import (CosineEmbeddingLoss, CTCLoss, GaussianNLLLoss, HingeEmbeddingLoss, MarginRankingLoss,
                   MultiLabelSoftMarginLoss, PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss)
from .normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, RMSNorm
from .padding import (CircularPad1d, CircularPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d,
                      ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, ZeroPad1d, ZeroPad2d)
from .pixelshuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle
from .fold import Fold, Unfold
from .attention import MultiheadAttention
from .activation import RReLU
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .batchnorm import SyncBatchNorm
from .distance import PairwiseDistance
from .normalization import CrossMapLRN2d
from .dropout import AlphaDropout, FeatureAlphaDropout
from .loss import (MultiLabelMarginLoss, MultiMarginLoss, NLLLoss2d, TripletMarginWithDistanceLoss)
from .padding import CircularPad3d, ConstantPad3d, ReflectionPad3d, ReplicationPad3d, ZeroPad3d
from .pooling import (FractionalMaxPool2d, FractionalMaxPool3d, LPPool1d, LPPool2d, LPPool3d,
                      MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .lazy import LazyModuleMixin, UninitializedBuffer, UninitializedParameter
from .linear import LazyLinear
from .conv import (LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
                   LazyConvTranspose3d)
from .batchnorm import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d
from .normalization import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)

__all__ = [
    "Buffer", "Module",
    # more activations, norms, padding, shuffles and losses
    "CELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "LogSigmoid", "Mish",
    "Softshrink", "Softsign", "Tanhshrink", "Threshold", "InstanceNorm1d", "InstanceNorm2d",
    "RMSNorm", "CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d",
    "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "ZeroPad1d",
    "ZeroPad2d", "ChannelShuffle", "PixelShuffle", "PixelUnshuffle", "CosineEmbeddingLoss",
    "CTCLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MarginRankingLoss", "MultiLabelSoftMarginLoss",
    "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss",
    # containers
    "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential",
    # layers
    "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "Bilinear", "Conv2d",
    "ConvTranspose2d", "CosineSimilarity", "Dropout", "Dropout1d", "Dropout2d", "Embedding", "EmbeddingBag",
    "Flatten", "GroupNorm", "Identity", "LayerNorm", "Linear", "LocalResponseNorm", "MaxPool2d",
    "Unflatten", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d",
    # activations
    "ELU", "GELU", "Hardtanh", "LeakyReLU", "LogSoftmax", "PReLU", "ReLU", "ReLU6", "SiLU",
    "Sigmoid", "Softmax", "Softmax2d", "Softmin", "Softplus", "Tanh",
    # losses
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss",
    "MSELoss", "NLLLoss", "SmoothL1Loss",
    # attention and transformers
    "MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
    "TransformerEncoder", "TransformerEncoderLayer",
    # recurrent
    "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase",
    # 1-D convolution and pooling
    "AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AvgPool1d", "Conv1d", "ConvTranspose1d", "MaxPool1d",
    # 3-D convolution, pooling, normalization and dropout
    "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "AvgPool3d", "BatchNorm3d", "Conv3d", "ConvTranspose3d",
    "Dropout3d", "InstanceNorm3d", "MaxPool3d",
    # unpooling, power-average and fractional pooling, 3-D padding, more activations and losses
    "AdaptiveLogSoftmaxWithLoss", "AlphaDropout", "CircularPad3d", "ConstantPad3d", "CrossMapLRN2d", "FeatureAlphaDropout", "FractionalMaxPool2d",
    "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d", "MultiLabelMarginLoss", "MultiMarginLoss", "NLLLoss2d", "PairwiseDistance",
    "RReLU", "ReflectionPad3d", "ReplicationPad3d", "SyncBatchNorm", "TripletMarginWithDistanceLoss",
    "ZeroPad3d",
    # lazy layers (shapes from the first input)
    "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
    "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d",
    "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear", "LazyModuleMixin", "UninitializedBuffer",
    "UninitializedParameter",
    # sliding windows as columns
    "Fold", "Unfold",
]
