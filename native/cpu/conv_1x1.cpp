// 1x1, stride 1, unpadded convolution: the input already is the GEMM operand
// (channels x pixels per image), so every direction is one GEMM per group with
// no lowering at all.
#include "conv.h"

namespace minifw {

template <typename T>
ConvWorkspace gemm1x1_workspace(ConvDir dir, const ConvShape& s, int nthreads) {
  const int64_t NP = s.N * s.P();
  int64_t per_thread = 0;
  if (dir == ConvDir::forward) per_thread = gemm_pack_bytes(lean_gemm_kernel<T>(s.Kg()), s.Kg(), NP, s.Cg());
  if (dir == ConvDir::backward_data) per_thread = gemm_pack_bytes(lean_gemm_kernel<T>(s.Cg()), s.Cg(), NP, s.Kg());
  if (dir == ConvDir::backward_filter) per_thread = gemm_pack_bytes(lean_gemm_kernel<T>(s.Kg()), s.Kg(), s.Cg(), NP);
  return {0, per_thread * gemm_threads_in_flight(s.groups, nthreads)};
}

template <typename T>
void gemm1x1_forward(const ConvShape& s, const T* x, const T* w, T* y, int nthreads) {
  const int64_t P = s.P(), Kg = s.Kg(), Cg = s.Cg();
  const GemmKernel<T> kern = lean_gemm_kernel<T>(Kg);
  for_each_group(s.groups, nthreads, [&](int64_t g, int threads) {
    StridedMatrix<T> a{w + g * Kg * Cg, Cg, false};
    ChannelMatrix<T> b{x, P, s.C * P, g * Cg};
    gemm_packed<T>(Kg, s.N * P, Cg, T(1), strided_source(&a), channel_cols_source(&b), T(0),
                   nchw_output(y, s.K, P, g * Kg), threads, &kern);
  });
}

template <typename T>
void gemm1x1_backward_data(const ConvShape& s, const T* dy, const T* w, T* dx, int nthreads) {
  const int64_t P = s.P(), Kg = s.Kg(), Cg = s.Cg();
  const GemmKernel<T> kern = lean_gemm_kernel<T>(Cg);
  for_each_group(s.groups, nthreads, [&](int64_t g, int threads) {
    StridedMatrix<T> a{w + g * Kg * Cg, Cg, true};  // W_g^T
    ChannelMatrix<T> b{dy, P, s.K * P, g * Kg};
    gemm_packed<T>(Cg, s.N * P, Kg, T(1), strided_source(&a), channel_cols_source(&b), T(0),
                   nchw_output(dx, s.C, P, g * Cg), threads, &kern);
  });
}

template <typename T>
void gemm1x1_backward_filter(const ConvShape& s, const T* x, const T* dy, T* dw, int nthreads) {
  const int64_t P = s.P(), Kg = s.Kg(), Cg = s.Cg();
  const GemmKernel<T> kern = lean_gemm_kernel<T>(Kg);
  for_each_group(s.groups, nthreads, [&](int64_t g, int threads) {
    // dW_g = dY_g X_g^T: both operands are channel-major views, reduced over (image, pixel).
    ChannelMatrix<T> a{dy, P, s.K * P, g * Kg};
    ChannelMatrix<T> b{x, P, s.C * P, g * Cg};
    gemm_packed<T>(Kg, Cg, s.N * P, T(1), channel_rows_source(&a), channel_rows_source(&b), T(0),
                   GemmOutput<T>{dw + g * Kg * Cg, Cg}, threads, &kern);
  });
}

#define MINIFW_INSTANTIATE_1X1(T)                                                            \
  template ConvWorkspace gemm1x1_workspace<T>(ConvDir, const ConvShape&, int);              \
  template void gemm1x1_forward<T>(const ConvShape&, const T*, const T*, T*, int);          \
  template void gemm1x1_backward_data<T>(const ConvShape&, const T*, const T*, T*, int);    \
  template void gemm1x1_backward_filter<T>(const ConvShape&, const T*, const T*, T*, int);
MINIFW_INSTANTIATE_1X1(float)
MINIFW_INSTANTIATE_1X1(double)
}  // namespace minifw
