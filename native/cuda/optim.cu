// The fused SGD step on the GPU: one grid-stride pass reads p, g and the
// momentum buffer once and writes p and the buffer once, with the formulas
// and the order of operations of cpu/optim.cpp (PyTorch's torch.optim.SGD).
// The flags are the same for every thread, so their branches never diverge.
// nvcc may fuse a multiply and the add after it into an FMA (one rounding
// fewer than the CPU's baseline code), so results can differ from the CPU's
// in the last bit.
#include "common.cuh"
#include "optim.h"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

enum class Momentum : int { none, first_step, later_step };

template <typename T>
struct SgdCoefficients {
  T lr, sign, momentum, keep, weight_decay;  // sign: -1 to maximize; keep = 1 - dampening
  bool decay, nesterov;                      // decay: weight_decay != 0 (0 * inf p would be NaN)
  Momentum mode;
};

template <typename T>
__global__ void sgd_step_kernel(int64_t n, T* p, const T* g, T* buf, SgdCoefficients<T> c) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    T d = c.sign * g[i];  // exact: multiplying by +-1 only flips the sign
    if (c.decay) d = c.weight_decay * p[i] + d;
    if (c.mode != Momentum::none) {
      const T b = c.mode == Momentum::first_step ? d : c.momentum * buf[i] + c.keep * d;  // first: buf not read
      buf[i] = b;
      d = c.nesterov ? d + c.momentum * b : b;
    }
    p[i] = p[i] - c.lr * d;
  }
}
}  // namespace

template <typename T>
void sgd_step(int64_t n, T* p, const T* g, T* buf, T lr, T momentum, T keep, T weight_decay, bool nesterov,
              bool maximize, bool first_step, void* stream) {
  if (n == 0) return;
  // keep = 1 - dampening and buf (null: no momentum) as cpu/optim.h says
  const Momentum mode = buf == nullptr ? Momentum::none : first_step ? Momentum::first_step : Momentum::later_step;
  const SgdCoefficients<T> c{lr,           maximize ? T(-1) : T(1), momentum, keep, weight_decay,
                             weight_decay != T(0), nesterov, mode};
  launch("sgd_step", sgd_step_kernel<T>, elementwise_grid(n), dim3(kElementwiseThreads), 0,
         static_cast<cudaStream_t>(stream), n, p, g, buf, c);
}

template void sgd_step<float>(int64_t, float*, const float*, float*, float, float, float, float, bool, bool, bool,
                              void*);
template void sgd_step<double>(int64_t, double*, const double*, double*, double, double, double, double, bool, bool,
                               bool, void*);
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
