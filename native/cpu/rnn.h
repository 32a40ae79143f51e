// Recurrent layers fused over the whole sequence (cuDNN's RNN primitive),
// with PyTorch's formulas and weight layout: LSTM (gates i, f, g, o), GRU
// (r, z, n), and the plain RNN with tanh or relu; any number of layers,
// unidirectional or bidirectional, with or without biases.
//
// Per layer and direction the forward runs one GEMM for the input projections
// of all T steps (X * W_ih^T + b_ih), then per step one GEMM for the recurrent
// part (h * W_hh^T + b_hh) and one fused pointwise pass for the gates and the
// state update. The backward mirrors it: per step (in reverse) the pointwise
// gate backward and dh_prev = dgates * W_hh; after the loop dX = dgates * W_ih
// in one GEMM. The weight gradients are GEMMs over all steps at once, from the
// gate gradients the data backward leaves in the reserve.
// The per-step GEMMs share W_hh across all T steps: it is packed into the
// GEMM's micro-panels once per layer and direction (PackedB, gemm.h) rather
// than at every step.
//
// Flat weights, for layer l, direction d (0 forward, 1 reverse), in order:
//   W_ih (G*H, I_l), W_hh (G*H, H), [b_ih (G*H), b_hh (G*H)]
// with I_0 = input_size, I_l = D*H for l > 0 (the previous layer's output,
// forward direction first).
// Reserve, for layer l: out_l (T, N, D*H), the layer's output; then for each
// direction d:
//   gates (T, N, G*H)   activated gates (RNN: the new h)
//   dgates (T, N, G*H)  gradients of the gate pre-activations (backward_data)
//   GRU:  dgates_h (T, N, G*H)  the same for the recurrent side (differs from
//                               dgates in the n block: times r)
//         hn (T, N, H)          W_hn h + b_hn
//   LSTM: c (T, N, H)           the cell state after each step
// The reverse direction runs t = T-1 .. 0 and writes its half of out_l at t.
//
// Inference (no reserve) keeps none of that: the input projections are
// computed a block of steps at a time (training does the same, into the
// reserve, so that both give the same bits), a layer's output lives only
// until the next layer has read it, LSTM's cell state is updated in place in
// c_n, and GRU's W_hn h + b_hn is read where it was computed. Its scratch,
// the caller's workspace (forward_workspace elements):
//   rec (N, G*H)              one step's h W_hh^T + b_hh     (also when training)
//   h_rows (N, H)             the reverse direction's h_prev rows under lengths (also when training)
//   gates (block_steps, N, G*H)   one block of steps' gates
//   between (T, N, D*H)       with more than one layer: the output of every other
//                             layer, y that of the rest (the last layer's is y)
#pragma once
#include <cstdint>

namespace minifw {

enum class RnnMode { lstm, gru, rnn_tanh, rnn_relu };

struct RnnShape {
  RnnMode mode;
  int64_t input_size, hidden, layers, dirs;
  bool bias;
  int64_t T, N;

  int64_t gates() const { return mode == RnnMode::lstm ? 4 : mode == RnnMode::gru ? 3 : 1; }
  int64_t layer_input(int64_t l) const { return l == 0 ? input_size : dirs * hidden; }
  // Elements of one (layer, direction)'s weights and biases.
  int64_t direction_weights(int64_t l) const {
    const int64_t GH = gates() * hidden;
    return GH * (layer_input(l) + hidden) + (bias ? 2 * GH : 0);
  }
  int64_t weight_offset(int64_t l, int64_t d) const;
  int64_t weight_count() const { return weight_offset(layers, 0); }
  // Elements of one (layer, direction)'s part of the reserve after out_l.
  int64_t direction_reserve() const;
  int64_t layer_reserve() const { return T * N * dirs * hidden + dirs * direction_reserve(); }
  int64_t reserve_size() const { return layers * layer_reserve(); }
  // Steps whose input projections one GEMM computes.
  int64_t block_steps() const;
  // Elements of the forward's workspace, with and without the reserve.
  int64_t forward_workspace(bool training) const;
  int64_t x_elems() const { return T * N * input_size; }
  int64_t y_elems() const { return T * N * dirs * hidden; }
  int64_t state_elems() const { return layers * dirs * N * hidden; }
  int64_t cell_elems() const { return mode == RnnMode::lstm ? state_elems() : 0; }
};

// Throws std::invalid_argument for an unknown mode name.
RnnMode rnn_mode_from_name(const char* name);

// c0 / c_n / dc_n / dc0 are read and written only for LSTM (may be null otherwise);
// dh_n and dc_n may be null (zeros).
//
// lengths: null (every sequence is T steps long) or N values in [1, T], in any
// order, with PyTorch's packed-sequence meaning: sequence n takes no step at
// t >= lengths[n] (its output there is 0 and its state is kept), the forward
// direction ends after step lengths[n] - 1, the reverse one starts there from
// h0. The forward keeps in the reserve, at those steps, zero gates and (LSTM)
// the kept cell state; the backward ignores dy there and leaves dx 0.
// The same lengths must reach all three calls.
//
// reserve: reserve_size() elements to train (kept for the backward), or null for
// inference; workspace: forward_workspace(reserve != null) elements.
template <typename T>
void rnn_forward(const RnnShape& s, const T* x, const T* h0, const T* c0, const T* w, T* y, T* h_n, T* c_n,
                 T* reserve, T* workspace, const int64_t* lengths, int nthreads);

template <typename T>
void rnn_backward_data(const RnnShape& s, const T* w, T* reserve, const T* h0, const T* c0, const T* dy,
                       const T* dh_n, const T* dc_n, T* dx, T* dh0, T* dc0, const int64_t* lengths,
                       int nthreads);

// Accumulates into dw (the flat weights' layout).
template <typename T>
void rnn_backward_weights(const RnnShape& s, const T* x, const T* reserve, const T* h0, T* dw, const int64_t* lengths,
                          int nthreads);

}  // namespace minifw
