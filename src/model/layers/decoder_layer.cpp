#include "model/layers/decoder_layer.h"

#include <algorithm>

#include "core/check.h"
#include "kernels/device_ops.h"

namespace tandem::model {

void DecoderLayer::Forward(const ForwardContext& ctx, const TpContext& tp, LayerCache& cache,
                           kernels::Stream& stream, const tensor::TensorView& hidden,
                           const tensor::TensorView& normed, const tensor::TensorView& delta,
                           tensor::DeviceArena& scratch) {
  attn_norm.Forward(stream, hidden, normed);
  mixer->Forward(stream, normed, ctx, cache, delta, scratch);
  tp.AllReduceSum(delta.f32(), delta.numel());
  kernels::AddInPlace(stream, hidden, delta);
  ffn_norm.Forward(stream, hidden, normed);
  ffn->Forward(stream, normed, delta, scratch);
  tp.AllReduceSum(delta.f32(), delta.numel());
  kernels::AddInPlace(stream, hidden, delta);
}

void DecoderLayer::DummyForward(kernels::Stream& stream, int64_t hidden_size,
                                tensor::DeviceArena& scratch) {
  if (!ffn->expert_parallel()) {
    return;
  }
  scratch.Reset();
  const Status reserved = scratch.Reserve(ffn->scratch_bytes(0, scratch));
  TANDEM_CHECK(reserved.ok()) << reserved.message();
  const tensor::TensorView none = tensor::HostView({0, hidden_size}, tensor::DType::kF32, nullptr);
  ffn->Forward(stream, none, none, scratch);
}

size_t DecoderLayer::scratch_bytes(int64_t num_tokens, const tensor::DeviceArena& arena) const {
  return std::max(mixer->scratch_bytes(num_tokens, arena), ffn->scratch_bytes(num_tokens, arena));
}

size_t DecoderLayer::weight_bytes() const {
  return mixer->weight_bytes() + ffn->weight_bytes() +
         (attn_norm.weight.size() + ffn_norm.weight.size()) * sizeof(float);
}

}  // namespace tandem::model
