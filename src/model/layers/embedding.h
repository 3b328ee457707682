// Embedding: token id → row of the [vocab, dim] f32 table (shared with a tied lm_head).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/check.h"

namespace tandem::model {

class Embedding {
 public:
  Embedding() = default;
  Embedding(std::shared_ptr<const std::vector<float>> table, int64_t vocab_size, int64_t dim)
      : table_(std::move(table)), vocab_size_(vocab_size), dim_(dim) {}

  // out: [num_tokens, dim]. A token id outside [0, vocab) is a caller bug (the engine
  // validates prompts against the vocab before scheduling).
  void Forward(const int32_t* token_ids, int64_t num_tokens, float* out) const {
    for (int64_t t = 0; t < num_tokens; ++t) {
      TANDEM_CHECK(token_ids[t] >= 0 && token_ids[t] < vocab_size_)
          << "token id " << token_ids[t] << " outside vocab of " << vocab_size_;
      std::memcpy(out + t * dim_, table_->data() + token_ids[t] * dim_, dim_ * sizeof(float));
    }
  }
  const std::shared_ptr<const std::vector<float>>& table() const { return table_; }

 private:
  std::shared_ptr<const std::vector<float>> table_;
  int64_t vocab_size_ = 0;
  int64_t dim_ = 0;
};

}  // namespace tandem::model
