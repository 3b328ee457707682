#include "model/layers/moe.h"

#include <algorithm>
#include <cstring>

#include "core/check.h"
#include "core/step_profile.h"

namespace tandem::model {

namespace {

// [L, 2 * ff, dim] f32: per expert its gate rows then its up rows.
tensor::Tensor StackGateUp(const std::vector<float>& gate, const std::vector<float>& up,
                           int64_t experts, int64_t dim, int64_t ff) {
  const size_t slice = static_cast<size_t>(ff * dim);
  TANDEM_CHECK(gate.size() == experts * slice && up.size() == gate.size())
      << "Moe: gate/up hold " << gate.size() << "/" << up.size() << " floats; expected " << experts
      << " experts × " << slice;
  std::vector<float> fused(experts * 2 * slice);
  for (int64_t e = 0; e < experts; ++e) {
    std::memcpy(&fused[e * 2 * slice], &gate[e * slice], slice * sizeof(float));
    std::memcpy(&fused[e * 2 * slice + slice], &up[e * slice], slice * sizeof(float));
  }
  return tensor::Tensor::FromF32({experts, 2 * ff, dim}, std::move(fused));
}

int64_t LocalCount(int64_t num_experts, const EpContext& ep) {
  return ep.enabled() ? LocalExpertsOf(num_experts, ep.rank, ep.size).count : num_experts;
}

}  // namespace

Moe::Moe(std::vector<float> router, const std::vector<float>& gate, const std::vector<float>& up,
         std::vector<float> down, int64_t num_experts, int64_t top_k, int64_t dim, int64_t ff,
         bool norm_topk_prob, const EpContext& ep)
    : Moe(std::move(router), StackGateUp(gate, up, LocalCount(num_experts, ep), dim, ff),
          tensor::Tensor::FromF32({LocalCount(num_experts, ep), dim, ff}, std::move(down)),
          num_experts, top_k, dim, ff, norm_topk_prob, ep) {}

Moe::Moe(std::vector<float> router, tensor::Tensor gate_up, tensor::Tensor down,
         int64_t num_experts, int64_t top_k, int64_t dim, int64_t ff, bool norm_topk_prob,
         const EpContext& ep)
    : router_(std::move(router), num_experts, dim),
      gate_up_(std::move(gate_up)),
      down_(std::move(down)),
      num_experts_(num_experts),
      top_k_(top_k),
      dim_(dim),
      ff_(ff),
      local_(ep.enabled() ? LocalExpertsOf(num_experts, ep.rank, ep.size)
                          : ExpertRange{0, num_experts}),
      norm_topk_prob_(norm_topk_prob),
      ep_(ep) {
  TANDEM_CHECK(gate_up_.shape() == tensor::Shape({local_.count, 2 * ff, dim}) &&
               down_.shape() == tensor::Shape({local_.count, dim, ff}))
      << "Moe: experts gate_up " << tensor::ShapeToString(gate_up_.shape()) << " "
      << tensor::DTypeName(gate_up_.dtype()) << ", down " << tensor::ShapeToString(down_.shape())
      << " " << tensor::DTypeName(down_.dtype()) << "; expected [" << local_.count << ", " << 2 * ff
      << ", " << dim << "] and [" << local_.count << ", " << dim << ", " << ff << "]";
  gate_up_plan_ = PlanWeight(gate_up_, 2 * ff);  // one packed segment per expert
  down_plan_ = PlanWeight(down_, dim);
  gate_up_ = DropPackedBytes(std::move(gate_up_), gate_up_plan_);
  down_ = DropPackedBytes(std::move(down_), down_plan_);
}

size_t Moe::weight_bytes() const {
  size_t bytes = router_.weight_bytes();
  bytes += gate_up_plan_.kind != Int8WeightPlan::Kind::kNone ? gate_up_plan_.bytes()
                                                             : gate_up_.size_bytes();
  bytes += down_plan_.kind != Int8WeightPlan::Kind::kNone ? down_plan_.bytes() : down_.size_bytes();
  return bytes;
}

void Moe::Route(const float* x, int64_t rows) {
  const core::ScopedPhase phase(core::StepPhase::kRouting);
  logits_.resize(rows * num_experts_);
  expert_ids_.resize(rows * top_k_);
  weights_.resize(rows * top_k_);
  if (rows == 0) return;
  router_.Forward(x, logits_.data(), rows);
  kernels::TopKRouting(logits_.data(), rows, num_experts_, top_k_, expert_ids_.data(),
                       weights_.data());
  if (!norm_topk_prob_) {
    // TopKRouting renormalises; without norm_topk_prob the weights are the softmax
    // probabilities themselves (same selection, same softmax, only the division is dropped).
    probs_.assign(logits_.begin(), logits_.end());
    kernels::Softmax(probs_.data(), rows, num_experts_);
    for (int64_t t = 0; t < rows; ++t) {
      for (int64_t i = 0; i < top_k_; ++i) {
        weights_[t * top_k_ + i] = probs_[t * num_experts_ + expert_ids_[t * top_k_ + i]];
      }
    }
  }
}

void Moe::RunExpert(int64_t local_e, const float* xe, float* ye, int64_t n) {
  gu_.resize(n * 2 * ff_);
  act_.resize(n * ff_);
  MultiplyWeight(gate_up_, gate_up_plan_, xe, gu_.data(), n, local_e * 2 * ff_, 2 * ff_);
  {
    const core::ScopedPhase phase(core::StepPhase::kNormAct);
    kernels::SiluMul(gu_.data(), act_.data(), n, ff_);
  }
  MultiplyWeight(down_, down_plan_, act_.data(), ye, n, local_e * dim_, dim_);
}

void Moe::Forward(const float* x, float* out, int64_t rows) {
  if (ep_.enabled()) {
    ForwardExpertParallel(x, out, rows);
    return;
  }
  if (rows == 0) return;
  Route(x, rows);
  rows_of_expert_.resize(num_experts_);
  for (auto& r : rows_of_expert_) r.clear();
  for (int64_t t = 0; t < rows; ++t) {
    for (int64_t i = 0; i < top_k_; ++i) {
      rows_of_expert_[expert_ids_[t * top_k_ + i]].emplace_back(t, weights_[t * top_k_ + i]);
    }
  }
  std::fill(out, out + rows * dim_, 0.0f);
  for (int64_t e = 0; e < num_experts_; ++e) {
    const auto& routed = rows_of_expert_[e];
    const int64_t n = static_cast<int64_t>(routed.size());
    if (n == 0) continue;
    xe_.resize(n * dim_);
    ye_.resize(n * dim_);
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(&xe_[i * dim_], x + routed[i].first * dim_, dim_ * sizeof(float));
    }
    RunExpert(e, xe_.data(), ye_.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      float* o = out + routed[i].first * dim_;
      const float w = routed[i].second;
      for (int64_t d = 0; d < dim_; ++d) o[d] += w * ye_[i * dim_ + d];
    }
  }
}

}  // namespace tandem::model
