#include "model/mtp_module.h"

#include <algorithm>

#include "core/check.h"
#include "kernels/device_ops.h"

namespace tandem::model {

MtpModule::MtpModule(MtpWeights weights, int64_t hidden_size, TpContext tp)
    : w_(std::move(weights)), hidden_size_(hidden_size), tp_(tp) {}

size_t MtpModule::weight_bytes() const {
  return w_.fc.weight_bytes() + w_.layer.weight_bytes() +
         (w_.enorm.weight.size() + w_.hnorm.weight.size() + w_.norm.weight.size()) * sizeof(float);
}

void MtpModule::Forward(kernels::Stream& stream, tensor::DeviceArena& activations,
                        const ForwardContext& ctx, const int32_t* next_tokens,
                        const float* target_hidden, const Embedding& embedding,
                        const Linear& lm_head, int64_t vocab_size, LayerCache& cache,
                        std::vector<float>& hidden_out, std::vector<float>& logits) {
  const int64_t n = ctx.num_tokens(), h = hidden_size_;
  const int64_t num_logits = static_cast<int64_t>(ctx.logits_indices.size());
  const int64_t local_vocab = lm_head.out_features();
  const tensor::DType f32 = tensor::DType::kF32;
  tensor::DeviceArena& arena = activations;
  arena.Reset();
  const Status reserved = arena.Reserve(
      3 * arena.BytesFor({n, h}, f32) + arena.BytesFor({n, 2 * h}, f32) +
      arena.BytesFor({num_logits, h}, f32) + arena.BytesFor({num_logits, local_vocab}, f32) +
      w_.layer.scratch_bytes(n, arena));
  TANDEM_CHECK(reserved.ok()) << reserved.message();
  const tensor::TensorView embedded = arena.AllocateOrDie({n, h}, f32);
  const tensor::TensorView normed = arena.AllocateOrDie({n, h}, f32);
  const tensor::TensorView concat = arena.AllocateOrDie({n, 2 * h}, f32);
  const tensor::TensorView delta = arena.AllocateOrDie({n, h}, f32);
  // Token ids and h_p arrive from the host; h' and the logits go back to it (the draft's edges).
  kernels::CheckCpuOp("MTP head (host edges)", stream, {&embedded, &concat});
  embedding.Forward(next_tokens, n, embedded.f32());
  tp_.AllReduceSum(embedded.f32(), n * h);  // vocab-parallel embedding
  // concat(enorm(e), hnorm(h_p)) per row, then fc.
  float* halves = concat.f32();  // per row [enorm(e) | hnorm(h_p)]
  w_.enorm.Forward(stream, embedded, normed);
  for (int64_t r = 0; r < n; ++r) {
    std::copy(normed.f32() + r * h, normed.f32() + (r + 1) * h, halves + r * 2 * h);
  }
  w_.hnorm.Forward(stream, tensor::HostView({n, h}, f32, const_cast<float*>(target_hidden)),
                   normed);
  for (int64_t r = 0; r < n; ++r) {
    std::copy(normed.f32() + r * h, normed.f32() + (r + 1) * h, halves + r * 2 * h + h);
  }
  hidden_out.resize(n * h);
  const tensor::TensorView hidden = tensor::HostView({n, h}, f32, hidden_out.data());
  w_.fc.Forward(stream, concat, hidden);
  w_.layer.Forward(ctx, tp_, cache, stream, hidden, normed, delta, arena);
  w_.norm.Forward(stream, hidden, hidden);
  const tensor::TensorView rows = arena.AllocateOrDie({num_logits, h}, f32);
  kernels::GatherRows(stream, hidden,
                      tensor::HostView({num_logits}, tensor::DType::kI32,
                                       const_cast<int32_t*>(ctx.logits_indices.data())),
                      rows);
  const tensor::TensorView local_logits = arena.AllocateOrDie({num_logits, local_vocab}, f32);
  lm_head.Forward(stream, rows, local_logits);
  GatherVocabLogits(tp_, local_logits.f32(), num_logits, vocab_size, gathered_, logits);
}

void MtpModule::DummyForward(kernels::Stream& stream, tensor::DeviceArena& activations) {
  w_.layer.DummyForward(stream, hidden_size_, activations);
}

}  // namespace tandem::model
