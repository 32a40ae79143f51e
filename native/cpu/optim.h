// Optimizer updates, fused: one pass over a parameter reads the parameter, its
// gradient and the optimizer's state once and writes the parameter and the state
// once, where the array-at-a-time formulation makes a pass per operation.
#pragma once
#include <cstdint>

namespace minifw {

// PyTorch's SGD step (torch.optim.SGD) on n elements, in place:
//   g' = (maximize ? -g : g) + weight_decay * p
//   buf = g'                                        (momentum != 0, first step)
//   buf = momentum * buf + keep * g'                (momentum != 0, later steps)
//   d = nesterov ? g' + momentum * buf : buf        (momentum != 0; d = g' otherwise)
//   p = p - lr * d
// keep = 1 - dampening and "momentum != 0" are the caller's, decided in double before
// rounding to T (as PyTorch does): 1 - float(dampening) loses all accuracy as dampening
// nears 1, and a momentum below float's range is still momentum. buf null means
// momentum == 0: then buf is neither read nor written. g is only read. p, g and buf
// must not overlap.
template <typename T>
void sgd_step(int64_t n, T* p, const T* g, T* buf, T lr, T momentum, T keep, T weight_decay,
              bool nesterov, bool maximize, bool first_step, int nthreads);

}  // namespace minifw
