// A warp's TF32 tensor-core product written correctly ("none") and with one wmma
// rule broken per `fault`, so the tests can show what the emulator's wmma
// (cudasim/wmma.h) checks: a call made by half the warp, a lane gone before the
// warp's calls, a misaligned fragment pointer. Also the direct check of its
// rounding: out = tf32(a) * tf32(b), accumulated in float.
#include <cstring>

#include "common.cuh"
#include "wmma_selftest.h"
#ifdef __CUDACC__
#include <mma.h>
#endif

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {

enum class WmmaFault { none, divergent_mma, lane_exits, misaligned };
constexpr unsigned kSelftestThreads = 64;  // two warps

__global__ void wmma_selftest_kernel(WmmaFault fault, const float* a, const float* b, float* out) {
  using namespace nvcuda;
  alignas(32) __shared__ float a_tile[16 * 8 + 8];  // + 8: the misaligned load stays inside
  alignas(32) __shared__ float b_tile[8 * 16];
  alignas(32) __shared__ float c_tile[kSelftestThreads / 32][16 * 16];
  const unsigned t = threadIdx.x, warp = t / 32, lane = t % 32;
  for (unsigned i = t; i < 16 * 8; i += blockDim.x) {
    a_tile[i] = a[i];
    b_tile[i] = b[i];
  }
  if (t < 8) a_tile[16 * 8 + t] = 0.0f;
  __syncthreads();
  if (fault == WmmaFault::lane_exits && lane >= 16) return;
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::load_matrix_sync(fa, fault == WmmaFault::misaligned ? a_tile + 1 : a_tile, 8);
  wmma::load_matrix_sync(fb, b_tile, 16);
  for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
  for (int i = 0; i < fb.num_elements; ++i) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
  if (fault != WmmaFault::divergent_mma || lane < 16) wmma::mma_sync(acc, fa, fb, acc);  // else lanes 16-31 skip it
  wmma::store_matrix_sync(c_tile[warp], acc, 16, wmma::mem_row_major);
  __syncwarp();  // each warp reads back only its own tile
  for (unsigned i = lane; i < 16 * 16; i += 32) out[warp * 16 * 16 + i] = c_tile[warp][i];
}

WmmaFault parse_fault(const char* name) {
  const char* names[] = {"none", "divergent_mma", "lane_exits", "misaligned"};
  for (int i = 0; i < int(sizeof names / sizeof *names); ++i)
    if (!std::strcmp(name, names[i])) return WmmaFault(i);
  throw std::invalid_argument(std::string("wmma_selftest: fault must be one of 'none', 'divergent_mma', "
                                          "'lane_exits', 'misaligned'; got '") + name + "'");
}
}  // namespace

void wmma_selftest(const char* fault, const float* a, const float* b, float* out, void* stream) {
  launch("wmma_selftest_kernel", wmma_selftest_kernel, dim3(1), dim3(kSelftestThreads), 0,
         static_cast<cudaStream_t>(stream), parse_fault(fault), a, b, out);
}
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
