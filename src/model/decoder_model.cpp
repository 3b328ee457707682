#include "model/decoder_model.h"

#include <algorithm>

#include "core/check.h"
#include "kernels/device_ops.h"

namespace tandem::model {

DecoderModel::DecoderModel(ModelInfo info, DecoderWeights weights, TpContext tp,
                           kernels::Backend& backend)
    : info_(std::move(info)),
      w_(std::move(weights)),
      tp_(tp),
      stream_(backend.CreateStream()),
      activations_(std::make_unique<tensor::DeviceArena>(backend.allocator(), "activations")) {
  TANDEM_CHECK(backend.device().kind == tensor::DeviceKind::kCpu)
      << "DecoderModel: weights are host memory; the " << backend.name()
      << " backend cannot run them yet";
  const LocalHeads heads = LocalHeadsOf(info_.num_heads, info_.num_kv_heads, tp_);
  info_.num_heads = heads.num_heads;
  info_.num_kv_heads = heads.num_kv_heads;
  info_.tp_rank = tp_.rank;
  info_.tp_size = tp_.size;
  TANDEM_CHECK(static_cast<int32_t>(w_.layers.size()) == info_.num_layers)
      << "DecoderModel: " << w_.layers.size() << " layers, info says " << info_.num_layers;
  size_t bytes = w_.embedding.table()->size_bytes() + w_.final_norm.weight.size() * sizeof(float);
  if (w_.lm_head.weight() != w_.embedding.table()) {
    bytes += w_.lm_head.weight_bytes();
  }
  for (const DecoderLayer& layer : w_.layers) {
    TANDEM_CHECK(layer.mixer != nullptr && layer.ffn != nullptr)
        << "DecoderModel: a layer without a token mixer or a feed-forward";
    bytes += layer.weight_bytes();
    const int64_t floats = layer.mixer->state_floats();
    state_layer_.push_back(floats > 0);
    if (floats > 0) {
      TANDEM_CHECK(state_floats_ == 0 || state_floats_ == floats)
          << "DecoderModel: recurrent layers of " << state_floats_ << " and " << floats
          << " state values";
      state_floats_ = floats;
    }
  }
  info_.weight_bytes = bytes;
}

void DecoderModel::FinalNormedHidden(std::vector<float>* out) const {
  if (hidden_.data == nullptr) {
    out->clear();
    return;
  }
  out->resize(hidden_.numel());
  const tensor::TensorView dst = tensor::HostView(hidden_.shape, tensor::DType::kF32, out->data());
  w_.final_norm.Forward(*stream_, hidden_, dst);
}

void DecoderModel::AttachMtp(std::unique_ptr<MtpModule> mtp) {
  info_.weight_bytes += mtp->weight_bytes();
  mtp_ = std::move(mtp);
}

void DecoderModel::Draft(const ForwardContext& ctx, const int32_t* next_tokens, const float* hidden,
                         KvCache& kv, std::vector<float>& hidden_out, std::vector<float>& logits) {
  TANDEM_CHECK(mtp_ != nullptr) << "Draft on a model without an MTP head";
  if (ctx.num_tokens() == 0) {
    hidden_ = {};
    mtp_->DummyForward(*stream_, *activations_);
    hidden_out.clear();
    logits.clear();
    return;
  }
  LayerCache cache = kv.ForLayer(info_.num_layers);  // the head's own paged layer
  hidden_ = {};                                      // the head reuses the activation arena
  mtp_->Forward(*stream_, *activations_, ctx, next_tokens, hidden, w_.embedding, w_.lm_head,
                info_.vocab_size, cache, hidden_out, logits);
}

Status DecoderModel::SetKvCacheDtype(tensor::DType dtype) {
  if (dtype != tensor::DType::kF32 && dtype != tensor::DType::kF16 &&
      dtype != tensor::DType::kBF16) {
    return InvalidArgument(std::string("--kv-cache-dtype ") + tensor::DTypeName(dtype) +
                           " has no CPU kernel; use auto, float32, bfloat16 or float16");
  }
  kv_dtype_ = dtype;
  return Status::Ok();
}

CacheGroups DecoderModel::cache_groups() const {
  std::vector<int32_t> paged, state;
  for (int32_t l = 0; l < info_.num_layers; ++l) {
    (state_layer_[l] ? state : paged).push_back(l);
  }
  if (mtp_) {
    paged.push_back(info_.num_layers);
  }
  CacheGroups groups;
  if (!paged.empty()) {
    groups.push_back(PagedKvGroup(std::move(paged), info_.num_kv_heads, info_.head_dim, kv_dtype_));
  }
  if (!state.empty()) {
    groups.push_back(StateSlotGroup(std::move(state), state_floats_));
  }
  return groups;
}

void DecoderModel::Forward(const ForwardContext& ctx, KvCache& kv, ForwardOutput& out) {
  CheckContext(ctx, kv);
  const int64_t n = ctx.num_tokens(), dim = info_.hidden_size;
  const int64_t num_logits = static_cast<int64_t>(ctx.logits_indices.size());
  const int64_t local_vocab = w_.lm_head.out_features();
  tensor::DeviceArena& arena = *activations_;
  arena.Reset();
  const tensor::DType f32 = tensor::DType::kF32;
  const size_t step_bytes = 3 * arena.BytesFor({n, dim}, f32) +
                            arena.BytesFor({num_logits, dim}, f32) +
                            arena.BytesFor({num_logits, local_vocab}, f32) + LayerScratchBytes(n);
  const Status reserved = arena.Reserve(step_bytes);
  TANDEM_CHECK(reserved.ok()) << reserved.message();
  hidden_ = arena.AllocateOrDie({n, dim}, f32);
  const tensor::TensorView normed = arena.AllocateOrDie({n, dim}, f32);
  const tensor::TensorView delta = arena.AllocateOrDie({n, dim}, f32);
  w_.embedding.Forward(ctx.token_ids.data(), n, hidden_.f32());
  tp_.AllReduceSum(hidden_.f32(), n * dim);  // vocab-parallel: other ranks' rows were zeros
  for (size_t l = 0; l < w_.layers.size(); ++l) {
    LayerCache cache = kv.ForLayer(static_cast<int32_t>(l));
    w_.layers[l].Forward(ctx, tp_, cache, *stream_, hidden_, normed, delta, arena);
  }
  // Only the rows whose logits are wanted go through the final norm and lm_head.
  const tensor::TensorView last = arena.AllocateOrDie({num_logits, dim}, f32);
  const tensor::TensorView rows = tensor::HostView({num_logits}, tensor::DType::kI32,
                                                   const_cast<int32_t*>(ctx.logits_indices.data()));
  kernels::GatherRows(*stream_, hidden_, rows, last);
  w_.final_norm.Forward(*stream_, last, last);
  const tensor::TensorView local_logits = arena.AllocateOrDie({num_logits, local_vocab}, f32);
  w_.lm_head.Forward(last.f32(), local_logits.f32(), num_logits);
  GatherVocabLogits(tp_, local_logits.f32(), num_logits, info_.vocab_size, gathered_, out.logits);
  if (out.want_hidden) {
    FinalNormedHidden(&out.hidden);
  } else {
    out.hidden.clear();
  }
}

// The worker builds ctx; an inconsistent one is a bug there, not bad user input.
void DecoderModel::CheckContext(const ForwardContext& ctx, const KvCache& kv) const {
  const size_t n = ctx.token_ids.size();
  TANDEM_CHECK(ctx.positions.size() == n && ctx.slot_mapping.size() == n)
      << "ForwardContext: " << n << " tokens but " << ctx.positions.size() << " positions, "
      << ctx.slot_mapping.size() << " slots";
  TANDEM_CHECK(ctx.query_start_loc.size() == ctx.seq_lens.size() + 1 &&
               ctx.block_tables.size() == ctx.seq_lens.size())
      << "ForwardContext: " << ctx.seq_lens.size() << " seqs but " << ctx.query_start_loc.size()
      << " query_start_loc entries and " << ctx.block_tables.size() << " block tables";
  TANDEM_CHECK(ctx.query_start_loc.back() <= static_cast<int32_t>(n))
      << "ForwardContext: query_start_loc ends at " << ctx.query_start_loc.back() << " > " << n;
  TANDEM_CHECK(kv.groups == cache_groups() && kv.block_size == ctx.block_size)
      << "KvCache allocated for other cache groups (" << kv.groups.size() << " groups, "
      << NumLayersOf(kv.groups, CacheGroupKind::kPagedKv) << " paged and "
      << NumLayersOf(kv.groups, CacheGroupKind::kStateSlot)
      << " state layers) than this model's TP rank " << tp_.rank << " has, or block_size "
      << kv.block_size << " vs ctx's " << ctx.block_size;
  if (state_floats_ > 0) {
    TANDEM_CHECK(ctx.state_slots.size() == ctx.seq_lens.size())
        << "ForwardContext has " << ctx.state_slots.size() << " state slots for "
        << ctx.seq_lens.size() << " sequences";
    for (int32_t slot : ctx.state_slots) {
      TANDEM_CHECK(slot >= 0 && slot < kv.num_state_slots)
          << "state slot " << slot << " outside the cache's " << kv.num_state_slots;
    }
  }
  const int64_t num_slots = static_cast<int64_t>(kv.num_blocks) * kv.block_size;
  for (int64_t s : ctx.slot_mapping) {
    TANDEM_CHECK(s < num_slots) << "slot " << s << " beyond the KV cache's " << num_slots;
  }
  for (int32_t r : ctx.logits_indices) {
    TANDEM_CHECK(r >= 0 && r < static_cast<int32_t>(n)) << "logits index " << r << " of " << n;
  }
}

void DecoderModel::CommitSpeculativeStates(const ForwardContext& ctx,
                                           const std::vector<int32_t>& num_accepted, KvCache& kv) {
  if (state_floats_ == 0) {
    return;
  }
  for (size_t l = 0; l < w_.layers.size(); ++l) {
    if (!state_layer_[l]) {
      continue;
    }
    LayerCache cache = kv.ForLayer(static_cast<int32_t>(l));
    for (int32_t s = 0; s < ctx.num_seqs(); ++s) {
      if (s < static_cast<int32_t>(ctx.num_draft_tokens.size()) && ctx.num_draft_tokens[s] > 0) {
        w_.layers[l].mixer->CommitSpeculativeState(ctx, s, num_accepted[s], cache);
      }
    }
  }
}

size_t DecoderModel::LayerScratchBytes(int64_t num_tokens) const {
  size_t bytes = 0;
  for (const DecoderLayer& layer : w_.layers) {
    bytes = std::max(bytes, layer.scratch_bytes(num_tokens, *activations_));
  }
  return bytes;
}

void DecoderModel::DummyForward() {
  hidden_ = {};  // the layers reuse the activation arena
  for (DecoderLayer& layer : w_.layers) {
    layer.DummyForward(*stream_, info_.hidden_size, *activations_);
  }
}

bool DecoderModel::NeedsLockstep() const {
  for (const DecoderLayer& layer : w_.layers) {
    if (layer.ffn->expert_parallel()) {
      return true;
    }
  }
  return false;
}

}  // namespace tandem::model
