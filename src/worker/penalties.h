// Logit processors that change greedy choices too: min_tokens masking and the three
// repetition-style penalties. Applied to one row of logits, in place, before temperature.
//
// Reference: vLLM V1 vllm/v1/sample/ops/penalties.py (apply_all_penalties) and
// vllm/model_executor/layers/utils.py (apply_penalties); MinTokensLogitsProcessor in
// vllm/v1/sample/logits_processor. Same formulas, one row at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "protocol/sampling_params.h"

namespace tandem::worker {

// Applies, in this order (vLLM's):
//   repetition: for each token seen in prompt or output, logit > 0 → logit / rp, else logit * rp;
//   frequency:  logit[t] -= frequency_penalty * count(t in output);
//   presence:   logit[t] -= presence_penalty * [count(t in output) > 0].
// logits: [vocab_size] f32, modified in place. Token ids must lie in [0, vocab_size)
// (checked: an id outside is a broken engine/worker invariant). `scratch` is reused storage.
// Thread: any; touches only its arguments.
void ApplyPenalties(const protocol::SamplingParams& params,
                    std::span<const int32_t> prompt_token_ids,
                    std::span<const int32_t> output_token_ids, std::span<float> logits,
                    std::vector<int32_t>& scratch);

// While fewer than params.min_tokens tokens were generated, sets the logits of
// params.stop_token_ids and of `eos_token_id` (when >= 0 and !params.ignore_eos) to -inf,
// so the request cannot stop early. logits: [vocab_size] f32, in place.
void ApplyMinTokens(const protocol::SamplingParams& params, int32_t num_output_tokens,
                    int32_t eos_token_id, std::span<float> logits);

// True when ApplyPenalties would change something (all three penalties at their neutral value
// otherwise), so the caller can skip the token scans.
bool HasPenalties(const protocol::SamplingParams& params);

}  // namespace tandem::worker
