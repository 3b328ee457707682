// Moe: Mixtral/Qwen-style sparse MoE block. Per token: router logits → softmax over all experts
// → top-k → weights (renormalised to sum 1 when norm_topk_prob, else the raw softmax
// probabilities); out = Σ_k w_k · expert_k(x), expert = SwiGLU MLP.
// Reference: llama.cpp llm_build_moe_ffn (softmax gating, norm_w), HF MixtralSparseMoeBlock,
// Qwen3MoeSparseMoeBlock / Qwen2MoeSparseMoeBlock (norm_topk_prob).
// Experts run grouped: each expert multiplies only the rows routed to it in one matmul.
#pragma once

#include <cstdint>
#include <vector>

#include "model/layers/linear.h"

namespace tandem::model {

class Moe {
 public:
  Moe() = default;
  // router: [num_experts, dim]; gate, up: [num_experts][ff][dim]; down: [num_experts][dim][ff].
  // norm_topk_prob: renormalise the k selected probabilities to sum 1 (Mixtral: always).
  Moe(std::vector<float> router, const std::vector<float>& gate, const std::vector<float>& up,
      std::vector<float> down, int64_t num_experts, int64_t top_k, int64_t dim, int64_t ff,
      bool norm_topk_prob = true);

  // x, out: [rows, dim] (must not alias). Not thread-safe (scratch buffers).
  void Forward(const float* x, float* out, int64_t rows);
  size_t weight_bytes() const;

 private:
  Linear router_;
  std::vector<float> gate_up_;  // [num_experts][2 * ff][dim]
  std::vector<float> down_;     // [num_experts][dim][ff]
  int64_t num_experts_ = 0, top_k_ = 0, dim_ = 0, ff_ = 0;
  bool norm_topk_prob_ = true;
  // scratch
  std::vector<float> logits_, probs_, weights_, xe_, gu_, act_, ye_;
  std::vector<int32_t> expert_ids_;
  std::vector<std::vector<std::pair<int32_t, float>>> rows_of_expert_;  // (row, weight)
};

}  // namespace tandem::model
