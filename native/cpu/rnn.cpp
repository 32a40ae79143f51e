// Recurrent layers: the GEMMs through minifw's gemm, the gates in one fused
// pointwise pass per step, its sigmoids and tanhs by vecmath's ISA variants
// over each row's gate blocks.
#include "rnn.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gemm.h"
#include "rnn_layout.h"
#include "split_work.h"
#include "vecmath.h"

namespace minifw {

RnnMode rnn_mode_from_name(const char* name) {
  const std::string m = name;
  if (m == "lstm") return RnnMode::lstm;
  if (m == "gru") return RnnMode::gru;
  if (m == "rnn_tanh") return RnnMode::rnn_tanh;
  if (m == "rnn_relu") return RnnMode::rnn_relu;
  throw std::invalid_argument("rnn: mode must be 'lstm', 'gru', 'rnn_tanh' or 'rnn_relu', got '" + m + "'");
}

int64_t RnnShape::weight_offset(int64_t l, int64_t d) const {
  int64_t off = 0;
  for (int64_t k = 0; k < l; ++k) off += dirs * direction_weights(k);
  return off + d * direction_weights(l);
}

int64_t RnnShape::direction_reserve() const {
  const int64_t steps = T * N, GH = gates() * hidden;
  int64_t n = 2 * steps * GH;                                       // gates, dgates
  if (mode == RnnMode::gru) n += steps * GH + steps * hidden;       // dgates_h, hn
  if (mode == RnnMode::lstm) n += steps * hidden;                   // c
  return n;
}

// Rows (steps * N) of one input-projection GEMM: about the GEMM's own block of
// A rows (mc, 560 for AVX-512 floats), so that a block adds no packing of W_ih
// that one GEMM over all T * N rows would not also do, while the block's gates,
// all that inference keeps of them, stay a few MB.
constexpr int64_t kProjectionRows = 512;

int64_t RnnShape::block_steps() const {
  if (N == 0) return T;
  return std::min<int64_t>(T, std::max<int64_t>(1, (kProjectionRows + N - 1) / N));
}

int64_t RnnShape::forward_workspace(bool training) const {
  if (T * N == 0) return 0;  // no steps: the states are copied, nothing computed
  const int64_t GH = gates() * hidden;
  int64_t n = N * GH + N * hidden;  // rec, h_rows
  if (!training) n += block_steps() * N * GH + (layers > 1 ? T * N * dirs * hidden : 0);  // gates, between
  return n;
}

namespace {
using namespace rnn_layout;

// A gate's exp or tanh costs about as much as this many elements of a
// memory-bound loop (the unit of split_work.h's grain).
constexpr int64_t kGateCost = 8;

inline int64_t prev_time(int64_t d, int64_t t) { return d == 0 ? t - 1 : t + 1; }

// rows x cols of `src` (leading dimension lds) to a dense dst.
template <typename T>
void copy_rows(T* dst, const T* src, int64_t rows, int64_t cols, int64_t lds) {
  for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * cols, src + r * lds, sizeof(T) * cols);
}

// The hidden state step k of direction d reads (ld in ldh): h0 (this layer and
// direction's rows) at the first step, else the layer output one step back.
// With lengths, the reverse direction's sequence n starts from h0 at
// t = lengths[n] - 1, where the output one step back is padding: such steps
// gather the rows each sequence reads into buf (N, H).
template <typename T>
const T* h_prev_rows(const RnnShape& s, const int64_t* lengths, int64_t d, int64_t k, const T* h0, const T* out,
                     T* buf, int64_t& ldh) {
  const int64_t H = s.hidden, DH = s.dirs * H, t = step_time(s, d, k);
  ldh = H;
  if (k == 0) return h0;
  const T* prev = out + prev_time(d, t) * s.N * DH + d * H;
  bool starts_here = false;
  for (int64_t n = 0; lengths && d == 1 && n < s.N && !starts_here; ++n) starts_here = lengths[n] <= t + 1;
  if (!starts_here) {
    ldh = DH;
    return prev;
  }
  for (int64_t n = 0; n < s.N; ++n)
    std::memcpy(buf + n * H, lengths[n] <= t + 1 ? h0 + n * H : prev + n * DH, sizeof(T) * H);
  return buf;
}

// Whether sequence n takes a step at time t.
inline bool active(const int64_t* lengths, int64_t n, int64_t t) { return !lengths || t < lengths[n]; }

// One step's gates and state update for rows [n0, n1). gates: x W_ih^T, in the
// step's gates rows, replaced by the activated gates; rec: h W_hh^T. The biases
// b_ih and b_hh (null without bias) are added here, in the pass that reads both
// products anyway: filling the GEMMs' outputs with them first wrote every gate
// row once more (for the char-LSTM, 67 MB per forward).
// Rows past their sequence's end (time t) get output 0, gates 0 and the cell
// state carried over, so that the next step's c_prev is the kept state.
// c may be c_prev (inference updates the cell state in place: each element is
// read before it is written); hn may be null (inference keeps no W_hn h + b_hn).
template <typename T>
void forward_step(const RnnShape& s, T* gates, const T* rec, const T* b_ih, const T* b_hh, const T* h_prev,
                  int64_t ldh, const T* c_prev, T* h, int64_t ld_out, T* c, T* hn, const int64_t* lengths, int64_t t,
                  int64_t n0, int64_t n1) {
  const int64_t H = s.hidden, GH = s.gates() * H;
  const VecMath<T>& vm = vecmath<T>();
  // g[j] += r[j] + b_ih[j] + b_hh[j] for the first `count` gate values
  auto add_products = [&](T* g, const T* r, int64_t count) {
    if (b_ih) {
      for (int64_t j = 0; j < count; ++j) g[j] += r[j] + (b_ih[j] + b_hh[j]);
    } else {
      for (int64_t j = 0; j < count; ++j) g[j] += r[j];
    }
  };
  for (int64_t n = n0; n < n1; ++n) {
    T* g = gates + n * GH;
    const T* r = rec + n * GH;
    const T* hp = h_prev + n * ldh;
    T* ho = h + n * ld_out;
    if (!active(lengths, n, t)) {
      std::fill(ho, ho + H, T(0));
      std::fill(g, g + GH, T(0));
      if (c && c != c_prev) std::memcpy(c + n * H, c_prev + n * H, sizeof(T) * H);
      if (hn) std::fill(hn + n * H, hn + (n + 1) * H, T(0));
      continue;
    }
    switch (s.mode) {
      case RnnMode::lstm: {
        add_products(g, r, GH);
        vm.sigmoid(g, g, 2 * H);  // i, f
        vm.tanh(g + 2 * H, g + 2 * H, H);  // g
        vm.sigmoid(g + 3 * H, g + 3 * H, H);  // o
        T* cn = c + n * H;
        for (int64_t j = 0; j < H; ++j) cn[j] = g[H + j] * c_prev[n * H + j] + g[j] * g[2 * H + j];
        vm.tanh(cn, ho, H);
        for (int64_t j = 0; j < H; ++j) ho[j] *= g[3 * H + j];
        break;
      }
      case RnnMode::gru: {
        add_products(g, r, 2 * H);
        vm.sigmoid(g, g, 2 * H);  // r, z
        // n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn)), the bracket kept in hn
        const T* bn_i = b_ih ? b_ih + 2 * H : nullptr;
        const T* bn_h = b_hh ? b_hh + 2 * H : nullptr;
        for (int64_t j = 0; j < H; ++j) {
          const T hidden_n = bn_h ? r[2 * H + j] + bn_h[j] : r[2 * H + j];
          if (hn) hn[n * H + j] = hidden_n;
          g[2 * H + j] += (bn_i ? bn_i[j] : T(0)) + g[j] * hidden_n;
        }
        vm.tanh(g + 2 * H, g + 2 * H, H);  // n
        for (int64_t j = 0; j < H; ++j) ho[j] = (T(1) - g[H + j]) * g[2 * H + j] + g[H + j] * hp[j];
        break;
      }
      case RnnMode::rnn_tanh:
        add_products(g, r, H);
        vm.tanh(g, g, H);
        std::memcpy(ho, g, sizeof(T) * H);
        break;
      case RnnMode::rnn_relu:
        add_products(g, r, H);
        for (int64_t j = 0; j < H; ++j) ho[j] = g[j] = g[j] > T(0) ? g[j] : T(0);
        break;
    }
  }
}

// One step's gate backward for rows [n0, n1). dh: the gradient reaching h from the
// later step, dout: from the layer output (ld ld_out). Writes the
// pre-activation gradients (dgates for the input side, dgates_h for the
// recurrent side: GRU's n block differs), updates dc in place (to dc_prev) and
// sets dh_prev to the part of dh_prev that does not go through W_hh (GRU: z * dh,
// else 0). Rows past their sequence's end (time t) take no step: zero gate
// gradients, dh and dc carried through unchanged, dout ignored.
template <typename T>
void backward_step(const RnnShape& s, const T* gates, const T* dh, const T* dout, int64_t ld_out, const T* h_prev,
                   int64_t ldh, const T* c, const T* c_prev, const T* hn, T* dgates, T* dgates_h, T* dc,
                   T* dh_prev, const int64_t* lengths, int64_t t, int64_t n0, int64_t n1) {
  const int64_t H = s.hidden, GH = s.gates() * H;
  const VecMath<T>& vm = vecmath<T>();
  for (int64_t n = n0; n < n1; ++n) {
    const T* g = gates + n * GH;
    T* dg = dgates + n * GH;
    const T* dhn = dh + n * H;
    const T* dyn = dout + n * ld_out;
    if (!active(lengths, n, t)) {
      std::fill(dg, dg + GH, T(0));
      if (s.mode == RnnMode::gru) std::fill(dgates_h + n * GH, dgates_h + (n + 1) * GH, T(0));
      std::memcpy(dh_prev + n * H, dhn, sizeof(T) * H);
      continue;
    }
    if (s.mode != RnnMode::gru) std::fill(dh_prev + n * H, dh_prev + (n + 1) * H, T(0));
    switch (s.mode) {
      case RnnMode::lstm:
        vm.tanh(c + n * H, dg + 3 * H, H);  // tanh(c), read below before its slot is written
        for (int64_t j = 0; j < H; ++j) {
          const T ig = g[j], fg = g[H + j], gg = g[2 * H + j], og = g[3 * H + j];
          const T tc = dg[3 * H + j];
          const T dhj = dhn[j] + dyn[j];
          const T dct = dc[n * H + j] + dhj * og * (T(1) - tc * tc);
          dg[j] = dct * gg * ig * (T(1) - ig);
          dg[H + j] = dct * c_prev[n * H + j] * fg * (T(1) - fg);
          dg[2 * H + j] = dct * ig * (T(1) - gg * gg);
          dg[3 * H + j] = dhj * tc * og * (T(1) - og);
          dc[n * H + j] = dct * fg;
        }
        break;
      case RnnMode::gru: {
        T* dgh = dgates_h + n * GH;
        const T* hp = h_prev + n * ldh;
        for (int64_t j = 0; j < H; ++j) {
          const T rg = g[j], zg = g[H + j], ng = g[2 * H + j];
          const T dhj = dhn[j] + dyn[j];
          const T dn = dhj * (T(1) - zg) * (T(1) - ng * ng);
          const T dz = dhj * (hp[j] - ng) * zg * (T(1) - zg);
          const T dr = dn * hn[n * H + j] * rg * (T(1) - rg);
          dg[j] = dgh[j] = dr;
          dg[H + j] = dgh[H + j] = dz;
          dg[2 * H + j] = dn;
          dgh[2 * H + j] = dn * rg;
          dh_prev[n * H + j] = dhj * zg;
        }
        break;
      }
      case RnnMode::rnn_tanh:
        for (int64_t j = 0; j < H; ++j) dg[j] = (dhn[j] + dyn[j]) * (T(1) - g[j] * g[j]);
        break;
      case RnnMode::rnn_relu:
        for (int64_t j = 0; j < H; ++j) dg[j] = g[j] > T(0) ? dhn[j] + dyn[j] : T(0);
        break;
    }
  }
}
}  // namespace

