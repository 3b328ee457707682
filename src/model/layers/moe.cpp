#include "model/layers/moe.h"

#include <algorithm>
#include <cstring>

#include "core/check.h"
#include "core/step_profile.h"
#include "kernels/device_ops.h"

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

size_t Moe::route_bytes(int64_t rows, const tensor::DeviceArena& arena) const {
  const tensor::DType f32 = tensor::DType::kF32;
  return arena.BytesFor({rows, top_k_}, tensor::DType::kI32) + arena.BytesFor({rows, top_k_}, f32) +
         (norm_topk_prob_ ? 1 : 2) * arena.BytesFor({rows, num_experts_}, f32);
}

size_t Moe::expert_bytes(int64_t rows, const tensor::DeviceArena& arena) const {
  return arena.BytesFor({rows, 2 * ff_}, tensor::DType::kF32) +
         arena.BytesFor({rows, ff_}, tensor::DType::kF32);
}

size_t Moe::scratch_bytes(int64_t rows, const tensor::DeviceArena& arena) const {
  const tensor::DType f32 = tensor::DType::kF32;
  if (ep_.enabled()) {  // routing of at most `rows`, then the experts a chunk at a time
    return route_bytes(rows, arena) + 2 * arena.BytesFor({kEpChunkRows, dim_}, f32) +
           expert_bytes(kEpChunkRows, arena);
  }
  // Routing, the (row, weight) pairs grouped by expert, one expert's rows in and out (at most
  // every row), and its intermediate.
  return route_bytes(rows, arena) + arena.BytesFor({rows * top_k_}, tensor::DType::kI32) +
         arena.BytesFor({rows * top_k_}, f32) + 2 * arena.BytesFor({rows, dim_}, f32) +
         expert_bytes(rows, arena);
}

Moe::Routing Moe::Route(kernels::Stream& stream, const tensor::TensorView& x,
                        tensor::DeviceArena& scratch) {
  const core::ScopedPhase phase(core::StepPhase::kRouting);
  const int64_t rows = x.dim(0);
  Routing r{scratch.AllocateOrDie({rows, top_k_}, tensor::DType::kI32),
            scratch.AllocateOrDie({rows, top_k_}, tensor::DType::kF32)};
  if (rows == 0) {
    return r;
  }
  const tensor::ArenaScope scope(scratch);  // the logits go; the routing stays
  const tensor::TensorView logits =
      scratch.AllocateOrDie({rows, num_experts_}, tensor::DType::kF32);
  router_.Forward(stream, x, logits);
  kernels::CheckCpuOp("MoE routing", stream, {&logits, &r.expert_ids, &r.weights});
  int32_t* ids = r.expert_ids.i32();
  float* weights = r.weights.f32();
  kernels::TopKRouting(logits.f32(), rows, num_experts_, top_k_, ids, weights);
  if (!norm_topk_prob_) {
    // TopKRouting renormalises; without norm_topk_prob the weights are the softmax
    // probabilities themselves (same selection, same softmax, only the division is dropped).
    const tensor::TensorView probs =
        scratch.AllocateOrDie({rows, num_experts_}, tensor::DType::kF32);
    std::copy(logits.f32(), logits.f32() + logits.numel(), probs.f32());
    kernels::Softmax(probs.f32(), rows, num_experts_);
    const float* p = probs.f32();
    for (int64_t t = 0; t < rows; ++t) {
      for (int64_t i = 0; i < top_k_; ++i) {
        weights[t * top_k_ + i] = p[t * num_experts_ + ids[t * top_k_ + i]];
      }
    }
  }
  return r;
}

void Moe::RunExpert(kernels::Stream& stream, int64_t local_e, const tensor::TensorView& xe,
                    const tensor::TensorView& ye, tensor::DeviceArena& scratch) {
  const int64_t n = xe.dim(0);
  const tensor::ArenaScope scope(scratch);
  const tensor::TensorView gu = scratch.AllocateOrDie({n, 2 * ff_}, tensor::DType::kF32);
  const tensor::TensorView act = scratch.AllocateOrDie({n, ff_}, tensor::DType::kF32);
  kernels::CheckCpuOp("MoE experts", stream, {&xe, &ye, &gu, &act});
  MultiplyWeight(gate_up_, gate_up_plan_, xe.f32(), gu.f32(), n, local_e * 2 * ff_, 2 * ff_);
  kernels::SiluMul(stream, gu, act);
  MultiplyWeight(down_, down_plan_, act.f32(), ye.f32(), n, local_e * dim_, dim_);
}

void Moe::Forward(kernels::Stream& stream, const tensor::TensorView& x,
                  const tensor::TensorView& out, tensor::DeviceArena& scratch) {
  if (ep_.enabled()) {
    ForwardExpertParallel(stream, x, out, scratch);
    return;
  }
  const int64_t rows = x.dim(0);
  if (rows == 0) return;
  const tensor::ArenaScope scope(scratch);
  const Routing routing = Route(stream, x, scratch);
  // The (row, weight) pairs grouped by expert, rows ascending within each (a counting sort).
  const int64_t num_pairs = rows * top_k_;
  const tensor::TensorView pair_rows = scratch.AllocateOrDie({num_pairs}, tensor::DType::kI32);
  const tensor::TensorView pair_weights = scratch.AllocateOrDie({num_pairs}, tensor::DType::kF32);
  kernels::CheckCpuOp("MoE routing", stream, {&pair_rows, &pair_weights});
  const int32_t* ids = routing.expert_ids.i32();
  const float* weights = routing.weights.f32();
  expert_offsets_.assign(num_experts_ + 1, 0);
  for (int64_t p = 0; p < num_pairs; ++p) {
    ++expert_offsets_[ids[p] + 1];
  }
  for (int64_t e = 0; e < num_experts_; ++e) {
    expert_offsets_[e + 1] += expert_offsets_[e];
  }
  {
    std::vector<int64_t> next(expert_offsets_.begin(), expert_offsets_.end() - 1);
    int32_t* to_row = pair_rows.i32();
    float* to_weight = pair_weights.f32();
    for (int64_t p = 0; p < num_pairs; ++p) {
      const int64_t slot = next[ids[p]]++;
      to_row[slot] = static_cast<int32_t>(p / top_k_);
      to_weight[slot] = weights[p];
    }
  }
  const tensor::TensorView xe = scratch.AllocateOrDie({rows, dim_}, tensor::DType::kF32);
  const tensor::TensorView ye = scratch.AllocateOrDie({rows, dim_}, tensor::DType::kF32);
  kernels::Fill(stream, out, 0.0f);
  for (int64_t e = 0; e < num_experts_; ++e) {
    const int64_t first = expert_offsets_[e], n = expert_offsets_[e + 1] - first;
    if (n == 0) continue;
    const tensor::TensorView routed = pair_rows.Rows(first, n);
    kernels::GatherRows(stream, x, routed, xe.Rows(0, n));
    RunExpert(stream, e, xe.Rows(0, n), ye.Rows(0, n), scratch);
    kernels::ScatterAddScaled(stream, ye.Rows(0, n), routed, pair_weights.Rows(first, n), out);
  }
}

}  // namespace tandem::model
