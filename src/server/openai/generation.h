// Generation: one API call's n choices in flight. Fans out n engine requests
// ("<request_id>-<i>", seed + i when seeded, as vLLM's ParentRequest does), turns their
// EngineOutputs into text deltas (incremental detokenizer → stop-string matcher), aborts a
// choice in the engine when a stop string matched, records metrics, and reports the end
// (usage) or the first error. Logs the request when --enable-log-requests (request_log.h).
//
// Invariant: callbacks are serialized (one mutex) and every choice reports exactly one
// delta with a non-empty finish_reason before on_done; after on_error nothing more is called.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/engine_output.h"
#include "server/errors.h"
#include "server/openai/request_parsing.h"
#include "server/server_context.h"

namespace tandem::server::openai {

// New output of one choice since its previous delta.
struct ChoiceDelta {
  int32_t index = 0;
  std::string text;                                  // new text (stop strings held back)
  std::vector<int32_t> token_ids;                    // new token ids
  std::vector<protocol::PositionLogprobs> logprobs;  // parallel to token_ids when requested
  // prompt_logprobs: prompt tokens 1..P-1's logprobs, in the choice's first delta only.
  std::vector<protocol::PositionLogprobs> prompt_logprobs;
  std::string finish_reason;             // "" while running; "stop" / "length"
  nlohmann::json stop_reason = nullptr;  // matched stop string or stop token id
};

// What one choice has produced so far, for non-streaming responses: the deltas of one choice
// appended in order (completions and chat both build their bodies from it).
struct ChoiceResult {
  std::string text;
  std::vector<int32_t> token_ids;
  std::vector<protocol::PositionLogprobs> logprobs;
  std::vector<protocol::PositionLogprobs> prompt_logprobs;
  std::string finish_reason;
  nlohmann::json stop_reason = nullptr;

  void Append(const ChoiceDelta& delta);
};

struct GenerationUsage {
  int32_t prompt_tokens = 0;      // once per call, not per choice (OpenAI)
  int32_t completion_tokens = 0;  // summed over choices
  int32_t cached_tokens = 0;      // prompt tokens served from the prefix cache (choice 0)
  // --enable-prompt-tokens-details: the usage object shows prompt_tokens_details (vLLM: null
  // without the flag).
  bool prompt_tokens_details = false;
};

class Generation : public std::enable_shared_from_this<Generation> {
 public:
  struct Callbacks {
    std::function<void(const ChoiceDelta&)> on_delta;
    std::function<void(const GenerationUsage&)> on_done;
    std::function<void(const ApiError&)> on_error;
  };

  // `context` outlives the Generation. `request` has max_tokens resolved.
  Generation(const ServerContext& context, std::string request_id,
             std::vector<int32_t> prompt_token_ids, GenerationRequest request,
             double arrival_time_s, Callbacks callbacks);
  ~Generation();

  // Queues the n engine requests. Errors: the engine's Status (e.g. 503 when not ready); the
  // requests already queued are aborted. Call once.
  Status Start();

  // Ends every running choice in the engine (client gone). No callbacks after this.
  void Abort();

 private:
  struct Choice;
  void OnOutput(int32_t index, const protocol::EngineOutput& output);
  void FinishChoice(Choice& choice, ChoiceDelta& delta, const std::string& finish_reason);

  const ServerContext& context_;
  const std::string request_id_;
  const std::vector<int32_t> prompt_token_ids_;
  const GenerationRequest request_;
  const double arrival_time_s_;
  Callbacks callbacks_;

  // Recursive: the callbacks run under it, and a callback's sink call can drop the last
  // reference to a session whose client already left; ~HttpSession then fires the disconnect
  // callback, Abort(), on the same thread (a self-deadlock seen in ChatHttpTest at teardown).
  std::recursive_mutex mutex_;
  std::vector<std::unique_ptr<Choice>> choices_;
  int32_t num_finished_ = 0;
  bool failed_or_aborted_ = false;
  GenerationUsage usage_;
};

}  // namespace tandem::server::openai
