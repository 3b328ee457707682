#include "worker/ngram_proposer.h"

#include <algorithm>

#include "core/check.h"

namespace tandem::worker {

NgramProposer::NgramProposer(int32_t min_n, int32_t max_n, int32_t k)
    : min_n_(min_n), max_n_(max_n), k_(k) {
  TANDEM_CHECK(min_n >= 1 && max_n >= min_n && k >= 1)
      << "NgramProposer(min_n " << min_n << ", max_n " << max_n << ", k " << k << ")";
}

std::vector<int32_t> NgramProposer::Propose(std::span<const int32_t> token_ids) const {
  const int64_t len = static_cast<int64_t>(token_ids.size());
  for (int64_t n = std::min<int64_t>(max_n_, len - 1); n >= min_n_; --n) {
    const std::span<const int32_t> suffix = token_ids.subspan(len - n);
    // Earlier occurrences start at j <= len - n - 1, so a token follows each.
    for (int64_t j = len - n - 1; j >= 0; --j) {
      if (!std::equal(suffix.begin(), suffix.end(), token_ids.begin() + j)) {
        continue;
      }
      const int64_t first = j + n;
      const int64_t last = std::min(len, first + k_);
      return std::vector<int32_t>(token_ids.begin() + first, token_ids.begin() + last);
    }
  }
  return {};
}

std::vector<std::vector<int32_t>> NgramProposer::Propose(
    const StepInputs& inputs, const std::vector<std::vector<SampledToken>>& sampled,
    const model::ForwardOutput& /*target*/) {
  std::vector<std::vector<int32_t>> drafts(inputs.requests.size());
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    if (!sampled[i].empty()) {
      drafts[i] = Propose(inputs.requests[i]->token_ids);
    }
  }
  return drafts;
}

}  // namespace tandem::worker
