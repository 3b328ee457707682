#include "model/layers/decoder_layer.h"

#include "kernels/device_ops.h"

namespace tandem::model {

void DecoderLayer::Forward(const ForwardContext& ctx, const TpContext& tp, LayerCache& cache,
                           kernels::Stream& stream, const tensor::TensorView& hidden,
                           const tensor::TensorView& normed, const tensor::TensorView& delta) {
  const int64_t n = ctx.num_tokens();
  attn_norm.Forward(stream, hidden, normed);
  mixer->Forward(normed.f32(), ctx, cache, delta.f32());
  tp.AllReduceSum(delta.f32(), delta.numel());
  kernels::AddInPlace(stream, hidden, delta);
  ffn_norm.Forward(stream, hidden, normed);
  ffn->Forward(normed.f32(), delta.f32(), n);
  tp.AllReduceSum(delta.f32(), delta.numel());
  kernels::AddInPlace(stream, hidden, delta);
}

size_t DecoderLayer::weight_bytes() const {
  return mixer->weight_bytes() + ffn->weight_bytes() +
         (attn_norm.weight.size() + ffn_norm.weight.size()) * sizeof(float);
}

}  // namespace tandem::model
