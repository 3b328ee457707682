#include "worker/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"
#include "worker/logprobs.h"
#include "worker/penalties.h"
#include "worker/structured_output.h"

namespace tandem::worker {

int32_t GreedyArgmax(std::span<const float> logits) {
  int32_t best = 0;
  float best_logit = -std::numeric_limits<float>::infinity();
  bool found = false;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] > best_logit || (!found && logits[i] == best_logit)) {
      best = static_cast<int32_t>(i);
      best_logit = logits[i];
      found = true;
    }
  }
  return best;
}

Sampler::Sampler(int32_t vocab_size, int32_t eos_token_id)
    : vocab_size_(vocab_size), eos_token_id_(eos_token_id) {
  TANDEM_CHECK(vocab_size > 0) << "Sampler needs a positive vocabulary size, got " << vocab_size;
}

std::vector<SampledToken> Sampler::Sample(std::span<const float> logits,
                                          std::span<const SamplingRow> rows) {
  TANDEM_CHECK(logits.size() == rows.size() * static_cast<size_t>(vocab_size_))
      << "sampler got " << logits.size() << " logits for " << rows.size() << " rows of vocabulary "
      << vocab_size_ << "; expected rows × vocabulary";
  std::vector<SampledToken> out;
  out.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    out.push_back(SampleRow(logits.subspan(i * vocab_size_, vocab_size_), rows[i]));
  }
  return out;
}

void Sampler::Process(std::span<const float> logits, const SamplingRow& row) {
  TANDEM_CHECK(row.params != nullptr && row.generator != nullptr)
      << "SamplingRow without sampling params or generator";
  TANDEM_CHECK(static_cast<int32_t>(logits.size()) == vocab_size_)
      << "logits row has " << logits.size() << " entries; expected vocabulary " << vocab_size_;
  const protocol::SamplingParams& params = *row.params;
  if (row.allowed_tokens.empty()) {
    processed_.assign(logits.begin(), logits.end());
  } else {
    processed_.resize(logits.size());
    CopyMaskedLogits(logits, row.allowed_tokens, processed_);
  }
  ApplyMinTokens(params, static_cast<int32_t>(row.output_token_ids.size()), eos_token_id_,
                 processed_);
  for (size_t i = 0; i < params.logit_bias_ids.size(); ++i) {
    const int32_t id = params.logit_bias_ids[i];
    if (id >= 0 && id < vocab_size_) processed_[id] += params.logit_bias_values[i];
  }
  if (!params.allowed_token_ids.empty()) ApplyAllowedTokenIds(params.allowed_token_ids);
  if (!params.bad_words_token_ids.empty()) {
    ApplyBadWords(params.bad_words_token_ids, row.output_token_ids);
  }
  if (HasPenalties(params)) {
    ApplyPenalties(params, row.prompt_token_ids, row.output_token_ids, processed_, scratch_);
  }
}

void Sampler::ApplyAllowedTokenIds(std::span<const int32_t> allowed) {
  // Keep the allowed logits aside, mask everything, put them back.
  scratch_values_.clear();
  for (int32_t id : allowed) {
    scratch_values_.push_back(
        id >= 0 && id < vocab_size_ ? processed_[id] : -std::numeric_limits<float>::infinity());
  }
  std::fill(processed_.begin(), processed_.end(), -std::numeric_limits<float>::infinity());
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (allowed[i] >= 0 && allowed[i] < vocab_size_) processed_[allowed[i]] = scratch_values_[i];
  }
}

void Sampler::ApplyBadWords(const std::vector<std::vector<int32_t>>& bad_words,
                            std::span<const int32_t> output_token_ids) {
  for (const std::vector<int32_t>& word : bad_words) {
    if (word.empty()) continue;
    const size_t prefix = word.size() - 1;
    if (prefix > output_token_ids.size()) continue;
    if (std::equal(word.begin(), word.end() - 1, output_token_ids.end() - prefix)) {
      const int32_t banned = word.back();
      if (banned >= 0 && banned < vocab_size_) {
        processed_[banned] = -std::numeric_limits<float>::infinity();
      }
    }
  }
}

SampledToken Sampler::Finish(std::span<const float> logits, const SamplingRow& row,
                             int32_t token_id) {
  SampledToken out;
  out.token_id = token_id;
  if (row.params->logprobs >= 0) {
    out.has_logprobs = true;
    out.logprobs = ComputeRawLogprobs(logits, out.token_id, row.params->logprobs, scratch_);
  }
  return out;
}

SampledToken Sampler::SampleRow(std::span<const float> logits, const SamplingRow& row) {
  Process(logits, row);
  const protocol::SamplingParams& params = *row.params;
  // One draw per generated token, whatever the mode (request_generator.h invariant).
  const double uniform = row.generator->NextUniform();
  int32_t token_id = -1;
  if (params.temperature < kGreedyTemperature) {
    token_id = GreedyArgmax(processed_);
  } else if (BuildDistribution(params)) {
    token_id = InverseCdf(uniform, /*excluded=*/-1);
  } else {
    token_id = GreedyArgmax(processed_);  // every logit was -inf or NaN
  }
  return Finish(logits, row, token_id);
}

