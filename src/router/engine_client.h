// EngineClient: how an API server reaches the engine core(s). The server only sees this
// interface; MpEngineClient (ZeroMQ to engine processes) implements it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"
#include "protocol/engine_output.h"
#include "protocol/engine_request.h"

namespace tandem::router {

// Called on the client's receive thread for every output of the request, in order; the
// last call has finish_reason != kNone. Must not block.
using OutputCallback = std::function<void(const protocol::EngineOutput&)>;

class EngineClient {
 public:
  virtual ~EngineClient() = default;

  // Queues `request` on an engine (request.data_parallel_rank >= 0 pins the rank). When
  // `dp_rank` is not null, the rank chosen is stored there before any output can reach
  // `on_output` (the `engine` label of the request's metrics).
  // Errors: kUnavailable when no engine (or not the pinned one) is serving;
  // kInvalidArgument for a pinned rank out of range.
  // Thread-safe.
  virtual Status AddRequest(protocol::EngineRequest request, OutputCallback on_output,
                            int32_t* dp_rank = nullptr) = 0;

  // Ends a request early (client disconnected, stop string hit). Its callback gets no more
  // outputs after this returns. Unknown ids are ignored. Thread-safe.
  virtual void AbortRequest(const std::string& request_id) = 0;

  // True once every engine has said READY (start-up done) and while at least one serves.
  virtual bool IsReady() const = 0;
  // Why IsReady() is false, for the 503 a request then gets.
  virtual std::string NotReadyReason() const { return "the engine is not ready yet; retry later"; }

  // Latest stats of engine `dp_rank` (0 with one rank).
  virtual protocol::EngineStats LatestStats(int dp_rank = 0) const = 0;

  // Number of DP ranks of the deployment, whether this client sends requests to `dp_rank`
  // (hybrid / external DP load balancing: only its own machine's), and whether it is serving.
  virtual int num_ranks() const { return 1; }
  virtual bool ServesRank(int dp_rank) const { return dp_rank >= 0 && dp_rank < num_ranks(); }
  virtual bool RankAlive(int dp_rank) const { return IsReady(); }
};

}  // namespace tandem::router
