// GatedDeltaNet: the linear-attention token mixer of Qwen3.5 / Qwen3-Next layers.
//   mixed = in_proj_qkv(x) → causal conv1d + SiLU (state: the last K−1 inputs) → q, k, v
//   q, k l2-normalised per head (q · dk^-½); β = σ(in_proj_b(x)); g = −e^A_log · softplus(
//   in_proj_a(x) + dt_bias)
//   o = gated delta rule(q, k, v, g, β) with a recurrent state per sequence (chunked for a
//   multi-token step, recurrent for one token)
//   y = RMSNorm(o) · norm_weight · SiLU(in_proj_z(x)) per value head → out_proj
// Value head j belongs to key head j / (Hv / Hk) (consecutive grouping, HF order). Each
// sequence's state (conv then recurrent, f32) lives in its slot of the layer's cache; a sequence
// whose step starts at position 0 starts from zeros.
// Reference: HF transformers modeling_qwen3_5_moe.py Qwen3_5MoeGatedDeltaNet; QWEN35.md §3.
#pragma once

#include <cstdint>
#include <vector>

#include "model/layers/linear.h"
#include "model/layers/token_mixer.h"

namespace tandem::model {

struct GatedDeltaNetDims {
  int32_t hidden_size = 0;
  int32_t num_k_heads = 0;  // linear_num_key_heads (this TP rank's)
  int32_t num_v_heads = 0;  // linear_num_value_heads (this TP rank's), a multiple of the above
  int32_t key_dim = 0;      // linear_key_head_dim
  int32_t value_dim = 0;    // linear_value_head_dim
  int32_t conv_kernel = 4;  // linear_conv_kernel_dim
  float eps = 1e-6f;        // rms_norm_eps of the gated norm

  int64_t conv_channels() const {  // q, k and v channels
    return 2 * int64_t{num_k_heads} * key_dim + int64_t{num_v_heads} * value_dim;
  }
  // One sequence's state: conv [conv_channels, K − 1], then recurrent [Hv, dk, dv], f32.
  int64_t state_floats() const {
    return conv_channels() * (conv_kernel - 1) + int64_t{num_v_heads} * key_dim * value_dim;
  }
};

// HF layout ([out, in], row-major), value heads in grouped order. The projections stay in the
// dtype they were stored in (F32, F16, BF16 or Q8_0: Linear's matmul kernels), the rest f32.
struct GatedDeltaNetWeights {
  tensor::Tensor in_proj_qkv;  // [conv_channels, hidden]: q (Hk·dk) | k (Hk·dk) | v (Hv·dv)
  tensor::Tensor in_proj_z;    // [Hv·dv, hidden]
  tensor::Tensor in_proj_b;    // [Hv, hidden]
  tensor::Tensor in_proj_a;    // [Hv, hidden]
  tensor::Tensor out_proj;     // [hidden, Hv·dv]
  std::vector<float> conv1d;   // [conv_channels, K] (HF [C, 1, K] squeezed), no bias
  std::vector<float> dt_bias;  // [Hv]
  std::vector<float> a_log;    // [Hv] (A = −e^A_log)
  std::vector<float> norm;     // [dv] gated RMSNorm weight (plain, not +1)
};

class GatedDeltaNet : public TokenMixer {
 public:
  // Sizes are checked (TANDEM_CHECK): the loader validated every shape against the config.
  GatedDeltaNet(const GatedDeltaNetDims& dims, GatedDeltaNetWeights weights);

  // x: [num_tokens, hidden]; out: [num_tokens, hidden]; cache.state: [num_slots,
  // dims.state_floats()] with ctx.state_slots naming each sequence's slot. Sequences whose step
  // starts at position 0 (seq_lens − their rows == 0) start from a zero state. Scratch from
  // `scratch` (scratch_bytes).
  void Forward(kernels::Stream& stream, const tensor::TensorView& x, const ForwardContext& ctx,
               LayerCache& cache, const tensor::TensorView& out,
               tensor::DeviceArena& scratch) override;
  size_t scratch_bytes(int64_t num_tokens, const tensor::DeviceArena& arena) const override;
  size_t weight_bytes() const override;
  int64_t state_floats() const override { return dims_.state_floats(); }
  void CommitSpeculativeState(const ForwardContext& ctx, int32_t seq, int32_t num_accepted,
                              LayerCache& cache) override;

  const GatedDeltaNetDims& dims() const { return dims_; }

  // Tokens per chunk of the chunked (prefill) form.
  static constexpr int64_t kChunkSize = 64;

 private:
  // One step's rows ([num_tokens, ...] f32, from the activation arena): the projections, the
  // convolution's output, q/k/v, the gates and the rule's output.
  struct StepRows {
    float *mixed, *conv_out, *z, *b, *a, *q, *k, *v, *g, *beta, *o;
  };
  // `snapshots`: null, or room for the state after each of the last `num_snapshots` rows;
  // `conv_snapshots`: room for num_snapshots conv states.
  void ForwardSequence(const StepRows& step, int64_t first_row, int64_t num_rows, bool fresh,
                       float* state, int64_t num_snapshots, float* snapshots,
                       float* conv_snapshots);

  GatedDeltaNetDims dims_;
  Linear in_proj_qkv_, in_proj_z_, in_proj_b_, in_proj_a_, out_proj_;
  std::vector<float> conv1d_, dt_bias_, a_log_, norm_;
  // Speculative steps: per sequence of the last Forward, the offset of its state snapshots in
  // snapshots_ (-1 = none) — one state per verified position, drafts + 1 of them. Kept from
  // Forward to CommitSpeculativeState: state, not scratch (device-seam.md §3.1).
  std::vector<int64_t> snapshot_offset_;
  std::vector<float> snapshots_;
};

}  // namespace tandem::model
