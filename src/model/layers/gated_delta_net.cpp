#include "model/layers/gated_delta_net.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/step_profile.h"
#include "kernels/device_ops.h"
#include "kernels/ops.h"

namespace tandem::model {
namespace {

// torch.nn.functional.softplus (beta 1, threshold 20: linear above it, as vLLM's gating kernel).
float Softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }
float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// x[i] *= scale / sqrt(Σ x² + 1e-6) over one head (HF l2norm).
void L2Normalize(float* x, int64_t dim, float scale) {
  double sum = 0;
  for (int64_t i = 0; i < dim; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float factor = scale / static_cast<float>(std::sqrt(sum + 1e-6));
  for (int64_t i = 0; i < dim; ++i) x[i] *= factor;
}

}  // namespace

GatedDeltaNet::GatedDeltaNet(const GatedDeltaNetDims& dims, GatedDeltaNetWeights w)
    : dims_(dims),
      conv1d_(std::move(w.conv1d)),
      dt_bias_(std::move(w.dt_bias)),
      a_log_(std::move(w.a_log)),
      norm_(std::move(w.norm)) {
  const int64_t hidden = dims.hidden_size, hv = dims.num_v_heads;
  const int64_t value_size = hv * dims.value_dim;
  TANDEM_CHECK(dims.num_k_heads > 0 && hv % dims.num_k_heads == 0 && dims.conv_kernel >= 1)
      << "GatedDeltaNet: " << hv << " value heads over " << dims.num_k_heads << " key heads";
  const auto shaped = [](tensor::Tensor t, int64_t rows, int64_t cols, const char* name) {
    TANDEM_CHECK(t.rank() == 2 && t.dim(0) == rows && t.dim(1) == cols)
        << "GatedDeltaNet: " << name << " is " << tensor::ShapeToString(t.shape()) << "; expected ["
        << rows << ", " << cols << "]";
    return Linear(std::move(t));
  };
  in_proj_qkv_ = shaped(std::move(w.in_proj_qkv), dims.conv_channels(), hidden, "in_proj_qkv");
  in_proj_z_ = shaped(std::move(w.in_proj_z), value_size, hidden, "in_proj_z");
  in_proj_b_ = shaped(std::move(w.in_proj_b), hv, hidden, "in_proj_b");
  in_proj_a_ = shaped(std::move(w.in_proj_a), hv, hidden, "in_proj_a");
  out_proj_ = shaped(std::move(w.out_proj), hidden, value_size, "out_proj");
  TANDEM_CHECK(static_cast<int64_t>(conv1d_.size()) == dims.conv_channels() * dims.conv_kernel &&
               static_cast<int64_t>(dt_bias_.size()) == hv &&
               static_cast<int64_t>(a_log_.size()) == hv &&
               static_cast<int64_t>(norm_.size()) == dims.value_dim)
      << "GatedDeltaNet: conv1d " << conv1d_.size() << ", dt_bias " << dt_bias_.size() << ", A_log "
      << a_log_.size() << ", norm " << norm_.size() << " values";
}

size_t GatedDeltaNet::weight_bytes() const {
  return in_proj_qkv_.weight_bytes() + in_proj_z_.weight_bytes() + in_proj_b_.weight_bytes() +
         in_proj_a_.weight_bytes() + out_proj_.weight_bytes() +
         (conv1d_.size() + dt_bias_.size() + a_log_.size() + norm_.size()) * sizeof(float);
}

size_t GatedDeltaNet::scratch_bytes(int64_t n, const tensor::DeviceArena& arena) const {
  const int64_t hv = dims_.num_v_heads, dv = dims_.value_dim;
  const int64_t qk = int64_t{dims_.num_k_heads} * dims_.key_dim;
  const tensor::DType f32 = tensor::DType::kF32;
  // mixed, conv_out; z, v, o; b, a, g, beta; q, k; the conv snapshots of speculative rows.
  return 2 * arena.BytesFor({n, dims_.conv_channels()}, f32) +
         3 * arena.BytesFor({n, hv * dv}, f32) + 4 * arena.BytesFor({n, hv}, f32) +
         2 * arena.BytesFor({n, qk}, f32) +
         arena.BytesFor({n, dims_.conv_channels() * (dims_.conv_kernel - 1)}, f32);
}

void GatedDeltaNet::Forward(kernels::Stream& stream, const tensor::TensorView& x,
                            const ForwardContext& ctx, LayerCache& cache,
                            const tensor::TensorView& out, tensor::DeviceArena& scratch) {
  const int64_t n = ctx.num_tokens();
  const int64_t hv = dims_.num_v_heads, dv = dims_.value_dim;
  const int64_t qk = int64_t{dims_.num_k_heads} * dims_.key_dim;
  TANDEM_CHECK(cache.state != nullptr && cache.state_floats == dims_.state_floats() &&
               ctx.state_slots.size() == ctx.seq_lens.size())
      << "GatedDeltaNet: state cache of " << cache.state_floats << " floats per slot (expected "
      << dims_.state_floats() << "), " << ctx.state_slots.size() << " slots for "
      << ctx.seq_lens.size() << " sequences";
  const tensor::DType f32 = tensor::DType::kF32;
  const tensor::ArenaScope scope(scratch);
  const auto rows = [&](int64_t width) { return scratch.AllocateOrDie({n, width}, f32); };
  const tensor::TensorView mixed = rows(dims_.conv_channels()), z = rows(hv * dv), b = rows(hv),
                           a = rows(hv), o = rows(hv * dv);
  in_proj_qkv_.Forward(stream, x, mixed);
  in_proj_z_.Forward(stream, x, z);
  in_proj_b_.Forward(stream, x, b);
  in_proj_a_.Forward(stream, x, a);
  const tensor::TensorView conv_out = rows(dims_.conv_channels()), q = rows(qk), k = rows(qk),
                           v = rows(hv * dv), g = rows(hv), beta = rows(hv);
  // The recurrence, the convolution and the gated norm are host loops so far.
  kernels::CheckCpuOp("GatedDeltaNet", stream, {&x, &out, &mixed, &conv_out, &o});
  const StepRows step{mixed.f32(), conv_out.f32(), z.f32(), b.f32(),    a.f32(), q.f32(),
                      k.f32(),     v.f32(),        g.f32(), beta.f32(), o.f32()};
  // Speculative steps keep the state after every verified position (drafts + 1 per sequence).
  snapshot_offset_.assign(ctx.num_seqs(), -1);
  int64_t num_snapshot_floats = 0;
  for (int32_t s = 0; s < ctx.num_seqs(); ++s) {
    const int32_t drafts =
        s < static_cast<int32_t>(ctx.num_draft_tokens.size()) ? ctx.num_draft_tokens[s] : 0;
    if (drafts <= 0) continue;
    snapshot_offset_[s] = num_snapshot_floats;
    num_snapshot_floats += (drafts + 1) * dims_.state_floats();
  }
  snapshots_.resize(num_snapshot_floats);
  const tensor::TensorView conv_snapshots = rows(dims_.conv_channels() * (dims_.conv_kernel - 1));
  for (int32_t s = 0; s < ctx.num_seqs(); ++s) {
    const int64_t first = ctx.query_start_loc[s];
    const int64_t seq_rows = ctx.query_start_loc[s + 1] - first;
    if (seq_rows == 0) {
      continue;
    }
    const bool fresh = ctx.seq_lens[s] - seq_rows == 0;
    const bool spec = snapshot_offset_[s] >= 0;
    ForwardSequence(step, first, seq_rows, fresh,
                    cache.state + ctx.state_slots[s] * cache.state_floats,
                    spec ? ctx.num_draft_tokens[s] + 1 : 0,
                    spec ? snapshots_.data() + snapshot_offset_[s] : nullptr, conv_snapshots.f32());
  }
  // Gated RMSNorm per token and value head ("norm before gate"), then out_proj.
  for (int64_t r = 0; r < n * hv; ++r) {
    float* orow = step.o + r * dv;
    const float* zrow = step.z + r * dv;
    double sum = 0;
    for (int64_t c = 0; c < dv; ++c) {
      sum += static_cast<double>(orow[c]) * orow[c];
    }
    const float inv = 1.0f / static_cast<float>(std::sqrt(sum / dv + dims_.eps));
    for (int64_t c = 0; c < dv; ++c) {
      orow[c] = orow[c] * inv * norm_[c] * (zrow[c] * Sigmoid(zrow[c]));
    }
  }
  out_proj_.Forward(stream, o, out);
}

void GatedDeltaNet::CommitSpeculativeState(const ForwardContext& ctx, int32_t seq,
                                           int32_t num_accepted, LayerCache& cache) {
  TANDEM_CHECK(seq >= 0 && seq < static_cast<int32_t>(snapshot_offset_.size()) &&
               snapshot_offset_[seq] >= 0 && num_accepted >= 0 &&
               num_accepted <= ctx.num_draft_tokens[seq])
      << "GatedDeltaNet: commit of sequence " << seq << " with " << num_accepted
      << " accepted drafts, but the last step kept no such state";
  const float* chosen = snapshots_.data() + snapshot_offset_[seq] +
                        static_cast<int64_t>(num_accepted) * dims_.state_floats();
  std::copy(chosen, chosen + dims_.state_floats(),
            cache.state + ctx.state_slots[seq] * cache.state_floats);
}

void GatedDeltaNet::ForwardSequence(const StepRows& step, int64_t first, int64_t rows, bool fresh,
                                    float* state, int64_t num_snapshots, float* snapshots,
                                    float* conv_snapshots) {
  const core::ScopedPhase phase(core::StepPhase::kAttention);
  const int64_t channels = dims_.conv_channels(), hk = dims_.num_k_heads, hv = dims_.num_v_heads;
  const int64_t dk = dims_.key_dim, dv = dims_.value_dim, kernel = dims_.conv_kernel;
  float* conv_state = state;
  float* recurrent_state = state + channels * (kernel - 1);
  if (fresh) std::fill(state, state + dims_.state_floats(), 0.0f);
  // Rows whose state is snapshotted (the verified positions) go one at a time.
  const int64_t plain_rows = rows - num_snapshots;
  if (plain_rows > 0) {
    kernels::CausalConv1dSilu(step.mixed + first * channels, conv1d_.data(), conv_state,
                              step.conv_out + first * channels, plain_rows, channels, kernel);
  }
  for (int64_t t = plain_rows; t < rows; ++t) {
    kernels::CausalConv1dSilu(step.mixed + (first + t) * channels, conv1d_.data(), conv_state,
                              step.conv_out + (first + t) * channels, 1, channels, kernel);
    std::copy(conv_state, conv_state + channels * (kernel - 1),
              conv_snapshots + (t - plain_rows) * channels * (kernel - 1));
  }
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  for (int64_t t = first; t < first + rows; ++t) {
    const float* row = step.conv_out + t * channels;
    std::copy(row, row + hk * dk, step.q + t * hk * dk);
    std::copy(row + hk * dk, row + 2 * hk * dk, step.k + t * hk * dk);
    std::copy(row + 2 * hk * dk, row + channels, step.v + t * hv * dv);
    for (int64_t h = 0; h < hk; ++h) {
      L2Normalize(step.q + (t * hk + h) * dk, dk, q_scale);
      L2Normalize(step.k + (t * hk + h) * dk, dk, 1.0f);
    }
    for (int64_t j = 0; j < hv; ++j) {
      step.beta[t * hv + j] = Sigmoid(step.b[t * hv + j]);
      step.g[t * hv + j] = -std::exp(a_log_[j]) * Softplus(step.a[t * hv + j] + dt_bias_[j]);
    }
  }
  auto run = [&](int64_t from, int64_t count) {
    const kernels::GatedDeltaRuleDims d{count, hk, hv, dk, dv};
    const int64_t t = first + from;
    const int64_t kr = t * hk * dk, vr = t * hv * dv, gr = t * hv;
    if (count == 1) {
      kernels::GatedDeltaRuleRecurrent(step.q + kr, step.k + kr, step.v + vr, step.g + gr,
                                       step.beta + gr, recurrent_state, step.o + vr, d);
    } else {
      kernels::GatedDeltaRuleChunked(step.q + kr, step.k + kr, step.v + vr, step.g + gr,
                                     step.beta + gr, recurrent_state, step.o + vr, d, kChunkSize);
    }
  };
  if (plain_rows > 0) run(0, plain_rows);
  const int64_t conv_floats = channels * (kernel - 1);
  const int64_t state_floats = dims_.state_floats();
  for (int64_t t = plain_rows; t < rows; ++t) {
    run(t, 1);
    float* snapshot = snapshots + (t - plain_rows) * state_floats;
    std::copy(conv_snapshots + (t - plain_rows) * conv_floats,
              conv_snapshots + (t - plain_rows + 1) * conv_floats, snapshot);
    std::copy(recurrent_state, recurrent_state + (state_floats - conv_floats),
              snapshot + conv_floats);
  }
}

}  // namespace tandem::model
