// Logprobs of one generated position, from the model's raw logits.
//
// Reference: vLLM V1 Sampler.compute_logprobs / gather_logprobs with the default
// logprobs_mode "raw_logprobs": log_softmax of the logits as the model produced them, before
// penalties, temperature and top-k/top-p/min-p. (protocol::TokenLogprob's comment says
// "after temperature / penalties"; we follow vLLM's default, which is raw.)
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "protocol/engine_output.h"

namespace tandem::worker {

// logits: [vocab_size] f32 raw logits of one row. sampled_token_id in [0, vocab_size).
// num_top >= 0: how many most likely tokens to list in `top`, best first (ties: lower id first),
// clamped to vocab_size. Returns the sampled token's logprob and that list, natural log.
// `scratch` is reused storage. Thread: any.
protocol::PositionLogprobs ComputeRawLogprobs(std::span<const float> logits,
                                              int32_t sampled_token_id, int32_t num_top,
                                              std::vector<int32_t>& scratch);

}  // namespace tandem::worker
