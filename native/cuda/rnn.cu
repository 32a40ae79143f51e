// Recurrent layers on the GPU (LSTM, GRU, tanh/relu RNN), structured as cuDNN's
// RNN and as cpu/rnn.cpp, whose formulas, flat weights and reserve layout they share.
// Per layer and direction: one GEMM for the input projections of every step
// (x W_ih^T), then per step one GEMM for the recurrent product (h_{t-1} W_hh^T)
// and one fused pointwise kernel: a thread per (batch entry, hidden unit) adds
// both biases to all gates of its unit, activates them and updates the state, so
// the gates make one trip through memory per step. The backward mirrors it: per
// step (in reverse) a pointwise kernel for the gate gradients, then
// dh_{t-1} += dgates W_hh; dx in one GEMM per direction over all steps; dW_ih and
// dW_hh as GEMMs over all steps, the bias gradients as column sums.
// Sequence lengths stay on the device: the kernels mask rows past a sequence's
// end and pick each row's h_{t-1} themselves (PrevState), so no host code reads
// them. Every output element is written by one thread in a fixed order:
// deterministic, with no atomics.
#include "rnn.h"

#include <algorithm>

#include "gemm.h"
#include "tiled_gemm.cuh"
#include "cpu/rnn_layout.h"

namespace minifw {
namespace MINIFW_CUDA_NS {
namespace {
using namespace rnn_layout;

// ---- the flat weights and the reserve (cpu/rnn.h's layout) ---------------------------

inline int64_t prev_time(int64_t d, int64_t t) { return d == 0 ? t - 1 : t + 1; }

// ---- device helpers ---------------------------------------------------------------------

template <typename T>
__device__ __forceinline__ T sigmoid(T v) {
  return T(1) / (T(1) + exp(-v));
}

// Whether sequence n takes a step at time t.
__device__ __forceinline__ bool active(const int64_t* lengths, int64_t n, int64_t t) {
  return !lengths || t < lengths[n];
}

// Row n of the hidden state that step t of direction d reads: h0 at the
// direction's first step, and where the reverse direction's sequence starts
// (t = lengths[n] - 1, whose step back is padding); else the layer output one
// step back in the direction's order.
template <typename T>
struct PrevState {
  const T* h0;   // this layer and direction's (N, H)
  const T* out;  // the layer output (T, N, D*H), offset to this direction's columns
  const int64_t* lengths;
  int64_t T_, N, H, DH, d;

