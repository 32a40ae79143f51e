// Winograd F(4x4, 3x3)'s transforms (conv_winograd.cpp holds the algorithm), compiled
// once per ISA from conv_winograd_impl.h and chosen with select_isa_variant.
//
// The transform domain holds 36 matrices, one per point xi of the 6x6 tile, `stride_xi`
// elements apart; within one, a channel's row holds its tiles in order (image, tile
// row, tile column). The kernels run along such a row, a vector of tiles at a time, so
// every load and store of the transform domain is contiguous.
#pragma once
#include <cstdint>

#include "isa_dispatch.h"

namespace minifw {

// Tiles (or filters) per pass of a transform: input_planes and output_planes run
// through their images' tiles this many at a time, and filter_block takes at most this
// many filters.
constexpr int64_t kWinogradBlock = 64;

template <typename T>
struct WinogradKernels {
  // V[xi][t] = (B^T d B)[xi] for every 6x6 input tile d of `images` H x W planes, x's
  // first and the others plane_stride apart (padding ph, pw; th x tw tiles of 4 x 4
  // outputs each): v is the first plane's first tile in matrix 0, the others follow it.
  // Each plane is first copied into its place in `padded`, (4 th + 2) x (4 tw + 2)
  // values that are zeros everywhere else (the padding, and past the last tile's inputs).
  void (*input_planes)(const T* x, int64_t plane_stride, int64_t images, int64_t H, int64_t W, int64_t ph,
                       int64_t pw, int64_t th, int64_t tw, T* v, int64_t stride_xi, T* padded);
  // U[xi][f] = (G g G^T)[xi] for the n <= kWinogradBlock 3x3 filters at w (9 values
  // each): u is the first filter's place in matrix 0.
  void (*filter_block)(const T* w, int64_t n, T* u, int64_t stride_xi);
  // The `images` Ho x Wo output planes, y's first and the others plane_stride apart, from
  // their th x tw tiles A^T M A (clipped at the edges): m is the first plane's first
  // tile in matrix 0, the others follow it.
  void (*output_planes)(const T* m, int64_t stride_xi, int64_t images, int64_t th, int64_t tw, T* y,
                        int64_t plane_stride, int64_t Ho, int64_t Wo);
  // Backward-filter. dM[xi][t] = (A dy A^T)[xi] for every 4 x 4 tile dy of `images` Ho x Wo
  // planes of dY, laid out as output_planes reads M; `padded` as for input_planes, here
  // (4 th) x (4 tw) values.
  void (*grad_planes)(const T* dy, int64_t plane_stride, int64_t images, int64_t Ho, int64_t Wo, int64_t th,
                      int64_t tw, T* m, int64_t stride_xi, T* padded);
  // The n <= kWinogradBlock 3x3 filter gradients at dw (9 values each), G^T dU G, from u,
  // the first one's place in matrix 0 of dU.
  void (*filter_grad_block)(const T* u, int64_t stride_xi, int64_t n, T* dw);
};

MINIFW_DECLARE_ISA_VARIANTS(WinogradKernels<float>);
MINIFW_DECLARE_ISA_VARIANTS(WinogradKernels<double>);

}  // namespace minifw
