#include "model/mtp_module.h"

#include <algorithm>

namespace tandem::model {

MtpModule::MtpModule(MtpWeights weights, int64_t hidden_size, TpContext tp)
    : w_(std::move(weights)), hidden_size_(hidden_size), tp_(tp) {}

size_t MtpModule::weight_bytes() const {
  return w_.fc.weight_bytes() + w_.layer.weight_bytes() +
         (w_.enorm.weight.size() + w_.hnorm.weight.size() + w_.norm.weight.size()) * sizeof(float);
}

void MtpModule::Forward(kernels::Stream& stream, const ForwardContext& ctx,
                        const int32_t* next_tokens, const float* target_hidden,
                        const Embedding& embedding, const Linear& lm_head, int64_t vocab_size,
                        LayerCache& cache, std::vector<float>& hidden_out,
                        std::vector<float>& logits) {
  const int64_t n = ctx.num_tokens(), h = hidden_size_;
  embedded_.resize(n * h);
  embedding.Forward(next_tokens, n, embedded_.data());
  tp_.AllReduceSum(embedded_.data(), n * h);  // vocab-parallel embedding
  // concat(enorm(e), hnorm(h_p)) per row, then fc.
  concat_.resize(n * 2 * h);
  normed_.resize(n * h);
  w_.enorm.Forward(embedded_.data(), normed_.data(), n);
  for (int64_t r = 0; r < n; ++r) {
    std::copy(normed_.begin() + r * h, normed_.begin() + (r + 1) * h, concat_.begin() + r * 2 * h);
  }
  w_.hnorm.Forward(target_hidden, normed_.data(), n);
  for (int64_t r = 0; r < n; ++r) {
    std::copy(normed_.begin() + r * h, normed_.begin() + (r + 1) * h,
              concat_.begin() + r * 2 * h + h);
  }
  hidden_out.resize(n * h);
  w_.fc.Forward(concat_.data(), hidden_out.data(), n);
  delta_.resize(n * h);
  const tensor::DType f32 = tensor::DType::kF32;
  w_.layer.Forward(ctx, tp_, cache, stream, tensor::HostView({n, h}, f32, hidden_out.data()),
                   tensor::HostView({n, h}, f32, normed_.data()),
                   tensor::HostView({n, h}, f32, delta_.data()));
  w_.norm.Forward(hidden_out.data(), hidden_out.data(), n);
  const int64_t num_logits = static_cast<int64_t>(ctx.logits_indices.size());
  rows_.resize(num_logits * h);
  for (int64_t i = 0; i < num_logits; ++i) {
    const int64_t row = ctx.logits_indices[i];
    std::copy(hidden_out.begin() + row * h, hidden_out.begin() + (row + 1) * h,
              rows_.begin() + i * h);
  }
  local_logits_.resize(num_logits * lm_head.out_features());
  lm_head.Forward(rows_.data(), local_logits_.data(), num_logits);
  GatherVocabLogits(tp_, local_logits_.data(), num_logits, vocab_size, gathered_, logits);
}

}  // namespace tandem::model