template <typename T>
void rnn_forward(const RnnShape& s, const T* x, const T* h0, const T* c0, const T* w, T* y, T* h_n, T* c_n,
                 T* reserve, T* workspace, const int64_t* lengths, int nthreads) {
  const int64_t H = s.hidden, GH = s.gates() * H, DH = s.dirs * H, steps = s.T * s.N, NH = s.N * H;
  if (steps == 0) {  // no steps: the final states are the initial ones
    std::memcpy(h_n, h0, sizeof(T) * s.state_elems());
    if (s.mode == RnnMode::lstm) std::memcpy(c_n, c0, sizeof(T) * s.cell_elems());
    return;
  }
  const bool training = reserve != nullptr;
  const int64_t block = s.block_steps();
  T* rec = workspace;
  T* h_rows = rec + s.N * GH;
  T* block_gates = training ? nullptr : h_rows + NH;
  T* between = training ? nullptr : block_gates + block * s.N * GH;
  PackedB<T> w_hh_t;  // W_hh^T in the GEMM's panels, packed once per layer and direction
  const int64_t row_grain = grain_for(GH * kGateCost);
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
      T* cell = s.mode != RnnMode::lstm ? nullptr : training ? r.c : c_n + state;
      if (cell && !training) std::memcpy(cell, c0 + state, sizeof(T) * NH);
      pack_b(w_hh_t, true, s.N, GH, H, wt.w_hh, H);
      for (int64_t k0 = 0; k0 < s.T; k0 += block) {
        // The input projections of a block of steps, times [t0, t0 + steps in block), in one GEMM.
        const int64_t k1 = std::min(s.T, k0 + block), t0 = d == 0 ? k0 : s.T - k1, rows = (k1 - k0) * s.N;
        T* gates = training ? r.gates + t0 * s.N * GH : block_gates;
        gemm<T>(false, true, rows, GH, I, T(1), x_in + t0 * s.N * I, I, wt.w_ih, I, T(0), gates, GH, nthreads);
        for (int64_t k = k0; k < k1; ++k) {
          const int64_t t = step_time(s, d, k), tp = prev_time(d, t);
          int64_t ldh;
          const T* h_prev = h_prev_rows(s, lengths, d, k, h0 + state, out, h_rows, ldh);
          const T* c_prev = !cell ? nullptr : !training ? cell : k == 0 ? c0 + state : cell + tp * NH;
          T* c = !cell ? nullptr : training ? cell + t * NH : cell;
          T* hn = r.hn ? r.hn + t * NH : nullptr;
          gemm<T>(false, s.N, GH, H, T(1), h_prev, ldh, w_hh_t, T(0), rec, GH, nthreads);
          for_each_range(s.N, nthreads, row_grain, [&](int64_t n0, int64_t n1) {
            forward_step(s, gates + (t - t0) * s.N * GH, rec, s.bias ? wt.b_ih : nullptr, s.bias ? wt.b_hh : nullptr,
                         h_prev, ldh, c_prev, out + t * s.N * DH + d * H, DH, c, hn, lengths, t, n0, n1);
          });
        }
      }
      // The last step's state; padded steps carried the cell state to t_last,
      // while h is read at each sequence's own last step.
      const int64_t t_last = step_time(s, d, s.T - 1);
      if (lengths && d == 0) {
        for (int64_t n = 0; n < s.N; ++n)
          std::memcpy(h_n + state + n * H, out + ((lengths[n] - 1) * s.N + n) * DH, sizeof(T) * H);
      } else {
        copy_rows(h_n + state, out + t_last * s.N * DH + d * H, s.N, H, DH);
      }
      if (cell && training) std::memcpy(c_n + state, cell + t_last * NH, sizeof(T) * NH);
    }
    x_in = out;
  }
  if (training) std::memcpy(y, layer_out(s, reserve, s.layers - 1), sizeof(T) * s.y_elems());
}