  __device__ const T* row(int64_t t, int64_t n) const {
    const bool first = d == 0 ? t == 0 : t == T_ - 1 || (lengths && lengths[n] <= t + 1);
    return first ? h0 + n * H : out + ((d == 0 ? t - 1 : t + 1) * N + n) * DH;
  }
};

// Pointwise kernels: one thread per (n, j) of N x H, a grid-stride loop; j
// fastest, so a warp reads each gate block of a row in contiguous runs. Blocks
// no larger than the work (a step of a small batch is a few hundred elements).
struct PointwiseLaunch {
  dim3 grid, block;
};
inline PointwiseLaunch pointwise_launch(int64_t n) {
  const int64_t warps = (n + 31) / 32;
  const unsigned threads = unsigned(warps * 32 < int64_t(kElementwiseThreads) ? warps * 32 : kElementwiseThreads);
  return {elementwise_grid(n), dim3(threads)};
}

template <typename T>
__global__ void copy_kernel(const T* src, T* dst, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = src ? src[i] : T(0);
}

// dst = src, or zeros where src is null.
template <typename T>
void copy_or_zero(const T* src, T* dst, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  const PointwiseLaunch p = pointwise_launch(n);
  launch("rnn_copy", copy_kernel<T>, p.grid, p.block, 0, stream, src, dst, n);
}

// ---- forward --------------------------------------------------------------------------

// h_rows (N, H) = each row's h_{t-1}: the reverse direction under lengths, where
// the rows a step reads are not one strided matrix for the recurrent GEMM.
template <typename T>
__global__ void gather_prev_kernel(PrevState<T> prev, int64_t t, T* h_rows) {
  const int64_t total = prev.N * prev.H, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride)
    h_rows[i] = prev.row(t, i / prev.H)[i % prev.H];
}

template <typename T>
struct ForwardStep {
  RnnMode mode;
  int64_t N, H, t;
  T* gates;               // (N, G*H): x W_ih^T in, the activated gates out
  const T* rec;           // (N, G*H): h_{t-1} W_hh^T
  const T *b_ih, *b_hh;   // null without bias
  const T* h_prev;        // (N, ldh)
  int64_t ldh;
  const T* c_prev;        // LSTM
  T* c;                   // LSTM; may be c_prev (inference): each element is read before it is written
  T* h;                   // the layer output at t, this direction's columns (N, ld_out)
  int64_t ld_out;
  T* hn;                  // GRU's W_hn h + b_hn, kept for the backward when training; else null
  const int64_t* lengths;
};

// The gates of unit (n, j) and its state update, with cpu/rnn.cpp's formulas
// (pre-activations summed as (x W_ih^T + b_ih) + (h W_hh^T + b_hh)). Rows past
// their sequence's end get output 0, gates 0 and the cell state carried over.
template <typename T>
__global__ void forward_step_kernel(ForwardStep<T> p) {
  const int64_t H = p.H, total = p.N * H, stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t G = p.mode == RnnMode::lstm ? 4 : p.mode == RnnMode::gru ? 3 : 1, GH = G * H;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t n = i / H, j = i % H;
    T* g = p.gates + n * GH + j;  // gate q of this unit at g[q * H]
    const T* r = p.rec + n * GH + j;
    T* h = p.h + n * p.ld_out + j;
    if (!active(p.lengths, n, p.t)) {
      *h = T(0);
      for (int64_t q = 0; q < G; ++q) g[q * H] = T(0);
      if (p.c && p.c != p.c_prev) p.c[i] = p.c_prev[i];
      if (p.hn) p.hn[i] = T(0);
      continue;
    }
    // The input side's and the recurrent side's pre-activation of gate q, biases added.
    auto x_side = [&](int64_t q) { return g[q * H] + (p.b_ih ? p.b_ih[q * H + j] : T(0)); };
    auto h_side = [&](int64_t q) { return r[q * H] + (p.b_hh ? p.b_hh[q * H + j] : T(0)); };
    switch (p.mode) {
      case RnnMode::lstm: {
        const T ig = sigmoid(x_side(0) + h_side(0)), fg = sigmoid(x_side(1) + h_side(1));
        const T gg = tanh(x_side(2) + h_side(2)), og = sigmoid(x_side(3) + h_side(3));
        const T c = fg * p.c_prev[i] + ig * gg;
        g[0] = ig, g[H] = fg, g[2 * H] = gg, g[3 * H] = og;
        p.c[i] = c;
        *h = og * tanh(c);
        break;
      }
      case RnnMode::gru: {
        const T rg = sigmoid(x_side(0) + h_side(0)), zg = sigmoid(x_side(1) + h_side(1));
        const T hn = h_side(2);
        const T ng = tanh(x_side(2) + rg * hn);
        if (p.hn) p.hn[i] = hn;
        g[0] = rg, g[H] = zg, g[2 * H] = ng;
        *h = (T(1) - zg) * ng + zg * p.h_prev[n * p.ldh + j];
        break;
      }
      case RnnMode::rnn_tanh:
        *h = g[0] = tanh(x_side(0) + h_side(0));
        break;
      case RnnMode::rnn_relu: {
        const T v = x_side(0) + h_side(0);
        *h = g[0] = v > T(0) ? v : T(0);
        break;
      }
    }
  }
}

// h_n (and, when training, c_n) of one layer and direction: the forward
// direction's h at each sequence's own last step under lengths, else at the last
// step of the direction's order (t_last); c_n from the cell at t_last, where the
// padded steps carried it.
template <typename T>
__global__ void final_state_kernel(const T* out, int64_t N, int64_t H, int64_t DH, int64_t t_last,
                                   const int64_t* lengths, T* h_n, const T* cell_last, T* c_n) {
  const int64_t total = N * H, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t n = i / H, t = lengths ? lengths[n] - 1 : t_last;
    h_n[i] = out[(t * N + n) * DH + i % H];
    if (cell_last) c_n[i] = cell_last[i];
  }
}

// ---- backward -------------------------------------------------------------------------

