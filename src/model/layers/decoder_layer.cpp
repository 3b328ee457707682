#include "model/layers/decoder_layer.h"

namespace tandem::model {
namespace {

void AddInPlace(float* x, const float* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += d[i];
}

}  // namespace

void DecoderLayer::Forward(const ForwardContext& ctx, const TpContext& tp, LayerCache& cache,
                           float* hidden, float* normed, float* delta, int64_t dim) {
  const int64_t n = ctx.num_tokens();
  attn_norm.Forward(hidden, normed, n);
  mixer->Forward(normed, ctx, cache, delta);
  tp.AllReduceSum(delta, n * dim);
  AddInPlace(hidden, delta, n * dim);
  ffn_norm.Forward(hidden, normed, n);
  if (sparse) {
    moe.Forward(normed, delta, n);
    if (has_shared_expert) shared_expert.AddForward(normed, delta, n);
  } else {
    mlp.Forward(normed, delta, n);
  }
  tp.AllReduceSum(delta, n * dim);
  AddInPlace(hidden, delta, n * dim);
}

size_t DecoderLayer::weight_bytes() const {
  size_t bytes =
      mixer->weight_bytes() + (attn_norm.weight.size() + ffn_norm.weight.size()) * sizeof(float);
  if (!sparse) return bytes + mlp.weight_bytes();
  bytes += moe.weight_bytes();
  if (has_shared_expert) bytes += shared_expert.weight_bytes();
  return bytes;
}

}  // namespace tandem::model
