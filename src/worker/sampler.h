// Sampler: picks the next token of every sampling sequence from its row of logits.
//
// Reference: vLLM V1 vllm/v1/sample/sampler.py (Sampler.forward / sample),
// ops/penalties.py, ops/topk_topp_sampler.py, MinPLogitsProcessor. Per row, in order:
//   1. logprobs (if requested) from the raw logits (logprobs.h);
//   2. structured-output mask (SamplingRow::allowed_tokens), min_tokens masking, logit_bias,
//      allowed_token_ids, bad_words, then repetition / frequency / presence penalties
//      (penalties.h);
//   3. temperature < 1e-5: greedy argmax (lowest id on ties) — done;
//   4. logits / temperature; min_p (drop p < min_p · p_max); top_k (keep logits >= the k-th
//      largest, ties kept); top_p (drop the least likely tokens whose cumulative mass is
//      <= 1 - top_p, always keeping the most likely);
//   5. sample by inverse CDF with one uniform draw from the request's generator.
// Deviations from vLLM: vLLM draws exponentials for the whole vocabulary (probs / q argmax);
// we use one uniform per token, so a request's stream does not depend on the vocabulary or the
// batch. The inverse CDF walks the kept tokens best first (prob desc, id asc) when top-k or
// top-p sorted them, else in id order (no sort of a 150k vocabulary on the common path).
// Invariant: every row draws exactly one number from its generator, greedy rows included
// (request_generator.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "protocol/engine_output.h"
#include "protocol/sampling_params.h"
#include "worker/request_generator.h"

namespace tandem::worker {

// Everything the sampler needs about one sequence besides its logits.
struct SamplingRow {
  const protocol::SamplingParams* params = nullptr;
  std::span<const int32_t> prompt_token_ids;  // the prompt (repetition penalty)
  std::span<const int32_t> output_token_ids;  // tokens generated so far (all penalties)
  RequestGenerator* generator = nullptr;      // the request's own stream; one draw per call
  // Structured outputs: bit id set = token id allowed ([ceil(vocab/32)] words); empty = all.
  // Masked tokens get -inf before every other step (the logprobs of step 1 use the raw row:
  // callers that want masked logprobs mask the row itself, as the model runner does).
  std::span<const uint32_t> allowed_tokens;
};

struct SampledToken {
  int32_t token_id = -1;
  bool has_logprobs = false;            // params->logprobs >= 0
  protocol::PositionLogprobs logprobs;  // filled when has_logprobs
};

class Sampler {
 public:
  // eos_token_id: masked during min_tokens (unless ignore_eos); -1 = unknown, not masked.
  explicit Sampler(int32_t vocab_size, int32_t eos_token_id = -1);

  // logits: [rows.size(), vocab_size] f32 row-major; row i belongs to rows[i].
  // Returns one SampledToken per row. Each row's generator advances by exactly one draw.
  // Thread: one caller at a time (uses member scratch buffers).
  std::vector<SampledToken> Sample(std::span<const float> logits,
                                   std::span<const SamplingRow> rows);

  // One row: logits [vocab_size] f32.
  SampledToken SampleRow(std::span<const float> logits, const SamplingRow& row);

  // Speculative decoding: verifies `draft_token` at one position with the row's one draw.
  // Greedy rows accept it iff it is the argmax, and return the argmax either way. Sampled rows
  // accept it with probability P(draft) — P the row's distribution after penalties,
  // temperature, min_p, top_k, top_p — and on rejection return a token drawn from P without the
  // draft, renormalised, with the rest of the same draw; so the returned token is distributed as
  // P whatever the draft (Leviathan et al. 2023, "Fast Inference from Transformers via
  // Speculative Decoding", for a drafter without probabilities; vLLM rejection_sampler's ngram
  // path). Sets *accepted. Logprobs as SampleRow.
  SampledToken VerifyRow(std::span<const float> logits, const SamplingRow& row, int32_t draft_token,
                         bool* accepted);

  void set_eos_token_id(int32_t eos_token_id) { eos_token_id_ = eos_token_id; }
  int32_t vocab_size() const { return vocab_size_; }

  // Below the temperature that counts as greedy (vLLM _SAMPLING_EPS).
  static constexpr float kGreedyTemperature = 1e-5f;

 private:
  // Steps 1-2 into processed_.
  void Process(std::span<const float> logits, const SamplingRow& row);
  // allowed_token_ids: every other id's logit becomes -inf.
  void ApplyAllowedTokenIds(std::span<const int32_t> allowed);
  // bad_words: -inf for each word's last id when the output ends with the rest of the word.
  void ApplyBadWords(const std::vector<std::vector<int32_t>>& bad_words,
                     std::span<const int32_t> output_token_ids);
  // The SampledToken of `token_id` with its logprobs (step 1) when requested.
  SampledToken Finish(std::span<const float> logits, const SamplingRow& row, int32_t token_id);
  // Step 4 on processed_: candidates_ and probs_; false when nothing is finite.
  bool BuildDistribution(const protocol::SamplingParams& params);
  // Step 5 over candidates_, leaving out `excluded` (-1 = none); `uniform` in [0, 1).
  int32_t InverseCdf(double uniform, int32_t excluded);
  // Fills probs_ (unnormalised, max = 1) from processed_ / temperature and candidates_ with
  // the tokens min_p keeps, in id order.
  void ComputeCandidates(const protocol::SamplingParams& params);
  void ApplyTopK(int32_t top_k);
  void ApplyTopP(float top_p);

  int32_t vocab_size_;
  int32_t eos_token_id_;
  bool candidates_sorted_ = false;   // candidates_ are best first (else id order)
  std::vector<float> processed_;     // [vocab_size] the row after penalties
  std::vector<double> probs_;        // [vocab_size] exp(logit/T - max)
  std::vector<int32_t> candidates_;  // kept token ids
  std::vector<int32_t> scratch_;
  std::vector<float> scratch_values_;
};

// argmax over logits [vocab_size]; the lowest id among equal maxima. NaNs are never chosen.
int32_t GreedyArgmax(std::span<const float> logits);

}  // namespace tandem::worker