template <typename T>
struct BackwardStep {
  RnnMode mode;
  int64_t N, H, t;
  const T* gates;        // (N, G*H), the activated gates at t
  T* dh;                 // (N, H): in, the gradient reaching h_t from step t+1; out, the part of
                         // dh_{t-1} that does not go through W_hh (GRU: z * dh, else 0)
  const T* dout;         // the gradient of the layer output at t, this direction's columns (N, ld_out)
  int64_t ld_out;
  PrevState<T> prev;     // GRU's h_{t-1}
  const T *c, *c_prev;   // LSTM's cell state at t and t-1
  T* dc;                 // LSTM: dc_t in, dc_{t-1} out
  const T* hn;           // GRU's W_hn h + b_hn at t
  T* dgates;             // (N, G*H), the gate pre-activations' gradients (input side)
  T* dgates_h;           // the recurrent side's: GRU's n block is times r; else dgates itself
  const int64_t* lengths;
};

// The gate gradients of unit (n, j), cpu/rnn.cpp's backward_step. Rows past their
// sequence's end take no step: zero gate gradients, dh and dc carried through
// (left as they are), dout ignored.
template <typename T>
__global__ void backward_step_kernel(BackwardStep<T> p) {
  const int64_t H = p.H, total = p.N * H, stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t G = p.mode == RnnMode::lstm ? 4 : p.mode == RnnMode::gru ? 3 : 1, GH = G * H;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t n = i / H, j = i % H;
    const T* g = p.gates + n * GH + j;
    T* dg = p.dgates + n * GH + j;
    if (!active(p.lengths, n, p.t)) {
      for (int64_t q = 0; q < G; ++q) dg[q * H] = T(0);
      if (p.mode == RnnMode::gru)
        for (int64_t q = 0; q < G; ++q) p.dgates_h[n * GH + j + q * H] = T(0);
      continue;
    }
    const T dh = p.dh[i] + p.dout[n * p.ld_out + j];
    switch (p.mode) {
      case RnnMode::lstm: {
        const T ig = g[0], fg = g[H], gg = g[2 * H], og = g[3 * H];
        const T tc = tanh(p.c[i]);
        const T dc = p.dc[i] + dh * og * (T(1) - tc * tc);
        dg[0] = dc * gg * ig * (T(1) - ig);
        dg[H] = dc * p.c_prev[i] * fg * (T(1) - fg);
        dg[2 * H] = dc * ig * (T(1) - gg * gg);
        dg[3 * H] = dh * tc * og * (T(1) - og);
        p.dc[i] = dc * fg;
        p.dh[i] = T(0);
        break;
      }
      case RnnMode::gru: {
        T* dgh = p.dgates_h + n * GH + j;
        const T rg = g[0], zg = g[H], ng = g[2 * H];
        const T dn = dh * (T(1) - zg) * (T(1) - ng * ng);
        const T dz = dh * (p.prev.row(p.t, n)[j] - ng) * zg * (T(1) - zg);
        const T dr = dn * p.hn[i] * rg * (T(1) - rg);
        dg[0] = dgh[0] = dr;
        dg[H] = dgh[H] = dz;
        dg[2 * H] = dn;
        dgh[2 * H] = dn * rg;
        p.dh[i] = dh * zg;
        break;
      }
      case RnnMode::rnn_tanh:
        dg[0] = dh * (T(1) - g[0] * g[0]);
        p.dh[i] = T(0);
        break;
      case RnnMode::rnn_relu:
        dg[0] = g[0] > T(0) ? dh : T(0);
        p.dh[i] = T(0);
        break;
    }
  }
}

// dW_hh (G*H x H) += sum over every step q (rows of the reserve, t = q / N, n = q % N)
// of dgates_h[q]^T h_{t-1}[n]: one GEMM over all steps whose B operand is each
// step's h_{t-1} row, picked by PrevState as the forward read it (h0 at the first
// step and where a reversed sequence starts).
template <typename T>
struct RecurrentWeightGrad {
  int64_t GH, H, steps, N;
  const T* dgates_h;  // (steps, G*H)
  PrevState<T> prev;
  T* dw_hh;  // (G*H, H)

