// NgramProposer: draft tokens by prompt lookup (speculative decoding's "ngram" method). Text
// often repeats itself — names, code, quoted passages, a story's refrains — so the tokens that
// followed an earlier occurrence of the sequence's last n tokens are a cheap guess of what
// comes next. The target model verifies the guess; a wrong one costs only compute.
//
// Rule: for n from max_n down to min_n, find the most recent earlier occurrence of the last n
// tokens (one that is followed by at least one token); the drafts are up to k tokens that
// followed it. No occurrence for any n: no drafts.
// Reference: vLLM v1/spec_decode/ngram_proposer.py (prompt_lookup_min/max); llama.cpp
// common/ngram-cache (lookup decoding). Deviation: vLLM takes the first occurrence; we take the
// most recent, the nearer context.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "worker/proposer.h"

namespace tandem::worker {

class NgramProposer : public Proposer {
 public:
  // 1 <= min_n <= max_n; k >= 1 drafts at most.
  NgramProposer(int32_t min_n, int32_t max_n, int32_t k);

  // Drafts for the sequence `token_ids` (prompt + output so far): 0..k ids. O(len · max_n).
  // Thread-safe (no state).
  std::vector<int32_t> Propose(std::span<const int32_t> token_ids) const;
  // Proposer: each request that gained tokens drafts from its whole sequence.
  std::vector<std::vector<int32_t>> Propose(const StepInputs& inputs,
                                            const std::vector<std::vector<SampledToken>>& sampled,
                                            const model::ForwardOutput& target) override;

 private:
  int32_t min_n_;
  int32_t max_n_;
  int32_t k_;
};

}  // namespace tandem::worker
