// cudasim's model of the part of nvcuda::wmma (CUDA's <mma.h>) that minifw's
// kernels use: TF32 tensor-core products of shape 16x16x8 with float
// accumulators (sm_80 and newer). Included by cudasim.h.
//
// Modelled:
// - results: __float_to_tf32 rounds as cvt.rna.tf32.f32 does (to nearest, ties
//   away from zero, to TF32's 10 mantissa bits: a float whose low 13 bits are 0);
//   mma_sync multiplies the TF32 values of its operands (an element that was not
//   converted has its low 13 bits ignored, as by the tensor cores) and adds the
//   products to the accumulator in float, in order of k. Products of TF32 values
//   are exact in float, so only the additions round.
// - convergence: load_matrix_sync, mma_sync and store_matrix_sync are
//   warp-collective; all 32 lanes must make the same call together. Each call
//   joins the warp as __syncwarp(0xffffffff) (a lane that has exited, waits at a
//   barrier or at another collective is a fault) and then compares call sites
//   with lane 0 through a shuffle, so a call made by part of the warp while the
//   rest is at another wmma call is a fault too, naming both.
// - the pointer rules of load/store_matrix_sync: 256-bit (32-byte) aligned
//   pointers, ldm a multiple of 4 floats (16 bytes).
// Not modelled: how the hardware spreads a fragment's elements over the lanes.
// Here every lane's fragment holds the whole tile (row-major in x[],
// num_elements is the tile's size), so an elementwise loop over x[] still sees
// every element; kernels must not rely on which elements x[] holds, which is
// unspecified on a GPU too. store_matrix_sync has lane l write the elements
// e with e % 32 == l: each element is written once, by one lane, so the
// ThreadSanitizer build sees no duplicate writes. Nor is the tensor cores'
// internal order and rounding of the additions: compare with tolerances.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

#include "cudasim.h"

namespace nvcuda {
namespace wmma {

struct row_major;
struct col_major;
struct matrix_a;
struct matrix_b;
struct accumulator;
namespace precision {
struct tf32;
}
enum layout_t { mem_row_major, mem_col_major };

namespace emulated {
// The tile a fragment holds: matrix_a is M x K, matrix_b K x N, the accumulator M x N.
template <class Use, int M, int N, int K>
struct tile;
template <int M, int N, int K>
struct tile<matrix_a, M, N, K> {
  static constexpr int rows = M, cols = K;
};
template <int M, int N, int K>
struct tile<matrix_b, M, N, K> {
  static constexpr int rows = K, cols = N;
};
template <int M, int N, int K>
struct tile<accumulator, M, N, K> {
  static constexpr int rows = M, cols = N;
};
template <class T>
struct storage {
  using type = T;
};
template <>
struct storage<precision::tf32> {
  using type = float;  // a TF32 value is a float whose low 13 bits are 0
};

template <class Use, class T, class Layout>
constexpr bool supported() {
  return std::is_same<Use, accumulator>::value
             ? std::is_same<T, float>::value && std::is_void<Layout>::value
             : std::is_same<T, precision::tf32>::value &&
                   (std::is_same<Layout, row_major>::value || std::is_same<Layout, col_major>::value);
}
}  // namespace emulated

template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
  static_assert(M == 16 && N == 16 && K == 8, "cudasim models the wmma shape 16x16x8 (TF32) only");
  static_assert(emulated::supported<Use, T, Layout>(),
                "cudasim models TF32 fragments only: matrix_a / matrix_b of precision::tf32 with row_major or "
                "col_major, and a float accumulator");