  __device__ int64_t rows() const { return GH; }
  __device__ int64_t cols() const { return H; }
  __device__ int64_t depth() const { return steps; }
  __device__ bool a_depth_fastest() const { return false; }  // dgates_h^T: the gate index is contiguous
  __device__ bool b_cols_fastest() const { return true; }
  __device__ T load_a(int64_t, int64_t r, int64_t q) const { return dgates_h[q * GH + r]; }
  __device__ T load_b(int64_t, int64_t q, int64_t c) const { return prev.row(q / N, q % N)[c]; }
  __device__ void store(int64_t, int64_t r, int64_t c, T acc) const { dw_hh[r * H + c] += acc; }
};

// db_ih[j] += column j's sum of dgates over all steps, db_hh[j] likewise of dgates_h
// (blockIdx.y picks the pair). A block sums 32 columns: each warp reads 32
// neighbouring columns of a row, its 8 warps take every 8th row, then one
// thread per column adds the 8 partial sums in order. In double, as the CPU.
constexpr int kSumColumns = 32, kSumRowThreads = 8;

template <typename T>
__global__ void bias_grad_kernel(const T* dgates, const T* dgates_h, int64_t rows, int64_t GH, T* db_ih, T* db_hh) {
  __shared__ double partial[kSumRowThreads][kSumColumns];
  const T* dg = blockIdx.y == 0 ? dgates : dgates_h;
  T* db = blockIdx.y == 0 ? db_ih : db_hh;
  const int64_t j = int64_t(blockIdx.x) * kSumColumns + threadIdx.x;
  double sum = 0;
  if (j < GH)
    for (int64_t q = threadIdx.y; q < rows; q += kSumRowThreads) sum += dg[q * GH + j];
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && j < GH) {
    for (int y = 1; y < kSumRowThreads; ++y) sum += partial[y][threadIdx.x];
    db[j] += T(sum);
  }
}
}  // namespace

int64_t rnn_forward_workspace(const RnnShape& s, bool training) { return s.forward_workspace(training); }

// The gradient reaching the output of the layer below (T, N, D*H): written by a
// layer's dx GEMMs once its steps no longer read the gradient reaching its own
// output, so one buffer serves every layer.
int64_t rnn_backward_data_workspace(const RnnShape& s) { return s.layers > 1 ? s.T * s.N * s.dirs * s.hidden : 0; }

