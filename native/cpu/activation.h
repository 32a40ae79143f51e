// Elementwise activations, forward and backward. The backward is computed
// from the forward output y (so an in-place forward loses nothing); x is
// consulted only where y cannot tell the branch (leaky relu with a negative
// slope, elu with a negative alpha).
#pragma once
#include <cstdint>
#include <string>

namespace minifw {

enum class ActMode { relu, leaky_relu, sigmoid, tanh, elu, relu6 };
ActMode parse_act_mode(const std::string& name);  // throws std::invalid_argument

struct ActParams {
  ActMode mode;
  double negative_slope;  // leaky_relu
  double alpha;           // elu
};

// y may equal x (in place).
template <typename T>
void activation_forward(const ActParams& p, const T* x, T* y, int64_t n, int nthreads);

// x may be null unless activation_backward_needs_x(p).
template <typename T>
void activation_backward(const ActParams& p, const T* dy, const T* y, const T* x, T* dx, int64_t n,
                         int nthreads);

bool activation_backward_needs_x(const ActParams& p);

}  // namespace minifw
