// Messages from an engine core back to API servers (over ipc/, msgpack-encoded).
#pragma once

#include <msgpack.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::protocol {

enum class FinishReason : uint8_t {
  kNone = 0,    // still running
  kStop = 1,    // EOS or a stop_token_id (the API server also ends on stop strings)
  kLength = 2,  // max_tokens or max_model_len reached
  kAbort = 3,   // aborted by the API server
  kError = 4,   // engine-side failure; `error` says what
};

struct TokenLogprob {
  int32_t token_id = 0;
  float logprob = 0;  // natural log of the probability under the raw logits (vLLM V1
                      // default "raw_logprobs": before penalties and temperature)
  MSGPACK_DEFINE(token_id, logprob)
};

// Logprobs at one generated position.
struct PositionLogprobs {
  TokenLogprob sampled;           // the token that was chosen (for a prompt position: the
                                  // prompt's next token)
  std::vector<TokenLogprob> top;  // the `logprobs` most likely tokens, best first
  int32_t sampled_rank = 0;       // 1 + tokens with a higher logit; 0 = not computed
                                  // (computed for prompt logprobs, vLLM's "rank")
  MSGPACK_DEFINE(sampled, top, sampled_rank)
};

// What happened to one request during one engine step.
struct EngineOutput {
  std::string request_id;
  std::vector<int32_t> new_token_ids;          // tokens generated this step (usually 1)
  std::vector<PositionLogprobs> new_logprobs;  // parallel to new_token_ids when requested
  // prompt_logprobs requests, in their first output only: prompt tokens 1..P-1's logprobs.
  std::vector<PositionLogprobs> prompt_logprobs;
  uint8_t finish_reason = 0;      // FinishReason
  int32_t stop_token_id = -1;     // the id that ended it (kStop by token), else -1
  int32_t num_cached_tokens = 0;  // prompt tokens served from the prefix cache
  std::string error;              // set when finish_reason == kError
  // When things happened to the request in the engine (vLLM's EngineCoreEvent QUEUED and
  // SCHEDULED, and EngineCoreOutputs.timestamp), in seconds on the engine process's monotonic
  // clock: only differences between two of them mean anything (a remote DP rank's clock is not
  // the API server's). The API server derives the request's queue, prefill, decode and
  // inference times from them (/metrics).
  double queued_time_s = 0;     // the engine queued it; in its first output only, else 0
  double scheduled_time_s = 0;  // first scheduled (a resumption after preemption does not
                                // count); in its first output only; 0 = never scheduled
  double timestamp_s = 0;       // this output was made (after the step that gave its tokens)
  MSGPACK_DEFINE(request_id, new_token_ids, new_logprobs, finish_reason, stop_token_id,
                 num_cached_tokens, error, queued_time_s, scheduled_time_s, timestamp_s,
                 prompt_logprobs)
};

// Upper bounds (tokens) of the iteration-tokens histogram, vLLM's iteration_tokens_total.
inline constexpr int64_t kIterationTokensBuckets[] = {1,   8,    16,   32,   64,   128,  256,
                                                      512, 1024, 2048, 4096, 8192, 16384};
inline constexpr int kNumIterationTokensBuckets =
    static_cast<int>(sizeof(kIterationTokensBuckets) / sizeof(kIterationTokensBuckets[0]));

// Load and health of one engine core; published with every batch of outputs and as a
// heartbeat. Feeds /metrics and (later) DP routing.
struct EngineStats {
  int32_t dp_rank = 0;
  // Orders the stats of one engine: it grows with every batch of outputs the engine builds.
  // Heartbeats travel on their own socket and may arrive after newer stats; an API server
  // keeps the stats with the highest seq, so cumulative counters never step back.
  int64_t seq = 0;
  int32_t num_running = 0;
  int32_t num_waiting = 0;
  float kv_cache_usage = 0;    // used blocks / total blocks, in [0, 1]
  int32_t num_gpu_blocks = 0;  // KV blocks in the pool (CPU memory here)
  int32_t block_size = 0;      // tokens per block
  // Recurrent-state slots (hybrid models; 0 = none) and those held by running requests: the
  // second cache group next to the KV blocks.
  int32_t num_state_slots = 0;
  int32_t num_state_slots_used = 0;
  int64_t num_preemptions = 0;  // cumulative
  // Prefix cache, cumulative (vLLM's prefix_cache_queries / prefix_cache_hits): prompt tokens
  // looked up when a request is first scheduled, and of those the tokens found cached. Both
  // stay 0 with prefix caching off.
  int64_t prefix_cache_queries = 0;
  int64_t prefix_cache_hits = 0;
  int64_t num_requests_finished = 0;  // cumulative requests this engine finished (any reason)
  int64_t num_generation_tokens = 0;  // cumulative tokens this engine generated
  // DP waves (expert-parallel MoE): cumulative waves this rank stepped in, and steps it ran
  // with nothing scheduled only to enter the other ranks' collectives.
  int64_t num_waves = 0;
  int64_t num_dummy_steps = 0;
  // True when the DP ranks step together (expert-parallel MoE): one lost rank stops them all.
  bool lockstep = false;
  // The DP load balancer's token load: Σ (prompt tokens + max_tokens) over the unfinished
  // requests (waiting and running) — each request's whole size until it finishes.
  int64_t num_held_tokens = 0;
  // Cumulative requests received from each API server, by client index, whether or not the
  // engine accepted them (a frame that does not decode names no client and is not counted):
  // an API server counts what it sent beyond these as not yet in the load.
  std::vector<int64_t> num_received_by_client;
  // Speculative decoding, cumulative (vLLM's spec_decode_* counters): steps in which a request
  // verified drafts, drafts verified, drafts accepted, and accepted drafts by position (0 = the
  // first draft of a step).
  int64_t spec_num_drafts = 0;
  int64_t spec_num_draft_tokens = 0;
  int64_t spec_num_accepted_tokens = 0;
  std::vector<int64_t> spec_num_accepted_per_pos;
  // vLLM's iteration_tokens_total, cumulative: one observation per engine step that gave at
  // least one request a token, of the tokens it gave plus the prompt tokens of the requests
  // that got their first token in it (vLLM IterationStats: num_prompt_tokens +
  // num_generation_tokens). iteration_tokens_buckets[i] counts the observations in
  // (kIterationTokensBuckets[i-1], kIterationTokensBuckets[i]]; its last entry
  // (index kNumIterationTokensBuckets) those above every bound. Empty until the first step.
  std::vector<int64_t> iteration_tokens_buckets;
  int64_t iteration_tokens_sum = 0;  // Σ of the observations
  MSGPACK_DEFINE(dp_rank, num_running, num_waiting, kv_cache_usage, num_gpu_blocks, block_size,
                 num_preemptions, prefix_cache_queries, prefix_cache_hits, num_requests_finished,
                 num_generation_tokens, num_waves, num_dummy_steps, lockstep, num_held_tokens,
                 num_received_by_client, spec_num_drafts, spec_num_draft_tokens,
                 spec_num_accepted_tokens, spec_num_accepted_per_pos, num_state_slots,
                 num_state_slots_used, iteration_tokens_buckets, iteration_tokens_sum, seq)
};

struct EngineOutputs {
  std::vector<EngineOutput> outputs;
  EngineStats stats;
  MSGPACK_DEFINE(outputs, stats)
};

}  // namespace tandem::protocol