template <typename T>
void rnn_forward(const RnnShape& s, const T* x, const T* h0, const T* c0, const T* w, T* y, T* h_n, T* c_n,
                 T* reserve, T* workspace, const int64_t* lengths, void* stream_ptr) {
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const int64_t H = s.hidden, GH = s.gates() * H, DH = s.dirs * H, NH = s.N * H;
  const bool lstm = s.mode == RnnMode::lstm;
  if (s.T * s.N == 0) {  // no steps: the final states are the initial ones
    copy_or_zero(h0, h_n, s.state_elems(), stream);
    if (lstm) copy_or_zero(c0, c_n, s.cell_elems(), stream);
    return;
  }
  const bool training = reserve != nullptr;
  // The workspace, laid out as the CPU's (cpu/rnn.h).
  T* rec = workspace;
  T* h_rows = rec + s.N * GH;
  T* block_gates = training ? nullptr : h_rows + NH;
  T* between = training ? nullptr : block_gates + s.block_steps() * s.N * GH;
  // Training projects every step in one GEMM into the reserve; inference a block
  // of steps at a time into scratch. A GEMM sums each output element in the same
  // order whatever its number of rows, so both give the same bits.
  const int64_t block = training ? s.T : s.block_steps();
  const PointwiseLaunch pw = pointwise_launch(NH);
  const T* x_in = x;
  for (int64_t l = 0; l < s.layers; ++l) {
    const int64_t I = s.layer_input(l);
    // Inference alternates y and `between` so that the last layer's output lands in y.
    T* out = training ? layer_out(s, reserve, l) : (s.layers - 1 - l) % 2 == 0 ? y : between;
    for (int64_t d = 0; d < s.dirs; ++d) {
      const DirWeights<T> wt = dir_weights(s, const_cast<T*>(w), l, d);
      const DirReserve<T> r = training ? dir_reserve(s, reserve, l, d) : DirReserve<T>{};
      const int64_t state = (l * s.dirs + d) * NH;
      // The cell state: every step's in the reserve, or only the latest, in c_n.
      T* cell = !lstm ? nullptr : training ? r.c : c_n + state;
      if (cell && !training) copy_or_zero(c0 + state, cell, NH, stream);
      const PrevState<T> prev{h0 + state, out + d * H, lengths, s.T, s.N, H, DH, d};
      for (int64_t k0 = 0; k0 < s.T; k0 += block) {
        const int64_t k1 = std::min(s.T, k0 + block), t0 = d == 0 ? k0 : s.T - k1, rows = (k1 - k0) * s.N;
        T* gates = training ? r.gates + t0 * s.N * GH : block_gates;
        gemm<T>(false, true, rows, GH, I, T(1), x_in + t0 * s.N * I, I, wt.w_ih, I, T(0), gates, GH, stream);
        for (int64_t k = k0; k < k1; ++k) {
          const int64_t t = step_time(s, d, k), tp = prev_time(d, t);
          const T* h_prev = h0 + state;
          int64_t ldh = H;
          if (k > 0 && lengths && d == 1) {
            launch("rnn_gather_prev", gather_prev_kernel<T>, pw.grid, pw.block, 0, stream, prev, t, h_rows);
            h_prev = h_rows;
          } else if (k > 0) {
            h_prev = out + tp * s.N * DH + d * H;
            ldh = DH;
          }
          gemm<T>(false, true, s.N, GH, H, T(1), h_prev, ldh, wt.w_hh, H, T(0), rec, GH, stream);
          const ForwardStep<T> step{s.mode,
                                    s.N,
                                    H,
                                    t,
                                    gates + (t - t0) * s.N * GH,
                                    rec,
                                    wt.b_ih,
                                    wt.b_hh,
                                    h_prev,
                                    ldh,
                                    !cell ? nullptr : !training ? cell : k == 0 ? c0 + state : cell + tp * NH,
                                    !cell ? nullptr : training ? cell + t * NH : cell,
                                    out + t * s.N * DH + d * H,
                                    DH,
                                    r.hn ? r.hn + t * NH : nullptr,
                                    lengths};
          launch("rnn_forward_step", forward_step_kernel<T>, pw.grid, pw.block, 0, stream, step);
        }
      }
      const int64_t t_last = step_time(s, d, s.T - 1);
      launch("rnn_final_state", final_state_kernel<T>, pw.grid, pw.block, 0, stream,
             static_cast<const T*>(out + d * H), s.N, H, DH, t_last, d == 0 ? lengths : nullptr, h_n + state,
             static_cast<const T*>(cell && training ? cell + t_last * NH : nullptr), c_n + (lstm ? state : 0));
    }
    x_in = out;
  }
  if (training) copy_or_zero<T>(layer_out(s, reserve, s.layers - 1), y, s.y_elems(), stream);
}

template <typename T>
void rnn_backward_data(const RnnShape& s, const T* w, T* reserve, const T* h0, const T* c0, const T* dy,
                       const T* dh_n, const T* dc_n, T* dx, T* dh0, T* dc0, T* workspace, const int64_t* lengths,
                       void* stream_ptr) {
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const int64_t H = s.hidden, GH = s.gates() * H, DH = s.dirs * H, steps = s.T * s.N, NH = s.N * H;
  const bool lstm = s.mode == RnnMode::lstm;
  const PointwiseLaunch pw = pointwise_launch(NH);
  const T* dout = dy;  // the gradient reaching the current layer's output
  for (int64_t l = s.layers - 1; l >= 0 && steps > 0; --l) {
    const int64_t I = s.layer_input(l);
    T* dx_in = l == 0 ? dx : workspace;  // see rnn_backward_data_workspace
    T* out = layer_out(s, reserve, l);
    for (int64_t d = 0; d < s.dirs; ++d) {
      const DirWeights<T> wt = dir_weights(s, const_cast<T*>(w), l, d);
      const DirReserve<T> r = dir_reserve(s, reserve, l, d);
      const int64_t state = (l * s.dirs + d) * NH;
      // dh and dc are carried in place from dh_n, dc_n to dh0, dc0.
      T* dh = dh0 + state;
      T* dc = lstm ? dc0 + state : nullptr;
      copy_or_zero(dh_n ? dh_n + state : nullptr, dh, NH, stream);
      if (dc) copy_or_zero(dc_n ? dc_n + state : nullptr, dc, NH, stream);
      const PrevState<T> prev{h0 + state, out + d * H, lengths, s.T, s.N, H, DH, d};
      for (int64_t k = s.T - 1; k >= 0; --k) {
        const int64_t t = step_time(s, d, k), tp = prev_time(d, t), at = t * s.N * GH;
        const BackwardStep<T> step{s.mode,
                                   s.N,
                                   H,
                                   t,
                                   r.gates + at,
                                   dh,
                                   dout + t * s.N * DH + d * H,
                                   DH,
                                   prev,
                                   r.c ? r.c + t * NH : nullptr,
                                   !lstm ? nullptr : k == 0 ? c0 + state : r.c + tp * NH,
                                   dc,
                                   r.hn ? r.hn + t * NH : nullptr,
                                   r.dgates + at,
                                   r.dgates_h + at,
                                   lengths};
        launch("rnn_backward_step", backward_step_kernel<T>, pw.grid, pw.block, 0, stream, step);
        gemm<T>(false, false, s.N, H, GH, T(1), r.dgates_h + at, GH, wt.w_hh, H, T(1), dh, H, stream);
      }
    }
    // The input gradient of every step at once, both directions summed.
    for (int64_t d = 0; d < s.dirs; ++d) {
      const DirWeights<T> wt = dir_weights(s, const_cast<T*>(w), l, d);
      gemm<T>(false, false, steps, I, GH, T(1), dir_reserve(s, reserve, l, d).dgates, GH, wt.w_ih, I,
              d == 0 ? T(0) : T(1), dx_in, I, stream);
    }
    dout = dx_in;
  }
  if (steps == 0) {  // no steps: the state gradients pass straight through
    copy_or_zero(dh_n, dh0, s.state_elems(), stream);
    if (lstm) copy_or_zero(dc_n, dc0, s.cell_elems(), stream);
  }
}

