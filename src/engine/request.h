// Request: the engine core's record of one generation request, from arrival to finish.
// Works in token ids and counts; never sees text or tensors.
// Reference: vLLM v1 vllm/v1/request.py (Request, RequestStatus).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/block_hash.h"
#include "protocol/engine_output.h"
#include "protocol/engine_request.h"
#include "protocol/sampling_params.h"

namespace tandem::engine {

enum class RequestStatus {
  kWaiting,          // queued, never scheduled
  kRunning,          // holds KV blocks, computed each step
  kPreempted,        // blocks freed; waits to be recomputed from scratch
  kFinishedStopped,  // EOS or a stop token id
  kFinishedLength,   // max_tokens or max_model_len
  kFinishedAborted,  // aborted by the API server
  kFinishedError,    // the executor failed
};

bool IsFinished(RequestStatus status);

class Request {
 public:
  explicit Request(protocol::EngineRequest request);

  const std::string& request_id() const { return request_id_; }
  const protocol::SamplingParams& sampling() const { return sampling_; }
  const std::vector<int32_t>& eos_token_ids() const { return eos_token_ids_; }
  double arrival_time_s() const { return arrival_time_s_; }
  // vLLM's request priority: lower is served earlier under --scheduling-policy priority.
  int64_t priority() const { return priority_; }

  // Prompt followed by every generated token: [num_tokens()].
  const std::vector<int32_t>& all_token_ids() const { return all_token_ids_; }
  const std::vector<int32_t>& output_token_ids() const { return output_token_ids_; }
  int32_t num_tokens() const { return static_cast<int32_t>(all_token_ids_.size()); }
  int32_t num_prompt_tokens() const { return num_prompt_tokens_; }
  int32_t num_output_tokens() const { return static_cast<int32_t>(output_token_ids_.size()); }

  // Appends one generated token.
  void AppendOutputToken(int32_t token_id);

  // Chained hashes of the full blocks of all_token_ids() computed so far (see block_hash.h);
  // extended lazily by the KvCacheManager.
  std::vector<BlockHash>& block_hashes() { return block_hashes_; }
  // prompt_logprobs: the logprobs of prompt tokens 1..P-1 gathered so far, in order; sent with
  // the first output.
  std::vector<protocol::PositionLogprobs> prompt_logprobs;

  // The first block's parent hash: RootBlockHash(cache_salt).
  BlockHash root_block_hash() const { return root_block_hash_; }

  RequestStatus status = RequestStatus::kWaiting;
  // The scheduler's count of requests queued before this one: breaks ties between equal
  // (priority, arrival time) so that the waiting queue's order is total and stable.
  int64_t arrival_seq = 0;
  // Tokens whose KV is in this request's blocks (cache hits + computed by steps).
  int32_t num_computed_tokens = 0;
  // Prompt tokens served by the prefix cache at first scheduling; -1 until then.
  int32_t num_cached_tokens = -1;
  // MonotonicSeconds() when the scheduler queued it, and when it first scheduled it (0 until
  // then; a resumption after preemption leaves it): its first EngineOutput carries both.
  double queued_time_s = 0;
  double scheduled_time_s = 0;
  // The stop_token_ids entry that finished it; -1 otherwise (EOS leaves it -1, like vLLM).
  int32_t stop_token_id = -1;
  // False until the first EngineOutput (which carries num_cached_tokens) is emitted.
  bool first_output_sent = false;
  // Draft tokens the worker proposed, to verify in the next step (speculative decoding);
  // cleared when it is preempted.
  std::vector<int32_t> spec_token_ids;

 private:
  std::string request_id_;
  protocol::SamplingParams sampling_;
  std::vector<int32_t> eos_token_ids_;
  double arrival_time_s_ = 0;
  int64_t priority_ = 0;
  int32_t num_prompt_tokens_ = 0;
  std::vector<int32_t> all_token_ids_;
  std::vector<int32_t> output_token_ids_;
  std::vector<BlockHash> block_hashes_;
  BlockHash root_block_hash_ = kRootBlockHash;
};

}  // namespace tandem::engine
