"""The building blocks torchvision keeps in torchvision.ops and its models share: a
convolution with a norm and an activation (Conv2dNormActivation), squeeze-and-excitation
(SqueezeExcitation), stochastic depth (stochastic_depth, StochasticDepth) and a module that
permutes dimensions (Permute). minifw has no vision.ops package; the models import these from
here."""
from ... import empty, nn
from ...nn import functional as F


class Conv2dNormActivation(nn.Sequential):
    """A convolution padded to keep the size at stride 1 (no bias when a norm follows), then
    `norm_layer` and `activation_layer` (either may be None): torchvision.ops'
    Conv2dNormActivation, a Sequential numbered 0, 1, 2."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1, inplace=True,
                 bias=None):
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                            dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer() if inplace is None else activation_layer(inplace=inplace))
        super().__init__(*layers)
        self.out_channels = out_channels


class SqueezeExcitation(nn.Module):
    """Squeeze-and-excitation (Hu et al., 2018): each channel of the input is multiplied by a
    weight in (0, 1) computed from the whole image: global average pooling (`avgpool`), a 1x1
    convolution down to `squeeze_channels` (`fc1`), `activation` (default ReLU), a 1x1
    convolution back to `input_channels` (`fc2`), `scale_activation` (default Sigmoid).
    Both activations are classes, built without arguments."""

    def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU, scale_activation=nn.Sigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, input):
        return self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(input)))))

    def forward(self, input):
        return self._scale(input) * input


def stochastic_depth(input, p, mode, training=True):
    """Stochastic depth (Huang et al., "Deep Networks with Stochastic Depth", 2016), for the
    residual branch of a block: in training, mode "row" zeroes each sample (the first dimension)
    with probability `p` and "batch" the whole input, and what is kept is scaled by 1 / (1 - p);
    outside training, or at p=0, the input itself. The draws come from minifw's global generator
    (minifw.manual_seed)."""
    p = F._probability("stochastic_depth", p)
    if mode not in ("batch", "row"):
        raise ValueError(f"stochastic_depth: mode must be 'batch' or 'row', got {mode!r}")
    if not training or p == 0.0:
        return input
    survival_rate = 1.0 - p
    size = [input.shape[0]] + [1] * (input.ndim - 1) if mode == "row" else [1] * input.ndim
    noise = empty(size, dtype=input.dtype, device=input.device).bernoulli_(survival_rate)
    if survival_rate > 0.0:
        noise.div_(survival_rate)
    return input * noise


class StochasticDepth(nn.Module):
    """stochastic_depth(input, p, mode, self.training) as a module (p and mode checked here)."""

    def __init__(self, p, mode):
        super().__init__()
        stochastic_depth(empty(1), p, mode, training=False)  # the same errors, when built
        self.p = p
        self.mode = mode

    def forward(self, input):
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"


class Permute(nn.Module):
    """The input with its dimensions in the order `dims` (a list of them), as Tensor.permute."""

    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return x.permute(*self.dims)


def init_mobile_weights(model, linear_init=None):
    """torchvision's initialization of its MobileNets and EfficientNets: convolutions Kaiming
    normal (fan_out) with zero biases, batch and group norms at scale 1 and shift 0, linear
    layers normal(0, 0.01) with zero biases, or `linear_init(module)` where given."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            if linear_init is None:
                nn.init.normal_(m.weight, 0, 0.01)
            else:
                linear_init(m)
            nn.init.zeros_(m.bias)


def check_setting(owner, name, setting, types, described):
    """A model's stage configuration: a non-empty list (or tuple) of `types` instances
    (ValueError when empty, TypeError naming `described` otherwise)."""
    if not setting:
        raise ValueError(f"{owner}: {name} must not be empty, got {setting!r}")
    if not isinstance(setting, (list, tuple)) or not all(isinstance(cnf, types) for cnf in setting):
        raise TypeError(f"{owner}: {name} must be a list of {described}, got {setting!r}")


def check_probability(owner, name, p):
    """A probability argument in [0, 1] (bools refused), as a ValueError naming it."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"{owner}: {name} must be a probability in [0, 1], got {p!r}")
