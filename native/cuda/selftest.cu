// Kernels that break a rule on purpose, one per `fault`, and the same kernel
// written correctly ("none"), so the tests can show what the emulator catches.
// Each launches one block of n threads (n a multiple of 32, at most 1024) and
// writes n floats: out[t] = the sum of the thread indices of t's warp plus
// the index of thread (t + 1) % n, read back from shared memory.
#include <cstring>

#include "common.cuh"
#include "selftest.h"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

enum class Fault { none, missing_barrier, early_return, divergent_barrier, shuffle_outside_mask, lane_not_in_mask,
                   exited_lane_in_mask };

__global__ void selftest_kernel(Fault fault, float* out) {
  float* shared = dynamic_shared<float>();
  const unsigned t = threadIdx.x, n = blockDim.x, lane = t % 32;
  if (fault == Fault::early_return && t >= n / 2) return;
  shared[t] = float(t);
  if (fault == Fault::divergent_barrier && t % 2) {
    __syncthreads();  // odd threads wait here, even ones below
  } else if (fault != Fault::missing_barrier) {
    __syncthreads();
  }
  const float neighbour = shared[(t + 1) % n];
  float sum = float(t);
  if (fault == Fault::shuffle_outside_mask) {
    // Lanes 0-15 take part but read lanes 16-31, which do not: undefined on a GPU.
    if (lane < 16) sum += __shfl_sync(0x0000ffffu, sum, lane + 16);
    out[t] = sum;
    return;
  }
  if (fault == Fault::lane_not_in_mask) sum += __shfl_xor_sync(0x0000ffffu, sum, 1);  // lanes 16-31 are not in it
  if (fault == Fault::exited_lane_in_mask && lane == 31) return;
  sum = warp_sum(sum);
  out[t] = sum + neighbour;
}

Fault parse_fault(const char* name) {
  const char* names[] = {"none", "missing_barrier", "early_return", "divergent_barrier", "shuffle_outside_mask",
                         "lane_not_in_mask", "exited_lane_in_mask"};
  for (int i = 0; i < int(sizeof names / sizeof *names); ++i)
    if (!std::strcmp(name, names[i])) return Fault(i);
  throw std::invalid_argument(std::string("selftest: unknown fault '") + name + "'");
}
}  // namespace

void selftest(const char* fault, float* out, int64_t n, void* stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (!std::strcmp(fault, "too_many_threads")) {  // one thread over the limit of a block
    launch("selftest_kernel", selftest_kernel, dim3(1), dim3(1025), 1025 * sizeof(float), s, Fault::none, out);
  } else if (!std::strcmp(fault, "too_much_shared")) {  // over 48 KiB without cudaFuncSetAttribute
    launch("selftest_kernel", selftest_kernel, dim3(1), dim3(unsigned(n)), 64 * 1024, s, Fault::none, out);
  } else {
    launch("selftest_kernel", selftest_kernel, dim3(1), dim3(unsigned(n)), size_t(n) * sizeof(float), s,
           parse_fault(fault), out);
  }
}
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
