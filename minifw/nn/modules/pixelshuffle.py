"""Pixel and channel shuffles: PixelShuffle, PixelUnshuffle, ChannelShuffle."""
from ...checks import check_size
from .. import functional as F
from .module import Module


class PixelShuffle(Module):
    """(*, C r^2, H, W) to (*, C, H r, W r), r = upscale_factor (sub-pixel convolution)."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = check_size("PixelShuffle", "upscale_factor", upscale_factor)

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) to (*, C r^2, H, W), r = downscale_factor: PixelShuffle's inverse."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = check_size("PixelUnshuffle", "downscale_factor", downscale_factor)

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the channels of (N, C, *) input across `groups` groups (ShuffleNet)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = check_size("ChannelShuffle", "groups", groups)

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
