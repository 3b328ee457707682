// DecoderModel: a decoder-only transformer assembled from layers/ — token embedding, a stack of
// DecoderLayer, final RMSNorm, lm_head — behind the Model interface. Architectures in arch/
// (Qwen3, Qwen3-MoE, Qwen2-MoE) read their config, load their weights into DecoderWeights and
// return a DecoderModel; the forward pass is the same for all of them.
#pragma once

#include <memory>
#include <vector>

#include "kernels/backend.h"
#include "model/layers/decoder_layer.h"
#include "model/layers/embedding.h"
#include "model/layers/linear.h"
#include "model/layers/rms_norm.h"
#include "model/layers/tensor_parallel.h"
#include "model/model.h"
#include "model/mtp_module.h"
#include "tensor/device_arena.h"
#include "tensor/tensor_view.h"

namespace tandem::model {

struct DecoderWeights {
  Embedding embedding;               // [vocab, hidden]
  std::vector<DecoderLayer> layers;  // num_layers; each mixer's cache is a paged KV layer or,
                                     // for a recurrent mixer, a state-slot layer
  RmsNormLayer final_norm;           // [hidden]
  Linear lm_head;  // [vocab slice (padded), hidden]; may share the embedding table (tied)
};

class DecoderModel : public Model, private DraftHead {
 public:
  // `info` must describe the full model (vocab, hidden, layers, heads, head_dim) and `weights`
  // hold TP rank tp.rank's shard of it; info's heads become this rank's and weight_bytes is
  // computed here from the weights. The forward pass runs on `backend`'s stream, its per-step
  // rows (residual stream, normed rows, deltas, lm_head rows and logits) in an activation arena
  // of that backend (docs/design/device-seam.md). Weights are host memory: the CPU backend only
  // (checked), until weights move into a device arena.
  DecoderModel(ModelInfo info, DecoderWeights weights, TpContext tp = {},
               kernels::Backend& backend = kernels::CpuBackend());

  const ModelInfo& info() const override { return info_; }

  // The final-normed hidden state of every row of the last Forward: [num_tokens, hidden] f32
  // (what an MTP head reads as h_p). Only valid until the next Forward, draft or dummy step
  // (which reuse the activation arena); empty after those.
  void FinalNormedHidden(std::vector<float>* out) const;
  // Attaches an MTP head: the KV cache gains one paged layer (the last) for it, and
  // draft_head() answers it.
  void AttachMtp(std::unique_ptr<MtpModule> mtp);
  DraftHead* draft_head() override { return mtp_ ? static_cast<DraftHead*>(this) : nullptr; }
  const Embedding& embedding() const { return w_.embedding; }
  const Linear& lm_head() const { return w_.lm_head; }
  // Paged KV for the attention layers (and the MTP head's layer, index info.num_layers, when
  // attached), a state slot for the linear-attention ones.
  CacheGroups cache_groups() const override;
  Status SetKvCacheDtype(tensor::DType dtype) override;
  // See Model::Forward. An inconsistent ctx/kv (sizes, slots beyond the cache) is a caller bug
  // and aborts via TANDEM_CHECK naming the mismatch.
  void Forward(const ForwardContext& ctx, KvCache& kv, ForwardOutput& out) override;
  using Model::Forward;
  void CommitSpeculativeStates(const ForwardContext& ctx, const std::vector<int32_t>& num_accepted,
                               KvCache& kv) override;
  void DummyForward() override;
  bool NeedsLockstep() const override;

 private:
  void CheckContext(const ForwardContext& ctx, const KvCache& kv) const;
  // The most layer scratch a step of `num_tokens` rows takes (device-seam.md §3.1).
  size_t LayerScratchBytes(int64_t num_tokens) const;
  // DraftHead: the MTP head over ctx's rows (model/mtp_module.h), its KV layer the last paged one.
  void Draft(const ForwardContext& ctx, const int32_t* next_tokens, const float* hidden,
             KvCache& kv, std::vector<float>& hidden_out, std::vector<float>& logits) override;

  ModelInfo info_;
  DecoderWeights w_;
  TpContext tp_;
  // Per layer: whether its cache is a state slot (a linear-attention layer) rather than paged KV.
  std::vector<bool> state_layer_;
  int64_t state_floats_ = 0;
  tensor::DType kv_dtype_ = tensor::DType::kF32;
  std::unique_ptr<MtpModule> mtp_;  // null: no MTP head
  std::unique_ptr<kernels::Stream> stream_;
  std::unique_ptr<tensor::DeviceArena> activations_;  // reset at the start of every Forward
  tensor::TensorView hidden_;    // the last Forward's residual stream [num_tokens, hidden]
  std::vector<float> gathered_;  // scratch: vocab-parallel lm_head
};

}  // namespace tandem::model
