// TokenMixer: the half of a decoder layer that mixes information across positions — softmax
// attention over a paged KV cache today; gated attention and Gated DeltaNet (a recurrent state
// per sequence) for hybrid models (docs/design/hybrid-and-speculative.md §1). The other half,
// the feed-forward, works on each token alone.
#pragma once

#include <cstddef>

#include "kernels/backend.h"
#include "model/forward_context.h"
#include "model/kv_cache.h"
#include "tensor/device_arena.h"
#include "tensor/dtype.h"
#include "tensor/tensor_view.h"

namespace tandem::model {

class TokenMixer {
 public:
  virtual ~TokenMixer() = default;

  // x: [num_tokens, hidden] f32, the normed input rows of ctx's flat batch; out: [num_tokens,
  // hidden] f32, this TP rank's partial output (the caller all-reduces it over TP); both on
  // `stream`'s device. Writes this step's state into `cache`. Scratch comes from `scratch` (the
  // model's activation arena) inside an ArenaScope, at most scratch_bytes(num_tokens, scratch);
  // the caller reserved that much. Not thread-safe.
  virtual void Forward(kernels::Stream& stream, const tensor::TensorView& x,
                       const ForwardContext& ctx, LayerCache& cache, const tensor::TensorView& out,
                       tensor::DeviceArena& scratch) = 0;
  // The most bytes Forward takes from `arena` for a step of `num_tokens` rows (alignment
  // padding included; docs/design/device-seam.md §3.1).
  virtual size_t scratch_bytes(int64_t num_tokens, const tensor::DeviceArena& arena) const = 0;

  // Bytes of this rank's weights.
  virtual size_t weight_bytes() const = 0;

  // f32 values of one sequence's recurrent state (a state-slot layer), or 0 for a layer whose
  // cache is paged KV.
  virtual int64_t state_floats() const { return 0; }

  // Recurrent layers: after a Forward whose ctx had drafts, sets sequence `seq`'s state to the
  // one after its last token and `num_accepted` drafts (see ForwardContext::num_draft_tokens).
  virtual void CommitSpeculativeState(const ForwardContext& ctx, int32_t seq, int32_t num_accepted,
                                      LayerCache& cache) {}
};

}  // namespace tandem::model