template <typename T>
void rnn_backward_data(const RnnShape& s, const T* w, T* reserve, const T* h0, const T* c0, const T* dy,
                       const T* dh_n, const T* dc_n, T* dx, T* dh0, T* dc0, const int64_t* lengths,
                       int nthreads) {
  const int64_t H = s.hidden, GH = s.gates() * H, DH = s.dirs * H, steps = s.T * s.N, NH = s.N * H;
  if (steps == 0) {
    if (dh_n) std::memcpy(dh0, dh_n, sizeof(T) * s.state_elems());
    else std::memset(dh0, 0, sizeof(T) * s.state_elems());
    if (s.mode == RnnMode::lstm) {
      if (dc_n) std::memcpy(dc0, dc_n, sizeof(T) * s.cell_elems());
      else std::memset(dc0, 0, sizeof(T) * s.cell_elems());
    }
    return;
  }
  // The gradient reaching each layer's output, ping-ponged between layers.
  std::vector<T> dlayer[2];
  if (s.layers > 1) dlayer[0].resize(steps * DH), dlayer[1].resize(steps * DH);
  std::vector<T> dh_a(NH), dh_b(NH), h_buf(lengths ? NH : 0);
  PackedB<T> w_hh;  // in the GEMM's panels, packed once per layer and direction
  const int64_t row_grain = grain_for(GH * kGateCost);
  const T* dout = dy;
  for (int64_t l = s.layers - 1; l >= 0; --l) {
    const int64_t I = s.layer_input(l);
    T* dx_in = l == 0 ? dx : dlayer[l % 2].data();
    T* out = layer_out(s, reserve, l);
    for (int64_t d = 0; d < s.dirs; ++d) {
      const DirWeights<T> wt = dir_weights(s, const_cast<T*>(w), l, d);
      const DirReserve<T> r = dir_reserve(s, reserve, l, d);
      const int64_t state = (l * s.dirs + d) * NH;
      T* dh = dh_a.data();
      T* dh_next = dh_b.data();
      if (dh_n) std::memcpy(dh, dh_n + state, sizeof(T) * NH);
      else std::memset(dh, 0, sizeof(T) * NH);
      T* dc = s.mode == RnnMode::lstm ? dc0 + state : nullptr;  // carried in place, ends as dc0
      if (dc) {
        if (dc_n) std::memcpy(dc, dc_n + state, sizeof(T) * NH);
        else std::memset(dc, 0, sizeof(T) * NH);
      }
      pack_b(w_hh, false, s.N, H, GH, wt.w_hh, H);
      for (int64_t k = s.T - 1; k >= 0; --k) {
        const int64_t t = step_time(s, d, k), tp = prev_time(d, t);
        int64_t ldh;
        const T* h_prev = h_prev_rows(s, lengths, d, k, h0 + state, out, h_buf.data(), ldh);
        const T* c_prev = s.mode != RnnMode::lstm ? nullptr : k == 0 ? c0 + state : r.c + tp * NH;
        const int64_t at = t * s.N * GH;
        for_each_range(s.N, nthreads, row_grain, [&](int64_t n0, int64_t n1) {
          backward_step(s, r.gates + at, dh, dout + t * s.N * DH + d * H, DH, h_prev, ldh,
                        r.c ? r.c + t * NH : nullptr, c_prev, r.hn ? r.hn + t * NH : nullptr, r.dgates + at,
                        r.dgates_h + at, dc, dh_next, lengths, t, n0, n1);
        });
        gemm<T>(false, s.N, H, GH, T(1), r.dgates_h + at, GH, w_hh, T(1), dh_next, H, nthreads);
        std::swap(dh, dh_next);
      }
      std::memcpy(dh0 + state, dh, sizeof(T) * NH);
    }
    // The input gradient of every step at once, both directions summed.
    for (int64_t d = 0; d < s.dirs; ++d) {
      const DirWeights<T> wt = dir_weights(s, const_cast<T*>(w), l, d);
      gemm<T>(false, false, steps, I, GH, T(1), dir_reserve(s, reserve, l, d).dgates, GH, wt.w_ih, I,
              d == 0 ? T(0) : T(1), dx_in, I, nthreads);
    }
    dout = dx_in;
  }
}

