// Moe: Mixtral/Qwen-style sparse MoE block. Per token: router logits → softmax over all experts
// → top-k → weights (renormalised to sum 1 when norm_topk_prob, else the raw softmax
// probabilities); out = Σ_k w_k · expert_k(x), expert = SwiGLU MLP.
// Reference: llama.cpp llm_build_moe_ffn (softmax gating, norm_w), HF MixtralSparseMoeBlock,
// Qwen3MoeSparseMoeBlock / Qwen2MoeSparseMoeBlock (norm_topk_prob).
// Experts run grouped: each expert multiplies only the rows routed to it in one matmul.
// With expert parallel (expert_parallel.h) this instance holds only its EP rank's experts and
// Forward dispatches rows to the owners of their experts and combines the answers (all-to-all
// over the EP group, as vLLM's all2all dispatch/combine; moe_expert_parallel.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "model/layers/expert_parallel.h"
#include "model/layers/feed_forward.h"
#include "model/layers/linear.h"
#include "model/layers/weight_matmul.h"
#include "tensor/tensor.h"

namespace tandem::model {

class Moe : public FeedForward {
 public:
  Moe() = default;
  // router: [num_experts, dim] (every expert, on every rank). gate, up: [L][ff][dim];
  // down: [L][dim][ff], where L = num_experts, or with ep.enabled() the
  // LocalExpertsOf(num_experts, ep.rank, ep.size).count experts this rank owns, in order.
  // norm_topk_prob: renormalise the k selected probabilities to sum 1 (Mixtral: always).
  Moe(std::vector<float> router, const std::vector<float>& gate, const std::vector<float>& up,
      std::vector<float> down, int64_t num_experts, int64_t top_k, int64_t dim, int64_t ff,
      bool norm_topk_prob = true, const EpContext& ep = {});
  // The experts in their stored dtype (F32/F16/BF16/Q8_0, or I8 with W8A8 scales; kept): gate_up
  // [L, 2 * ff, dim] (per expert its gate rows then its up rows), down [L, dim, ff]; each
  // multiplies in its own dtype.
  Moe(std::vector<float> router, tensor::Tensor gate_up, tensor::Tensor down, int64_t num_experts,
      int64_t top_k, int64_t dim, int64_t ff, bool norm_topk_prob = true, const EpContext& ep = {});

  // x, out: [rows, dim] f32 (must not alias). Without EP: out = the block's output. With EP:
  // out holds the output of this TP rank's DispatchRowsOf rows and zeros elsewhere (the
  // layer's TP all-reduce completes it), and every rank of the EP group must call Forward the
  // same number of times, with rows = 0 when it has no tokens (a dummy step).
  // A failed collective aborts (the step cannot finish without the other ranks' experts).
  // Not thread-safe (scratch buffers).
  void Forward(const float* x, float* out, int64_t rows) override;
  bool expert_parallel() const override { return ep_.enabled(); }
  size_t weight_bytes() const override;

 private:
  // expert_ids_ / weights_ [rows, top_k] of the rows x[0 … rows).
  void Route(const float* x, int64_t rows);
  // ye[n, dim] = expert(local expert `local_e`)(xe[n, dim]).
  void RunExpert(int64_t local_e, const float* xe, float* ye, int64_t n);
  void ForwardExpertParallel(const float* x, float* out, int64_t rows);

  Linear router_;
  tensor::Tensor gate_up_;  // [local experts, 2 * ff, dim], stored dtype
  tensor::Tensor down_;     // [local experts, dim, ff], stored dtype
  // Int8 experts packed per expert (empty unless I8; then gate_up_ / down_ keep no bytes).
  Int8WeightPlan gate_up_plan_, down_plan_;
  int64_t num_experts_ = 0, top_k_ = 0, dim_ = 0, ff_ = 0;
  ExpertRange local_;  // the experts held here
  bool norm_topk_prob_ = true;
  EpContext ep_;
  // scratch
  std::vector<float> logits_, probs_, weights_, xe_, gu_, act_, ye_;
  std::vector<int32_t> expert_ids_;
  std::vector<std::vector<std::pair<int32_t, float>>> rows_of_expert_;  // (row, weight)
  std::vector<float> send_, recv_, answers_, returned_, counts_;
  std::vector<int64_t> pair_order_;  // send order → (row · top_k + k)
};

}  // namespace tandem::model
