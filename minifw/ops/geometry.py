"""Output sizes of sliding-window primitives (convolution, pooling), computed one way for all."""


def window_out_size(size, kernel, stride, padding, dilation=1, ceil_mode=False):
    """Positions of a window of `kernel` taps spaced `dilation` apart, moved by `stride`
    over `size` elements padded by `padding` on each side. With ceil_mode a last partial
    window counts, unless it would start in the right padding (PyTorch's rule)."""
    span = size + 2 * padding - (dilation * (kernel - 1) + 1)  # >= 0, checked by the caller
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out
