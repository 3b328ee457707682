// MtpModule: a model's multi-token-prediction head (Qwen3.5 / Qwen3-Next `mtp.*`), the drafter
// of MTP speculative decoding. At position p, from the target's final-normed hidden state h_p
// and the token x_{p+1} that follows p:
//   u  = fc(concat(enorm(embed(x_{p+1})), hnorm(h_p)))      fc [H, 2H], order [embedding, hidden]
//   u' = one full-attention MoE decoder layer at position p  (its own paged KV layer)
//   h' = norm(u');  logits = lm_head(h')                     (embedding and lm_head shared)
// h' also feeds the next draft step (its own output as the hidden state, x = the previous
// draft, position + 1), so k drafts come from k applications of the same layer.
// Reference: vLLM model_executor/models/qwen3_5_mtp.py / qwen3_next_mtp.py; QWEN35.md §5.1–5.2.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.h"

#include "model/forward_context.h"
#include "model/layers/decoder_layer.h"
#include "model/layers/embedding.h"
#include "model/layers/linear.h"
#include "model/layers/rms_norm.h"
#include "model/layers/tensor_parallel.h"

namespace tandem::model {

struct MtpWeights {
  Linear fc;           // [hidden, 2 · hidden]
  RmsNormLayer enorm;  // pre_fc_norm_embedding, [hidden] (zero-centred: loaded as 1 + w)
  RmsNormLayer hnorm;  // pre_fc_norm_hidden
  RmsNormLayer norm;   // final norm of the head
  DecoderLayer layer;  // mtp.layers.0: gated attention + MoE (+ shared expert)
};

class MtpModule {
 public:
  MtpModule(MtpWeights weights, int64_t hidden_size, TpContext tp = {});

  // One application over ctx's rows (ctx.token_ids unused): next_tokens [num_tokens] int32 =
  // x_{p+1} of each row; target_hidden [num_tokens, hidden] f32 = h_p (final-normed, or the
  // head's own h' for later draft steps); cache: the head's paged KV layer (ctx's slots).
  // Writes hidden_out [num_tokens, hidden] = h' and logits [ctx.logits_indices.size(), vocab]
  // from `lm_head` (vocab-parallel under TP, gathered). Runs on `stream` (the model's) with its
  // rows in `activations` (the model's arena: reset here, so nothing of an earlier step there
  // survives). Not thread-safe.
  void Forward(kernels::Stream& stream, tensor::DeviceArena& activations, const ForwardContext& ctx,
               const int32_t* next_tokens, const float* target_hidden, const Embedding& embedding,
               const Linear& lm_head, int64_t vocab_size, LayerCache& cache,
               std::vector<float>& hidden_out, std::vector<float>& logits);

  size_t weight_bytes() const;
  // No rows on this rank: enters the head's expert-parallel collectives only (resets
  // `activations`, as Forward).
  void DummyForward(kernels::Stream& stream, tensor::DeviceArena& activations);

 private:
  MtpWeights w_;
  int64_t hidden_size_;
  TpContext tp_;
  std::vector<float> gathered_;  // the vocab-parallel lm_head's gather (host: the logits' edge)
};

}  // namespace tandem::model