template <typename T>
void rnn_backward_weights(const RnnShape& s, const T* x, const T* reserve, const T* h0, T* dw, const int64_t* lengths,
                          int nthreads) {
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
      gemm<T>(true, false, GH, I, steps, T(1), r.dgates, GH, x_in, I, T(1), dwt.w_ih, I, nthreads);
      // dW_hh: each step's recurrent gradient times the hidden state it read,
      // the first step's from h0, the others' the layer output one step back.
      const int64_t t0 = step_time(s, d, 0);
      gemm<T>(true, false, GH, H, s.N, T(1), r.dgates_h + t0 * s.N * GH, GH, h0 + (l * s.dirs + d) * NH, H, T(1),
              dwt.w_hh, H, nthreads);
      if (s.T > 1) {
        const T* dg = r.dgates_h + (d == 0 ? s.N * GH : 0);
        const T* hp = out + (d == 0 ? 0 : s.N * DH) + d * H;
        gemm<T>(true, false, GH, H, (s.T - 1) * s.N, T(1), dg, GH, hp, DH, T(1), dwt.w_hh, H, nthreads);
      }
      // The reverse direction's shorter sequences start from h0 at t = lengths[n] - 1,
      // where the GEMM above read padding (zeros): add those rows' h0 terms.
      if (lengths && d == 1) {
        std::vector<T> dg_rows, h_rows;
        for (int64_t n = 0; n < s.N; ++n) {
          if (lengths[n] == s.T) continue;
          const T* dg = r.dgates_h + ((lengths[n] - 1) * s.N + n) * GH;
          const T* h = h0 + (l * s.dirs + d) * NH + n * H;
          dg_rows.insert(dg_rows.end(), dg, dg + GH);
          h_rows.insert(h_rows.end(), h, h + H);
        }
        const int64_t rows = static_cast<int64_t>(h_rows.size()) / H;
        if (rows > 0)
          gemm<T>(true, false, GH, H, rows, T(1), dg_rows.data(), GH, h_rows.data(), H, T(1), dwt.w_hh, H, nthreads);
      }
      if (s.bias) {  // column sums, accumulated in double; the threads share the columns,
                     // so each column is summed in the same order at any thread count.
                     // Outside GRU both biases have the same gradient: summed once.
        const bool shared = r.dgates_h == r.dgates;
        std::vector<double> si(GH, 0.0), sh(shared ? 0 : GH, 0.0);
        for_each_range(GH, nthreads, grain_for((shared ? 1 : 2) * steps), [&](int64_t j0, int64_t j1) {
          for (int64_t q = 0; q < steps; ++q) {
            const T* gi = r.dgates + q * GH;
            for (int64_t j = j0; j < j1; ++j) si[j] += gi[j];
            if (shared) continue;
            const T* gh = r.dgates_h + q * GH;
            for (int64_t j = j0; j < j1; ++j) sh[j] += gh[j];
          }
        });
        for (int64_t j = 0; j < GH; ++j) {
          dwt.b_ih[j] += static_cast<T>(si[j]);
          dwt.b_hh[j] += static_cast<T>(shared ? si[j] : sh[j]);
        }
      }
    }
  }
}

#define MINIFW_RNN_INSTANTIATE(T)                                                                                \
  template void rnn_forward<T>(const RnnShape&, const T*, const T*, const T*, const T*, T*, T*, T*, T*, T*,    \
                               const int64_t*, int);                                                          \
  template void rnn_backward_data<T>(const RnnShape&, const T*, T*, const T*, const T*, const T*, const T*,     \
                                     const T*, T*, T*, T*, const int64_t*, int);                                 \
  template void rnn_backward_weights<T>(const RnnShape&, const T*, const T*, const T*, T*, const int64_t*, int);
MINIFW_RNN_INSTANTIATE(float)
MINIFW_RNN_INSTANTIATE(double)
#undef MINIFW_RNN_INSTANTIATE
}  // namespace minifw
