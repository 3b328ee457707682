// SamplingParams: how one request's tokens are chosen. Crosses API server → engine → worker.
// Reference: vLLM SamplingParams (same names and defaults; OpenAI request fields map 1:1).
#pragma once

#include <msgpack.hpp>

#include <cstdint>
#include <vector>

namespace tandem::protocol {

struct SamplingParams {
  float temperature = 1.0f;         // 0 = greedy (argmax); > 0 scales logits by 1/temperature
  float top_p = 1.0f;               // nucleus mass in (0, 1]; 1 = off
  int32_t top_k = 0;                // keep the k most likely tokens; 0 or -1 = off
  float min_p = 0.0f;               // drop tokens with p < min_p * p_max; 0 = off
  float presence_penalty = 0.0f;    // OpenAI: subtract once per token already generated
  float frequency_penalty = 0.0f;   // OpenAI: subtract count(token in output) times
  float repetition_penalty = 1.0f;  // HF/CTRL: divide positive / multiply negative logits of
                                    // tokens seen in prompt or output; 1 = off
  bool has_seed = false;            // true: draw from a generator seeded with `seed` only
  uint64_t seed = 0;
  int32_t max_tokens = 16;              // generated tokens at most (after the prompt)
  int32_t min_tokens = 0;               // EOS / stop ids are ignored before this many tokens
  std::vector<int32_t> stop_token_ids;  // extra ids that end the request (kept in output)
  bool ignore_eos = false;              // true: EOS does not end the request
  int32_t logprobs = -1;                // -1 = none; k >= 0: sampled token's logprob + top-k
  // OpenAI logit_bias: logits[logit_bias_ids[i]] += logit_bias_values[i] (in [-100, 100]),
  // before penalties and temperature, greedy included (vLLM LogitBiasLogitsProcessor).
  std::vector<int32_t> logit_bias_ids;
  std::vector<float> logit_bias_values;  // parallel to logit_bias_ids
  // vLLM prompt_logprobs: -1 = none; k >= 0: each prompt token's logprob (from the position
  // before it) + the top-k there. Such a request skips prefix-cache hits (every prompt position
  // must be computed), as vLLM does.
  int32_t prompt_logprobs = -1;
  // vLLM allowed_token_ids: only these ids may be sampled (empty = all).
  std::vector<int32_t> allowed_token_ids;
  // vLLM bad_words, tokenized: a sequence's last id is banned when the output ends with the
  // rest of it (a one-id sequence is always banned). NoBadWordsLogitsProcessor.
  std::vector<std::vector<int32_t>> bad_words_token_ids;
  // Structured outputs: llama.cpp GBNF text that the generated text must stay a prefix of (the
  // API server compiles response_format, structured_outputs, guided_* and a forced tool_choice
  // into it; docs/design/structured-outputs.md); "" = unconstrained.
  std::string structured_grammar;
  // The constraint starts after this token has been generated (a reasoning model's end of
  // thinking, e.g. Qwen3's "</think>"); -1 = from the first generated token. Until then the
  // sequence cannot end (EOS and stop token ids are masked): it closes its reasoning, or runs
  // out of max_tokens ("length"), never "stop" with unconstrained content.
  int32_t structured_after_token_id = -1;
  // With structured_after_token_id: the output may open its think block with this token
  // ("<think>") as its first; any other first token is content, under the constraint from
  // there. -1 = the output starts inside the think block (the prompt opened it).
  int32_t structured_think_start_token_id = -1;
  MSGPACK_DEFINE(temperature, top_p, top_k, min_p, presence_penalty, frequency_penalty,
                 repetition_penalty, has_seed, seed, max_tokens, min_tokens, stop_token_ids,
                 ignore_eos, logprobs, logit_bias_ids, logit_bias_values, structured_grammar,
                 structured_after_token_id, structured_think_start_token_id, allowed_token_ids,
                 bad_words_token_ids, prompt_logprobs)
};

}  // namespace tandem::protocol