SampledToken Sampler::VerifyRow(std::span<const float> logits, const SamplingRow& row,
                                int32_t draft_token, bool* accepted) {
  Process(logits, row);
  const protocol::SamplingParams& params = *row.params;
  const double uniform = row.generator->NextUniform();  // this position's one draw
  int32_t token_id = -1;
  if (params.temperature < kGreedyTemperature) {
    token_id = GreedyArgmax(processed_);
    *accepted = token_id == draft_token;
    return Finish(logits, row, token_id);
  }
  if (!BuildDistribution(params)) {
    *accepted = false;
    return Finish(logits, row, GreedyArgmax(processed_));
  }
  double total = 0.0;
  double p_draft = 0.0;
  for (int32_t id : candidates_) {
    total += probs_[id];
    if (id == draft_token) p_draft = probs_[id];
  }
  p_draft /= total;
  // Accept with probability P(draft); else draw from P without the draft, renormalised, with
  // the rest of the same uniform, which is uniform on [0, 1) given the rejection.
  *accepted = uniform < p_draft;
  if (*accepted) return Finish(logits, row, draft_token);
  const double rest = p_draft < 1.0 ? (uniform - p_draft) / (1.0 - p_draft) : 0.0;
  token_id = InverseCdf(std::clamp(rest, 0.0, std::nextafter(1.0, 0.0)), draft_token);
  return Finish(logits, row, token_id);
}

bool Sampler::BuildDistribution(const protocol::SamplingParams& params) {
  ComputeCandidates(params);
  if (candidates_.empty()) return false;
  ApplyTopK(params.top_k);
  ApplyTopP(params.top_p);
  return true;
}

int32_t Sampler::InverseCdf(double uniform, int32_t excluded) {
  double total = 0.0;
  for (int32_t token_id : candidates_) {
    if (token_id != excluded) total += probs_[token_id];
  }
  if (!(total > 0.0)) return excluded >= 0 ? excluded : candidates_.front();
  const double target = uniform * total;
  double cumulative = 0.0;
  int32_t last = -1;
  for (int32_t token_id : candidates_) {
    if (token_id == excluded) continue;
    cumulative += probs_[token_id];
    last = token_id;
    if (cumulative > target) return token_id;
  }
  return last;  // rounding left target at the very top
}

void Sampler::ComputeCandidates(const protocol::SamplingParams& params) {
  // vLLM divides the f32 logits by the temperature in f32; so do we.
  float max_logit = -std::numeric_limits<float>::infinity();
  for (float& v : processed_) {
    v /= params.temperature;
    if (v > max_logit) max_logit = v;
  }
  probs_.assign(vocab_size_, 0.0);
  candidates_.clear();
  candidates_sorted_ = false;
  if (!std::isfinite(max_logit)) return;
  // probs_ are softmax × (1 / p_max), so min_p's "p < min_p · p_max" is "probs_ < min_p".
  const double min_p = params.min_p;
  for (int32_t i = 0; i < vocab_size_; ++i) {
    const float v = processed_[i];
    if (!(v > -std::numeric_limits<float>::infinity())) continue;  // -inf or NaN
    const double p = std::exp(static_cast<double>(v) - max_logit);
    if (p <= 0.0 || p < min_p) continue;
    probs_[i] = p;
    candidates_.push_back(i);
  }
}

void Sampler::ApplyTopK(int32_t top_k) {
  if (top_k <= 0 || static_cast<size_t>(top_k) >= candidates_.size()) return;
  auto better = [this](int32_t a, int32_t b) {
    return probs_[a] > probs_[b] || (probs_[a] == probs_[b] && a < b);
  };
  std::partial_sort(candidates_.begin(), candidates_.begin() + top_k, candidates_.end(), better);
  // vLLM masks logits < the k-th largest, so tokens tied with the k-th stay. Tied tokens left
  // in the tail have larger ids than the tied ones kept, so appending them keeps best-first.
  const double kth = probs_[candidates_[top_k - 1]];
  auto tail_begin = candidates_.begin() + top_k;
  auto ties_end =
      std::partition(tail_begin, candidates_.end(), [&](int32_t id) { return probs_[id] == kth; });
  std::sort(tail_begin, ties_end);
  candidates_.erase(ties_end, candidates_.end());
  candidates_sorted_ = true;
}

void Sampler::ApplyTopP(float top_p) {
  if (top_p >= 1.0f) return;
  if (!candidates_sorted_) {
    std::sort(candidates_.begin(), candidates_.end(), [this](int32_t a, int32_t b) {
      return probs_[a] > probs_[b] || (probs_[a] == probs_[b] && a < b);
    });
    candidates_sorted_ = true;
  }
  double total = 0.0;
  for (int32_t token_id : candidates_) total += probs_[token_id];
  // vLLM: ascending cumulative mass <= 1 - p is dropped, the most likely token always kept.
  // Walking best-first, that mass at token j is the tail sum from j to the end.
  const double drop_mass = static_cast<double>(1.0f - top_p) * total;
  size_t keep = candidates_.size();
  double tail = 0.0;
  while (keep > 1) {
    tail += probs_[candidates_[keep - 1]];
    if (tail > drop_mass) break;
    --keep;
  }
  candidates_.resize(keep);
}

}  // namespace tandem::worker
