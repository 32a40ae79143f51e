// Where each layer and direction's pieces lie in the flat weights and in the
// reserve (the layout rnn.h documents), and the step order of a direction:
// shared by the CPU kernels (rnn.cpp) and the CUDA ones (cuda/rnn.cu), so that
// a reserve means the same on every device.
#pragma once
#include <cstdint>

#include "rnn.h"

namespace minifw {
namespace rnn_layout {

template <typename T>
struct DirWeights {
  T *w_ih, *w_hh, *b_ih, *b_hh;  // b_* null without bias
};

template <typename T>
DirWeights<T> dir_weights(const RnnShape& s, T* w, int64_t l, int64_t d) {
  const int64_t GH = s.gates() * s.hidden;
  T* p = w + s.weight_offset(l, d);
  DirWeights<T> r{p, p + GH * s.layer_input(l), nullptr, nullptr};
  if (s.bias) {
    r.b_ih = r.w_hh + GH * s.hidden;
    r.b_hh = r.b_ih + GH;
  }
  return r;
}

template <typename T>
struct DirReserve {
  T *gates, *dgates, *dgates_h, *hn, *c;  // hn (GRU) and c (LSTM) null otherwise
};

template <typename T>
T* layer_out(const RnnShape& s, T* reserve, int64_t l) {
  return reserve + l * s.layer_reserve();
}

template <typename T>
DirReserve<T> dir_reserve(const RnnShape& s, T* reserve, int64_t l, int64_t d) {
  const int64_t steps = s.T * s.N, GH = s.gates() * s.hidden;
  T* p = layer_out(s, reserve, l) + steps * s.dirs * s.hidden + d * s.direction_reserve();
  DirReserve<T> r{p, p + steps * GH, p + steps * GH, nullptr, nullptr};  // dgates_h is dgates but for GRU
  p += 2 * steps * GH;
  if (s.mode == RnnMode::gru) {
    r.dgates_h = p;
    r.hn = p + steps * GH;
  }
  if (s.mode == RnnMode::lstm) r.c = p;
  return r;
}

// The step order of direction d: forward t = 0 .. T-1, reverse t = T-1 .. 0.
inline int64_t step_time(const RnnShape& s, int64_t d, int64_t k) { return d == 0 ? k : s.T - 1 - k; }

}  // namespace rnn_layout
}  // namespace minifw
