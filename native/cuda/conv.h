// Launchers of the convolution kernels (conv.cu); see launchers.h. The same
// problem description as the CPU's (cpu/conv_shape.h); the GPU has its own set
// of algorithms (conv_supports) and workspace sizes.
#pragma once
#include "cpu/conv_shape.h"
#include "launchers.h"

#define MINIFW_CONV_LAUNCHERS                                                                                    \
  bool conv_supports(ConvAlgo algo, ConvDir dir, const ConvShape& s);                                             \
  /* bytes of workspace the caller passes to `algo` */                                                            \
  template <typename T>                                                                                           \
  int64_t conv_workspace_bytes(ConvAlgo algo, ConvDir dir, const ConvShape& s);                                   \
  template <typename T>                                                                                           \
  void conv_forward(ConvAlgo algo, const ConvShape& s, const T* x, const T* w, const T* bias, T* y,              \
                    void* workspace, void* stream);                                                               \
  template <typename T>                                                                                           \
  void conv_backward_data(ConvAlgo algo, const ConvShape& s, const T* dy, const T* w, T* dx, void* workspace,     \
                          void* stream);                                                                          \
  template <typename T>                                                                                           \
  void conv_backward_filter(ConvAlgo algo, const ConvShape& s, const T* x, const T* dy, T* dw, void* workspace,  \
                            void* stream);                                                                        \
  /* Caffe's lowering of one image n of x, every channel (all groups): col holds C*R*S rows of */                 \
  /* Ho*Wo values, row (c, r, s) the pixels filter tap (r, s) of channel c meets (0 in the padding) */            \
  template <typename T>                                                                                           \
  void conv_im2col(const ConvShape& s, const T* x, int64_t n, T* col, void* stream);                              \
  /* Its adjoint: image n of dx (only that image is written) from a lowered gradient col of that */               \
  /* layout, each pixel the sum of the col entries im2col would have copied it to */                              \
  template <typename T>                                                                                           \
  void conv_col2im(const ConvShape& s, const T* col, int64_t n, T* dx, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_CONV_LAUNCHERS)
