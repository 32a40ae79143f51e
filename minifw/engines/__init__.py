"""Engines: the same layers computed different ways, as Caffe's `engine: CAFFE | CUDNN`.

`caffe` is the classic way (im2col + the array library's GEMM, plain array code
for the rest): the yardstick the native primitives are measured against.
"""