template <typename T>
void rnn_backward_weights(const RnnShape& s, const T* x, const T* reserve, const T* h0, T* dw,
                          const int64_t* lengths, void* stream_ptr) {
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const int64_t H = s.hidden, GH = s.gates() * H, DH = s.dirs * H, steps = s.T * s.N, NH = s.N * H;
  if (steps == 0) return;
  T* res = const_cast<T*>(reserve);
  for (int64_t l = 0; l < s.layers; ++l) {
    const int64_t I = s.layer_input(l);
    const T* x_in = l == 0 ? x : layer_out(s, res, l - 1);
    const T* out = layer_out(s, res, l);
    for (int64_t d = 0; d < s.dirs; ++d) {
      const DirWeights<T> dwt = dir_weights(s, dw, l, d);
      const DirReserve<T> r = dir_reserve(s, res, l, d);
      gemm<T>(true, false, GH, I, steps, T(1), r.dgates, GH, x_in, I, T(1), dwt.w_ih, I, stream);
      const PrevState<T> prev{h0 + (l * s.dirs + d) * NH, out + d * H, lengths, s.T, s.N, H, DH, d};
      launch_tiled_gemm<T>("rnn_weight_grad_hh", RecurrentWeightGrad<T>{GH, H, steps, s.N, r.dgates_h, prev, dwt.w_hh},
                           GH, H, steps, 1, stream);
      if (s.bias) {
        const int64_t col_blocks = (GH + kSumColumns - 1) / kSumColumns;
        launch("rnn_bias_grad", bias_grad_kernel<T>, dim3(unsigned(col_blocks), 2), dim3(kSumColumns, kSumRowThreads),
               0, stream, static_cast<const T*>(r.dgates), static_cast<const T*>(r.dgates_h), steps, GH, dwt.b_ih,
               dwt.b_hh);
      }
    }
  }
}

#define MINIFW_INSTANTIATE_RNN(T)                                                                               \
  template void rnn_forward<T>(const RnnShape&, const T*, const T*, const T*, const T*, T*, T*, T*, T*, T*,    \
                               const int64_t*, void*);                                                          \
  template void rnn_backward_data<T>(const RnnShape&, const T*, T*, const T*, const T*, const T*, const T*,     \
                                     const T*, T*, T*, T*, T*, const int64_t*, void*);                          \
  template void rnn_backward_weights<T>(const RnnShape&, const T*, const T*, const T*, T*, const int64_t*, void*);
MINIFW_INSTANTIATE_RNN(float)
MINIFW_INSTANTIATE_RNN(double)
#undef MINIFW_INSTANTIATE_RNN
}  // namespace MINIFW_CUDA_NS
}  // namespace minifw
