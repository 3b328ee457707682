// Moe::ForwardExpertParallel: dispatch → local experts → combine over the EP group.
// 1. This TP rank routes its DispatchRowsOf rows (router replicated, same top-k as one rank).
// 2. Every (row, k) pair goes to ExpertOwner(expert): the pair counts are all-gathered into a
//    [source][destination] matrix, then one all-to-all carries [expert id, x row] per pair.
// 3. Each rank runs its experts over what it received, grouped per expert (one matmul each).
// 4. A second all-to-all returns each pair's expert output to its sender, which adds
//    w_k · y into its row. Ranks with no rows still take part (counts of zero).
// Reference: vLLM FusedMoE with expert parallel (all2all dispatch / combine); Megatron-LM
// MoEAlltoAllTokenDispatcher. Deviation: a row with several experts on one rank travels once
// per expert (simpler; top_k is small).
#include <algorithm>
#include <cstring>

#include "core/check.h"
#include "core/step_profile.h"
#include "kernels/device_ops.h"
#include "model/layers/moe.h"

namespace tandem::model {
namespace {

void CheckOk(const Status& s, const char* what, const EpContext& ep) {
  TANDEM_CHECK(s.ok()) << "EP rank " << ep.rank << "/" << ep.size << ": " << what
                       << " failed: " << s.ToString();
}

}  // namespace

void Moe::ForwardExpertParallel(kernels::Stream& stream, const tensor::TensorView& x_view,
                                const tensor::TensorView& out_view, tensor::DeviceArena& scratch) {
  const int32_t size = ep_.size, me = ep_.rank;
  const int64_t rows = x_view.dim(0);
  const RowRange mine = DispatchRowsOf(rows, ep_.tp_rank, ep_.tp_size);
  kernels::Fill(stream, out_view, 0.0f);
  const tensor::ArenaScope scope(scratch);
  const Routing routing = Route(stream, x_view.Rows(mine.first, mine.count), scratch);
  // The dispatch and combine below are host code over host buffers (device-seam.md §3.1).
  kernels::CheckCpuOp("expert-parallel MoE", stream,
                      {&x_view, &out_view, &routing.expert_ids, &routing.weights});
  const float* x = x_view.data == nullptr ? nullptr : x_view.f32();
  float* out = out_view.data == nullptr ? nullptr : out_view.f32();
  const int32_t* expert_ids =
      routing.expert_ids.data == nullptr ? nullptr : routing.expert_ids.i32();
  const float* weights = routing.weights.data == nullptr ? nullptr : routing.weights.f32();

  // Pairs in destination order.
  const int64_t num_pairs = mine.count * top_k_;
  std::vector<size_t> pairs_to(size, 0);
  for (int64_t p = 0; p < num_pairs; ++p) {
    ++pairs_to[ExpertOwner(expert_ids[p], num_experts_, size)];
  }
  std::vector<size_t> first_of(size, 0);
  for (int32_t r = 1; r < size; ++r) first_of[r] = first_of[r - 1] + pairs_to[r - 1];
  pair_order_.resize(num_pairs);
  {
    std::vector<size_t> next = first_of;
    for (int64_t p = 0; p < num_pairs; ++p) {
      pair_order_[next[ExpertOwner(expert_ids[p], num_experts_, size)]++] = p;
    }
  }
  // [source][destination] pair counts.
  std::vector<float> my_counts(size);
  for (int32_t r = 0; r < size; ++r) my_counts[r] = static_cast<float>(pairs_to[r]);
  counts_.resize(static_cast<size_t>(size) * size);
  {
    const core::ScopedPhase phase(core::StepPhase::kCollective);
    CheckOk(ep_.group->AllGather(my_counts.data(), size, counts_.data()), "pair-count all-gather",
            ep_);
  }
  std::vector<size_t> pairs_from(size);
  size_t num_received = 0;
  for (int32_t s = 0; s < size; ++s) {
    pairs_from[s] = static_cast<size_t>(counts_[s * size + me]);
    num_received += pairs_from[s];
  }

  // Dispatch: [expert id (int32 bits), x row] per pair.
  const int64_t stride = dim_ + 1;
  send_.resize(std::max<int64_t>(1, num_pairs * stride));
  for (int64_t j = 0; j < num_pairs; ++j) {
    const int64_t p = pair_order_[j];
    const int32_t expert = expert_ids[p];
    std::memcpy(&send_[j * stride], &expert, sizeof(float));
    std::memcpy(&send_[j * stride + 1], x + (mine.first + p / top_k_) * dim_, dim_ * sizeof(float));
  }
  recv_.resize(std::max<size_t>(1, num_received * stride));
  std::vector<size_t> send_elems(size), recv_elems(size);
  for (int32_t r = 0; r < size; ++r) {
    send_elems[r] = pairs_to[r] * stride;
    recv_elems[r] = pairs_from[r] * stride;
  }
  {
    const core::ScopedPhase phase(core::StepPhase::kCollective);
    CheckOk(ep_.group->AllToAll(send_.data(), send_elems, recv_.data(), recv_elems), "dispatch",
            ep_);
  }

  // Local experts over everything received, grouped per expert, kEpChunkRows rows at a time.
  answers_.resize(std::max<size_t>(1, num_received * dim_));
  rows_of_expert_.resize(local_.count);
  for (auto& r : rows_of_expert_) r.clear();
  for (size_t i = 0; i < num_received; ++i) {
    int32_t expert = 0;
    std::memcpy(&expert, &recv_[i * stride], sizeof(float));
    TANDEM_CHECK(expert >= local_.first && expert < local_.first + local_.count)
        << "EP rank " << me << " received a row for expert " << expert << "; it owns "
        << local_.first << " … " << local_.first + local_.count - 1;
    rows_of_expert_[expert - local_.first].push_back(static_cast<int32_t>(i));
  }
  const tensor::TensorView xe = scratch.AllocateOrDie({kEpChunkRows, dim_}, tensor::DType::kF32);
  const tensor::TensorView ye = scratch.AllocateOrDie({kEpChunkRows, dim_}, tensor::DType::kF32);
  for (int64_t e = 0; e < local_.count; ++e) {
    const std::vector<int32_t>& routed = rows_of_expert_[e];
    const int64_t total = static_cast<int64_t>(routed.size());
    for (int64_t first = 0; first < total; first += kEpChunkRows) {
      const int64_t n = std::min(kEpChunkRows, total - first);
      float* xs = xe.f32();
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(xs + i * dim_, &recv_[routed[first + i] * stride + 1], dim_ * sizeof(float));
      }
      RunExpert(stream, e, xe.Rows(0, n), ye.Rows(0, n), scratch);
      const float* ys = ye.f32();
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(&answers_[routed[first + i] * dim_], ys + i * dim_, dim_ * sizeof(float));
      }
    }
  }

  // Combine: the answers go back the way the rows came.
  returned_.resize(std::max<int64_t>(1, num_pairs * dim_));
  for (int32_t r = 0; r < size; ++r) {
    send_elems[r] = pairs_from[r] * dim_;
    recv_elems[r] = pairs_to[r] * dim_;
  }
  {
    const core::ScopedPhase phase(core::StepPhase::kCollective);
    CheckOk(ep_.group->AllToAll(answers_.data(), send_elems, returned_.data(), recv_elems),
            "combine", ep_);
  }
  // Each row adds its experts' outputs in expert order, as the single-rank path does, so the
  // sums round the same way.
  std::vector<int64_t> slot_of_pair(num_pairs);
  for (int64_t j = 0; j < num_pairs; ++j) slot_of_pair[pair_order_[j]] = j;
  std::vector<int64_t> ks(top_k_);
  for (int64_t t = 0; t < mine.count; ++t) {
    for (int64_t k = 0; k < top_k_; ++k) ks[k] = t * top_k_ + k;
    std::sort(ks.begin(), ks.end(),
              [&](int64_t a, int64_t b) { return expert_ids[a] < expert_ids[b]; });
    float* o = out + (mine.first + t) * dim_;
    for (int64_t p : ks) {
      const float w = weights[p];
      const float* y = &returned_[slot_of_pair[p] * dim_];
      for (int64_t d = 0; d < dim_; ++d) o[d] += w * y[d];
    }
  }
}

}  // namespace tandem::model
