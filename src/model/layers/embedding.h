// Embedding: token id → row of the [vocab, dim] table (F32, F16, BF16 or Q8_0, widened to f32 on
// lookup; shared with a tied lm_head).
// Vocab-parallel (vLLM VocabParallelEmbedding): a TP rank holds rows [begin, begin + count) of
// the table (zero-padded to `padded` rows); ids outside its slice give zero rows, and the caller
// all-reduces over the TP group so every rank ends with the full embedding.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/check.h"
#include "kernels/ops.h"
#include "model/layers/tensor_parallel.h"
#include "tensor/tensor.h"

namespace tandem::model {

class Embedding {
 public:
  Embedding() = default;
  // table: [vocab_size, dim], the whole vocabulary (TP = 1).
  Embedding(std::shared_ptr<const tensor::Tensor> table, int64_t vocab_size, int64_t dim)
      : Embedding(std::move(table), vocab_size, dim, LocalVocab{0, vocab_size, vocab_size}) {}
  // table: [slice.padded, dim], rows slice.begin … slice.begin + slice.count - 1 of the vocab.
  Embedding(std::shared_ptr<const tensor::Tensor> table, int64_t vocab_size, int64_t dim,
            LocalVocab slice)
      : table_(std::move(table)), vocab_size_(vocab_size), dim_(dim), slice_(slice) {
    TANDEM_CHECK(table_ != nullptr && table_->shape() == tensor::Shape({slice.padded, dim}))
        << "embedding table is "
        << (table_ ? tensor::ShapeToString(table_->shape()) : std::string("missing"))
        << "; expected [" << slice.padded << ", " << dim << "]";
  }

  // out: [num_tokens, dim] f32. A token id outside [0, vocab) is a caller bug (the engine
  // validates prompts against the vocab before scheduling).
  void Forward(const int32_t* token_ids, int64_t num_tokens, float* out) const {
    const size_t row_bytes = tensor::DTypeBytes(table_->dtype(), dim_);
    const auto* base = static_cast<const unsigned char*>(table_->raw());
    for (int64_t t = 0; t < num_tokens; ++t) {
      TANDEM_CHECK(token_ids[t] >= 0 && token_ids[t] < vocab_size_)
          << "token id " << token_ids[t] << " outside vocab of " << vocab_size_;
      const int64_t local = token_ids[t] - slice_.begin;
      if (local < 0 || local >= slice_.count) {
        std::memset(out + t * dim_, 0, dim_ * sizeof(float));
      } else {
        kernels::WidenToF32(base + local * row_bytes, table_->dtype(), out + t * dim_, dim_);
      }
    }
  }
  const std::shared_ptr<const tensor::Tensor>& table() const { return table_; }

 private:
  std::shared_ptr<const tensor::Tensor> table_;
  int64_t vocab_size_ = 0;
  int64_t dim_ = 0;
  LocalVocab slice_;
};

}  // namespace tandem::model
