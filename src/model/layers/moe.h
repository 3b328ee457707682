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

#include "kernels/backend.h"
#include "tensor/device_arena.h"
#include "tensor/tensor_view.h"

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

  // x, out: [rows, dim] f32 (must not alias), on `stream`'s device. Without EP: out = the
  // block's output. With EP: out holds the output of this TP rank's DispatchRowsOf rows and
  // zeros elsewhere (the layer's TP all-reduce completes it), and every rank of the EP group
  // must call Forward the same number of times, with rows = 0 when it has no tokens (a dummy
  // step). Scratch from `scratch` (scratch_bytes). A failed collective aborts (the step cannot
  // finish without the other ranks' experts). Not thread-safe.
  void Forward(kernels::Stream& stream, const tensor::TensorView& x, const tensor::TensorView& out,
               tensor::DeviceArena& scratch) override;
  size_t scratch_bytes(int64_t rows, const tensor::DeviceArena& arena) const override;
  bool expert_parallel() const override { return ep_.enabled(); }
  size_t weight_bytes() const override;

  // Expert-parallel ranks run their experts over the rows they received this many at a time
  // (what other ranks send is unknown when the arena is sized; docs/design/device-seam.md §3.1).
  static constexpr int64_t kEpChunkRows = 256;

 private:
  // Top-k routing of x's rows: expert ids [rows, top_k] I32 and weights [rows, top_k] F32,
  // allocated from `scratch` in the caller's scope.
  struct Routing {
    tensor::TensorView expert_ids, weights;
  };
  Routing Route(kernels::Stream& stream, const tensor::TensorView& x, tensor::DeviceArena& scratch);
  size_t route_bytes(int64_t rows, const tensor::DeviceArena& arena) const;
  // ye[n, dim] = expert(local expert `local_e`)(xe[n, dim]); [n, 3 * ff] f32 of scratch.
  void RunExpert(kernels::Stream& stream, int64_t local_e, const tensor::TensorView& xe,
                 const tensor::TensorView& ye, tensor::DeviceArena& scratch);
  size_t expert_bytes(int64_t rows, const tensor::DeviceArena& arena) const;
  void ForwardExpertParallel(kernels::Stream& stream, const tensor::TensorView& x,
                             const tensor::TensorView& out, tensor::DeviceArena& scratch);

  Linear router_;
  tensor::Tensor gate_up_;  // [local experts, 2 * ff, dim], stored dtype
  tensor::Tensor down_;     // [local experts, dim, ff], stored dtype
  // Int8 experts packed per expert (empty unless I8; then gate_up_ / down_ keep no bytes).
  Int8WeightPlan gate_up_plan_, down_plan_;
  int64_t num_experts_ = 0, top_k_ = 0, dim_ = 0, ff_ = 0;
  ExpertRange local_;  // the experts held here
  bool norm_topk_prob_ = true;
  EpContext ep_;
  // Host routing metadata: the first (row, k) pair of each expert in expert order, [E + 1]
  // (a device backend routes with its own kernel, device-seam.md §7).
  std::vector<int64_t> expert_offsets_;
  // Expert-parallel dispatch / combine buffers, sized by what the other ranks send (§3.1).
  std::vector<float> send_, recv_, answers_, returned_, counts_;
  std::vector<int64_t> pair_order_;                   // send order → (row · top_k + k)
  std::vector<std::vector<int32_t>> rows_of_expert_;  // received rows per local expert
};

}  // namespace tandem::model