 public:
  using element_type = T;
  using storage_element_type = typename emulated::storage<T>::type;
  static constexpr int rows = emulated::tile<Use, M, N, K>::rows, cols = emulated::tile<Use, M, N, K>::cols;
  enum { num_elements = rows * cols, num_storage_elements = rows * cols };
  storage_element_type x[num_elements];  // the whole tile, row-major: see the note at the top
};

// cvt.rna.tf32.f32: adding half a TF32 unit to the magnitude and dropping the low
// 13 bits rounds to nearest with ties away from zero (a carry into the exponent
// is the right result, up to infinity); infinities and NaNs are kept.
inline float __float_to_tf32(float in) {
  uint32_t b;
  std::memcpy(&b, &in, sizeof b);
  if ((b & 0x7f800000u) != 0x7f800000u) b = (b + 0x1000u) & 0xffffe000u;
  float out;
  std::memcpy(&out, &b, sizeof out);
  return out;
}

namespace emulated {
enum class Call : uint32_t { load_matrix_sync = 1, mma_sync = 2, store_matrix_sync = 3 };

inline const char* call_name(uint32_t call) {
  switch (Call(call)) {
    case Call::load_matrix_sync: return "wmma::load_matrix_sync";
    case Call::mma_sync: return "wmma::mma_sync";
    case Call::store_matrix_sync: return "wmma::store_matrix_sync";
  }
  return "wmma";
}

inline std::string site(const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  return std::string(base ? base + 1 : file) + ":" + std::to_string(line);
}

inline unsigned lane() { return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32; }

// Brings the whole warp to this call, or faults. The site's key: the call in
// bits 0-3, the line in bits 4-31, the file's address folded into bits 32-63
// (one call site, one string literal).
inline void converge(Call call, const char* file, int line) {
  __syncwarp(0xffffffffu);
  const uint64_t address = uint64_t(reinterpret_cast<uintptr_t>(file));
  const uint64_t mine = (((address ^ (address >> 32)) & 0xffffffffu) << 32) | (uint64_t(line & 0x0fffffff) << 4) |
                        uint64_t(call);
  const uint64_t first = __shfl_sync(0xffffffffu, mine, 0);
  if (first != mine)
    ::cudasim::detail::fail(std::string(call_name(uint32_t(call))) + " at " + site(file, line) + ": lane 0 of the " +
                            "warp is at " + call_name(uint32_t(first & 0xf)) + " (line " +
                            std::to_string((first >> 4) & 0x0fffffff) +
                            "); a wmma call is warp-collective: all 32 lanes must make it together");
}

inline void check_matrix(Call call, const void* p, unsigned ldm, const char* file, int line) {
  if (reinterpret_cast<uintptr_t>(p) % 32) {
    char address[32];
    std::snprintf(address, sizeof address, "%p", p);
    ::cudasim::detail::fail(std::string(call_name(uint32_t(call))) + " at " + site(file, line) + ": the pointer " +
                            address + " must be 256-bit (32-byte) aligned, it is " +
                            std::to_string(reinterpret_cast<uintptr_t>(p) % 32) + " bytes past a multiple of 32");
  }
  if (ldm % 4)
    ::cudasim::detail::fail(std::string(call_name(uint32_t(call))) + " at " + site(file, line) +
                            ": ldm must be a multiple of 4 floats (16 bytes), got " + std::to_string(ldm));
}

// Only the TF32 bits of an operand reach the tensor cores (NaN and infinity kept).
inline float tf32_bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  if ((b & 0x7f800000u) != 0x7f800000u) b &= 0xffffe000u;
  float out;
  std::memcpy(&out, &b, sizeof out);
  return out;
}

template <class F>
void load(F& f, const float* p, unsigned ldm, bool row_major_memory) {
  for (int r = 0; r < F::rows; ++r)
    for (int c = 0; c < F::cols; ++c)
      f.x[r * F::cols + c] = row_major_memory ? p[size_t(r) * ldm + c] : p[size_t(c) * ldm + r];
}
}  // namespace emulated

template <class Use, int M, int N, int K, class T, class Layout>
void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, const typename emulated::storage<T>::type& v) {
  for (int i = 0; i < f.num_elements; ++i) f.x[i] = v;  // per lane, not a collective (as in <mma.h>)
}

template <class Use, class Layout>
void load_matrix_sync(fragment<Use, 16, 16, 8, precision::tf32, Layout>& f, const float* p, unsigned ldm,
                      const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  emulated::converge(emulated::Call::load_matrix_sync, file, line);
  emulated::check_matrix(emulated::Call::load_matrix_sync, p, ldm, file, line);
  emulated::load(f, p, ldm, std::is_same<Layout, row_major>::value);
}

inline void load_matrix_sync(fragment<accumulator, 16, 16, 8, float>& f, const float* p, unsigned ldm,
                             layout_t layout, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  emulated::converge(emulated::Call::load_matrix_sync, file, line);
  emulated::check_matrix(emulated::Call::load_matrix_sync, p, ldm, file, line);
  emulated::load(f, p, ldm, layout == mem_row_major);
}

// d = a * b + c over the whole tile; d may be c.
template <class LayoutA, class LayoutB>
void mma_sync(fragment<accumulator, 16, 16, 8, float>& d,
              const fragment<matrix_a, 16, 16, 8, precision::tf32, LayoutA>& a,
              const fragment<matrix_b, 16, 16, 8, precision::tf32, LayoutB>& b,
              const fragment<accumulator, 16, 16, 8, float>& c, const char* file = __builtin_FILE(),
              int line = __builtin_LINE()) {
  emulated::converge(emulated::Call::mma_sync, file, line);
  float out[16 * 16];
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 16; ++n) {
      float sum = c.x[r * 16 + n];
      for (int k = 0; k < 8; ++k) sum += emulated::tf32_bits(a.x[r * 8 + k]) * emulated::tf32_bits(b.x[k * 16 + n]);
      out[r * 16 + n] = sum;
    }
  std::memcpy(d.x, out, sizeof out);
}

inline void store_matrix_sync(float* p, const fragment<accumulator, 16, 16, 8, float>& f, unsigned ldm,
                              layout_t layout, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  emulated::converge(emulated::Call::store_matrix_sync, file, line);
  emulated::check_matrix(emulated::Call::store_matrix_sync, p, ldm, file, line);
  for (int e = int(emulated::lane()); e < f.num_elements; e += 32) {  // each element by one lane
    const int r = e / 16, n = e % 16;
    p[layout == mem_row_major ? size_t(r) * ldm + n : size_t(n) * ldm + r] = f.x[e];
  }
}

}  // namespace wmma
}  // namespace nvcuda
