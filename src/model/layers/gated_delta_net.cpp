#include "model/layers/gated_delta_net.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/step_profile.h"
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

void GatedDeltaNet::Forward(const float* x, const ForwardContext& ctx, LayerCache& cache,
                            float* out) {
  const int64_t n = ctx.num_tokens();
  const int64_t hv = dims_.num_v_heads, dv = dims_.value_dim;
  TANDEM_CHECK(cache.state != nullptr && cache.state_floats == dims_.state_floats() &&
               ctx.state_slots.size() == ctx.seq_lens.size())
      << "GatedDeltaNet: state cache of " << cache.state_floats << " floats per slot (expected "
      << dims_.state_floats() << "), " << ctx.state_slots.size() << " slots for "
      << ctx.seq_lens.size() << " sequences";
  mixed_.resize(n * dims_.conv_channels());
  conv_out_.resize(mixed_.size());
  z_.resize(n * hv * dv);
  b_.resize(n * hv);
  a_.resize(n * hv);
  q_.resize(n * dims_.num_k_heads * dims_.key_dim);
  k_.resize(q_.size());
  v_.resize(n * hv * dv);
  g_.resize(n * hv);
  beta_.resize(n * hv);
  o_.resize(n * hv * dv);
  in_proj_qkv_.Forward(x, mixed_.data(), n);
  in_proj_z_.Forward(x, z_.data(), n);
  in_proj_b_.Forward(x, b_.data(), n);
  in_proj_a_.Forward(x, a_.data(), n);
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
  for (int32_t s = 0; s < ctx.num_seqs(); ++s) {
    const int64_t first = ctx.query_start_loc[s];
    const int64_t rows = ctx.query_start_loc[s + 1] - first;
    if (rows == 0) continue;
    const bool fresh = ctx.seq_lens[s] - rows == 0;
    const bool spec = snapshot_offset_[s] >= 0;
    ForwardSequence(first, rows, fresh, cache.state + ctx.state_slots[s] * cache.state_floats,
                    spec ? ctx.num_draft_tokens[s] + 1 : 0,
                    spec ? snapshots_.data() + snapshot_offset_[s] : nullptr);
  }
  // Gated RMSNorm per token and value head ("norm before gate"), then out_proj.
  for (int64_t r = 0; r < n * hv; ++r) {
    float* o = o_.data() + r * dv;
    const float* z = z_.data() + r * dv;
    double sum = 0;
    for (int64_t c = 0; c < dv; ++c) sum += static_cast<double>(o[c]) * o[c];
    const float inv = 1.0f / static_cast<float>(std::sqrt(sum / dv + dims_.eps));
    for (int64_t c = 0; c < dv; ++c) o[c] = o[c] * inv * norm_[c] * (z[c] * Sigmoid(z[c]));
  }
  out_proj_.Forward(o_.data(), out, n);
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

void GatedDeltaNet::ForwardSequence(int64_t first, int64_t rows, bool fresh, float* state,
                                    int64_t num_snapshots, float* snapshots) {
  const core::ScopedPhase phase(core::StepPhase::kAttention);
  const int64_t channels = dims_.conv_channels(), hk = dims_.num_k_heads, hv = dims_.num_v_heads;
  const int64_t dk = dims_.key_dim, dv = dims_.value_dim, kernel = dims_.conv_kernel;
  float* conv_state = state;
  float* recurrent_state = state + channels * (kernel - 1);
  if (fresh) std::fill(state, state + dims_.state_floats(), 0.0f);
  // Rows whose state is snapshotted (the verified positions) go one at a time.
  const int64_t plain_rows = rows - num_snapshots;
  if (plain_rows > 0) {
    kernels::CausalConv1dSilu(mixed_.data() + first * channels, conv1d_.data(), conv_state,
                              conv_out_.data() + first * channels, plain_rows, channels, kernel);
  }
  std::vector<float> conv_snapshots(num_snapshots * channels * (kernel - 1));
  for (int64_t t = plain_rows; t < rows; ++t) {
    kernels::CausalConv1dSilu(mixed_.data() + (first + t) * channels, conv1d_.data(), conv_state,
                              conv_out_.data() + (first + t) * channels, 1, channels, kernel);
    std::copy(conv_state, conv_state + channels * (kernel - 1),
              conv_snapshots.begin() + (t - plain_rows) * channels * (kernel - 1));
  }
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  for (int64_t t = first; t < first + rows; ++t) {
    const float* row = conv_out_.data() + t * channels;
    std::copy(row, row + hk * dk, q_.data() + t * hk * dk);
    std::copy(row + hk * dk, row + 2 * hk * dk, k_.data() + t * hk * dk);
    std::copy(row + 2 * hk * dk, row + channels, v_.data() + t * hv * dv);
    for (int64_t h = 0; h < hk; ++h) {
      L2Normalize(q_.data() + (t * hk + h) * dk, dk, q_scale);
      L2Normalize(k_.data() + (t * hk + h) * dk, dk, 1.0f);
    }
    for (int64_t j = 0; j < hv; ++j) {
      beta_[t * hv + j] = Sigmoid(b_[t * hv + j]);
      g_[t * hv + j] = -std::exp(a_log_[j]) * Softplus(a_[t * hv + j] + dt_bias_[j]);
    }
  }
  auto run = [&](int64_t from, int64_t count) {
    const kernels::GatedDeltaRuleDims d{count, hk, hv, dk, dv};
    const int64_t t = first + from;
    const int64_t kr = t * hk * dk, vr = t * hv * dv, gr = t * hv;
    if (count == 1) {
      kernels::GatedDeltaRuleRecurrent(q_.data() + kr, k_.data() + kr, v_.data() + vr,
                                       g_.data() + gr, beta_.data() + gr, recurrent_state,
                                       o_.data() + vr, d);
    } else {
      kernels::GatedDeltaRuleChunked(q_.data() + kr, k_.data() + kr, v_.data() + vr, g_.data() + gr,
                                     beta_.data() + gr, recurrent_state, o_.data() + vr, d,
                                     kChunkSize);
    }
  };
  if (plain_rows > 0) run(0, plain_rows);
  const int64_t conv_floats = channels * (kernel - 1);
  const int64_t state_floats = dims_.state_floats();
  for (int64_t t = plain_rows; t < rows; ++t) {
    run(t, 1);
    float* snapshot = snapshots + (t - plain_rows) * state_floats;
    std::copy(conv_snapshots.begin() + (t - plain_rows) * conv_floats,
              conv_snapshots.begin() + (t - plain_rows + 1) * conv_floats, snapshot);
    std::copy(recurrent_state, recurrent_state + (state_floats - conv_floats),
              snapshot + conv_floats);
  }
}

}  // namespace tandem::model
