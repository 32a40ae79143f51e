"""Output sizes of sliding-window primitives (convolution, pooling), computed one way for all."""


def window_out_size(size, kernel, stride, padding, dilation=1, ceil_mode=False):
    """Positions of a window of `kernel` taps spaced `dilation` apart, moved by `stride`
    over `size` elements padded by `padding` on each side. With ceil_mode a last partial
    window counts, unless it would start in the right padding (PyTorch's rule). A result
    below 1 means no window fits: the caller refuses it."""
    span = size + 2 * padding - (dilation * (kernel - 1) + 1)  # < 0 when the window overhangs the end
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out
