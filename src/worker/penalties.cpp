#include "worker/penalties.h"

#include <algorithm>
#include <limits>

#include "core/check.h"

namespace tandem::worker {
namespace {

void CheckTokenId(int32_t token_id, size_t vocab_size) {
  TANDEM_CHECK(token_id >= 0 && static_cast<size_t>(token_id) < vocab_size)
      << "token id " << token_id << " in a request's history is outside the vocabulary [0, "
      << vocab_size << "); the engine and the model disagree on the vocabulary";
}

void ApplyRepetitionPenalty(float penalty, std::span<const int32_t> prompt_token_ids,
                            std::span<const int32_t> output_token_ids, std::span<float> logits,
                            std::vector<int32_t>& seen) {
  seen.assign(prompt_token_ids.begin(), prompt_token_ids.end());
  seen.insert(seen.end(), output_token_ids.begin(), output_token_ids.end());
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  for (int32_t token_id : seen) {
    CheckTokenId(token_id, logits.size());
    float& logit = logits[token_id];
    logit = logit > 0 ? logit / penalty : logit * penalty;
  }
}

void ApplyOutputPenalties(float frequency_penalty, float presence_penalty,
                          std::span<const int32_t> output_token_ids, std::span<float> logits,
                          std::vector<int32_t>& sorted) {
  sorted.assign(output_token_ids.begin(), output_token_ids.end());
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    const int32_t token_id = sorted[i];
    CheckTokenId(token_id, logits.size());
    const float count = static_cast<float>(j - i);
    logits[token_id] -= frequency_penalty * count;
    logits[token_id] -= presence_penalty;
    i = j;
  }
}

}  // namespace

bool HasPenalties(const protocol::SamplingParams& params) {
  return params.repetition_penalty != 1.0f || params.frequency_penalty != 0.0f ||
         params.presence_penalty != 0.0f;
}

void ApplyPenalties(const protocol::SamplingParams& params,
                    std::span<const int32_t> prompt_token_ids,
                    std::span<const int32_t> output_token_ids, std::span<float> logits,
                    std::vector<int32_t>& scratch) {
  if (params.repetition_penalty != 1.0f) {
    ApplyRepetitionPenalty(params.repetition_penalty, prompt_token_ids, output_token_ids, logits,
                           scratch);
  }
  if (params.frequency_penalty != 0.0f || params.presence_penalty != 0.0f) {
    ApplyOutputPenalties(params.frequency_penalty, params.presence_penalty, output_token_ids,
                         logits, scratch);
  }
}

void ApplyMinTokens(const protocol::SamplingParams& params, int32_t num_output_tokens,
                    int32_t eos_token_id, std::span<float> logits) {
  if (num_output_tokens >= params.min_tokens) return;
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  for (int32_t token_id : params.stop_token_ids) {
    if (token_id >= 0 && static_cast<size_t>(token_id) < logits.size()) {
      logits[token_id] = kMinusInf;
    }
  }
  if (eos_token_id >= 0 && !params.ignore_eos &&
      static_cast<size_t>(eos_token_id) < logits.size()) {
    logits[eos_token_id] = kMinusInf;
  }
}

}  // namespace tandem::worker
