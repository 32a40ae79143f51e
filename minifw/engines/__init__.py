"""Engines: the same primitives computed different ways, as Caffe's `engine: CAFFE | CUDNN`.

    minifw.set_engine("caffe")           # from now on
    with minifw.engine("caffe"):         # for a block
        loss = model(x)

"primitives" (the default) is minifw.ops, the native primitives. "caffe" is the
classic way (im2col + the array library's GEMM, straightforward array code for
the rest): the yardstick the primitives are measured against. Both have the same
entry points with the same signatures; every Function asks current_engine() for
its primitive in forward and keeps that engine for its backward.
"""
import contextlib

from .. import ops
from . import caffe

ENGINES = {"primitives": ops, "caffe": caffe}
_current = ["primitives", ops]


def current_engine():
    """The module that runs primitives now (minifw.ops or minifw.engines.caffe)."""
    return _current[1]


def get_engine():
    """The name of the current engine: 'primitives' or 'caffe'."""
    return _current[0]


def set_engine(name):
    """Run every primitive with engine `name` ('primitives' or 'caffe') from now on."""
    if name not in ENGINES:
        raise ValueError(f"set_engine: name must be one of {', '.join(map(repr, ENGINES))}; "
                         f"got {name!r}")
    _current[:] = [name, ENGINES[name]]


@contextlib.contextmanager
def engine(name):
    """Run the primitives inside the `with` block with engine `name`, then switch back."""
    previous = get_engine()
    set_engine(name)
    try:
        yield
    finally:
        set_engine(previous)
