// Launchers of the recurrent-layer kernels (rnn.cu); see launchers.h. The problem,
// the flat weights and the reserve are the CPU's (cpu/rnn.h), so a reserve made on
// one device is laid out as on the other; the forward's workspace is the CPU's
// too. The data backward takes a workspace where the CPU allocates its own: the
// gradient reaching a lower layer's output (layers > 1).
#pragma once
#include "cpu/rnn.h"
#include "launchers.h"

#define MINIFW_RNN_LAUNCHERS                                                                                     \
  /* elements of T the forward (training or not) and the data backward take as workspace */                     \
  int64_t rnn_forward_workspace(const RnnShape& s, bool training);                                               \
  int64_t rnn_backward_data_workspace(const RnnShape& s);                                                        \
  template <typename T>                                                                                           \
  void rnn_forward(const RnnShape& s, const T* x, const T* h0, const T* c0, const T* w, T* y, T* h_n, T* c_n,    \
                   T* reserve, T* workspace, const int64_t* lengths, void* stream);                               \
  template <typename T>                                                                                           \
  void rnn_backward_data(const RnnShape& s, const T* w, T* reserve, const T* h0, const T* c0, const T* dy,       \
                         const T* dh_n, const T* dc_n, T* dx, T* dh0, T* dc0, T* workspace,                       \
                         const int64_t* lengths, void* stream);                                                   \
  template <typename T>                                                                                           \
  void rnn_backward_weights(const RnnShape& s, const T* x, const T* reserve, const T* h0, T* dw,                 \
                            const int64_t* lengths, void* stream);
MINIFW_DECLARE_CUDA_LAUNCHERS(MINIFW_RNN_LAUNCHERS)
