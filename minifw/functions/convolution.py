"""2-D convolution and its transpose: Functions over the current engine's conv2d primitives."""
from .. import devices
from ..autograd import Function
from ..engines import current_engine


class Convolution2D(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, **geometry):
        engine = ctx.engine = current_engine()
        ctx.save_for_backward(x, weight)
        ctx.geometry = geometry
        return engine.conv2d_forward(x, weight, bias, **geometry)

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        engine, geometry = ctx.engine, ctx.geometry
        dx = engine.conv2d_backward_data(dy, weight, x.shape, **geometry) if need_x else None
        dw = engine.conv2d_backward_filter(x, dy, weight.shape, **geometry) if need_w else None
        db = engine.conv2d_backward_bias(dy) if need_b else None
        return dx, dw, db


class TransposedConvolution2D(Function):
    """The transposed convolution (conv_transpose2d) over the current engine's conv2d
    primitives: it is the input gradient of the convolution that maps its output (N, C_out,
    H_out, W_out) to its input (N, C_in, H, W) with the same weight (C_in, C_out // groups, kH,
    kW). So its forward is that convolution's backward-data, its input gradient that
    convolution's forward, and its weight gradient that convolution's backward-filter with the
    roles of x and dy swapped.

    Where output_padding >= stride (allowed when it is below dilation), the convolution of
    H_out rows gives more than the H rows of x: x is extended with zero rows and columns,
    which add nothing to the output, and its gradient is cropped back."""

    @staticmethod
    def forward(ctx, x, weight, bias, *, output_shape, **geometry):
        engine = ctx.engine = current_engine()
        n, c, h, w = x.shape
        (sh, sw), (ph, pw), (dh, dw) = geometry["stride"], geometry["padding"], geometry["dilation"]
        kh, kw = weight.shape[2:]
        conv_h = (output_shape[2] + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        conv_w = (output_shape[3] + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        x_conv = x
        if (conv_h, conv_w) != (h, w):
            x_conv = devices.zeros((n, c, conv_h, conv_w), x.dtype, devices.of(x))
            x_conv[:, :, :h, :w] = x
        y = engine.conv2d_backward_data(x_conv, weight, output_shape, **geometry)
        if bias is not None:
            y += bias.reshape(1, -1, 1, 1)
        ctx.save_for_backward(x_conv, weight)
        ctx.geometry, ctx.x_hw = geometry, (h, w)
        return y

    @staticmethod
    def backward(ctx, dy):
        x_conv, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        engine, geometry = ctx.engine, ctx.geometry
        dx = dw = db = None
        if need_x:
            dx = engine.conv2d_forward(dy, weight, None, **geometry)
            h, w = ctx.x_hw
            if dx.shape[2:] != (h, w):
                dx = dx[:, :, :h, :w].copy()
        if need_w:
            dw = engine.conv2d_backward_filter(dy, x_conv, weight.shape, **geometry)
        if need_b:
            db = engine.conv2d_backward_bias(dy)
        return dx, dw, db
