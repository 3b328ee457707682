#include "worker/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/check.h"

namespace tandem::worker {
namespace {

// log(sum(exp(logits))) in double, stable against large logits.
double LogSumExp(std::span<const float> logits) {
  float max_logit = -std::numeric_limits<float>::infinity();
  for (float v : logits) max_logit = std::max(max_logit, v);
  double sum = 0.0;
  for (float v : logits) sum += std::exp(static_cast<double>(v) - max_logit);
  return max_logit + std::log(sum);
}

}  // namespace

protocol::PositionLogprobs ComputeRawLogprobs(std::span<const float> logits,
                                              int32_t sampled_token_id, int32_t num_top,
                                              std::vector<int32_t>& scratch) {
  const int32_t vocab_size = static_cast<int32_t>(logits.size());
  TANDEM_CHECK(sampled_token_id >= 0 && sampled_token_id < vocab_size)
      << "sampled token id " << sampled_token_id << " outside vocabulary of " << vocab_size;
  const double log_z = LogSumExp(logits);
  auto logprob_of = [&](int32_t token_id) {
    return static_cast<float>(static_cast<double>(logits[token_id]) - log_z);
  };

  protocol::PositionLogprobs out;
  out.sampled = {sampled_token_id, logprob_of(sampled_token_id)};
  const int32_t k = std::clamp(num_top, 0, vocab_size);
  if (k == 0) return out;
  scratch.resize(vocab_size);
  std::iota(scratch.begin(), scratch.end(), 0);
  auto better = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  std::partial_sort(scratch.begin(), scratch.begin() + k, scratch.end(), better);
  out.top.reserve(k);
  for (int32_t i = 0; i < k; ++i) out.top.push_back({scratch[i], logprob_of(scratch[i])});
  return out;
}

}  // namespace tandem::worker
