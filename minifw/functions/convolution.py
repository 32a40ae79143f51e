"""2-D convolution and its transpose: Functions over the current engine's conv2d primitives.

Second derivatives (create_graph=True): a convolution's data gradient is the transposed
convolution with the same weight, and its filter gradient a correlation of x with dy
(ConvolutionFilterGradient); the derivatives of each of the three are the other two again,
so every order of derivative stays within these Functions and their primitives."""
from .. import devices
from ..autograd import Function
from ..engines import ENGINES, current_engine, engine as engine_named


def engine_of(ctx):
    """The engine `ctx`'s forward ran on, made current for a block: a backward_graph applies
    Functions, which ask current_engine(), and a node's backward runs on its forward's engine."""
    return engine_named(next(name for name, module in ENGINES.items() if module is ctx.engine))


def _zero_extended(dy, h, w):
    """dy (N, K, h', w') with zero rows and columns added up to (h, w): the part of a
    convolution's output beyond what the transposed convolution's input covers."""
    if dy.shape[2:] == (h, w):
        return dy
    extended = devices.zeros(dy.shape[:2] + (h, w), dy.dtype, devices.of(dy))
    extended[:, :, :dy.shape[2], :dy.shape[3]] = dy
    return extended


def _conv_out_hw(x_hw, weight_shape, geometry):
    (sh, sw), (ph, pw), (dh, dw) = geometry["stride"], geometry["padding"], geometry["dilation"]
    kh, kw = weight_shape[2:]
    return ((x_hw[0] + 2 * ph - dh * (kh - 1) - 1) // sh + 1,
            (x_hw[1] + 2 * pw - dw * (kw - 1) - 1) // sw + 1)


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

    @staticmethod
    def backward_graph(ctx, dy):
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        dx = dw = db = None
        with engine_of(ctx):
            if need_x:  # output_shape=x.shape: the rows a stride skips at the end come back as zeros
                dx = TransposedConvolution2D.apply(dy, weight, None, output_shape=x.shape, **ctx.geometry)
            if need_w:
                dw = ConvolutionFilterGradient.apply(x, dy, weight_shape=weight.shape, **ctx.geometry)
        if need_b:
            db = dy.sum((0, 2, 3))
        return dx, dw, db


class ConvolutionFilterGradient(Function):
    """The filter gradient of a convolution as a Function of (x, dy): the correlation of x with
    dy, through the engine's backward-filter primitive. It is linear in each argument: its
    derivative in x is the transposed convolution of dy with the incoming weight-shaped
    gradient g, and in dy the convolution of x with g. dy may have fewer rows or columns than
    the convolution of x gives (the transposed convolution's weight gradient, where
    output_padding >= stride): the missing ones are zeros."""

    @staticmethod
    def forward(ctx, x, dy, *, weight_shape, **geometry):
        engine = ctx.engine = current_engine()
        ctx.save_for_backward(x, dy)
        ctx.geometry, ctx.out_hw = geometry, _conv_out_hw(x.shape[2:], weight_shape, geometry)
        return engine.conv2d_backward_filter(x, _zero_extended(dy, *ctx.out_hw), weight_shape, **geometry)

    @staticmethod
    def backward(ctx, g):
        x, dy = ctx.saved_tensors
        need_x, need_dy = ctx.needs_input_grad
        engine, geometry = ctx.engine, ctx.geometry
        dx = ddy = None
        if need_x:
            dx = engine.conv2d_backward_data(_zero_extended(dy, *ctx.out_hw), g, x.shape, **geometry)
        if need_dy:
            ddy = engine.conv2d_forward(x, g, None, **geometry)
            if ddy.shape != dy.shape:
                ddy = ddy[:, :, :dy.shape[2], :dy.shape[3]].copy()
        return dx, ddy

    @staticmethod
    def backward_graph(ctx, g):
        x, dy = ctx.saved_tensors
        need_x, need_dy = ctx.needs_input_grad
        dx = ddy = None
        with engine_of(ctx):
            if need_x:  # the transposed convolution zero-extends a short dy itself
                dx = TransposedConvolution2D.apply(dy, g, None, output_shape=x.shape, **ctx.geometry)
            if need_dy:
                ddy = Convolution2D.apply(x, g, None, **ctx.geometry)
        if need_dy and ddy.shape != dy.shape:
            ddy = ddy[:, :, :dy.shape[2], :dy.shape[3]]
        return dx, ddy


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
        # x itself too (x_conv when not extended): second derivatives continue x's history
        ctx.save_for_backward(x_conv, weight, x)
        ctx.geometry, ctx.x_hw = geometry, (h, w)
        return y

    @staticmethod
    def backward(ctx, dy):
        x_conv, weight, _ = ctx.saved_tensors
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

    @staticmethod
    def backward_graph(ctx, dy):
        _, weight, x = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        dx = dw = db = None
        with engine_of(ctx):
            if need_x:
                dx = Convolution2D.apply(dy, weight, None, **ctx.geometry)
            if need_w:  # dy in the role of the convolution's x, x in that of its output gradient
                dw = ConvolutionFilterGradient.apply(dy, x, weight_shape=weight.shape, **ctx.geometry)
        if need_x and dx.shape[2:] != x.shape[2:]:
            dx = dx[:, :, :x.shape[2], :x.shape[3]]
        if need_b:
            db = dy.sum((0, 2, 3))
        return dx, dw, db
