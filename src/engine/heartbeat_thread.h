// HeartbeatThread: an engine core's liveness signal, sent from its own thread over its own
// sockets, so that a step longer than the API servers' heartbeat timeout (a long prefill of a
// big model on CPU) never reads as a dead engine. Every `interval_s` it sends the latest
// stats the engine loop published: an EngineOutputs with no outputs to every API server, and
// kEngineStats to the DP coordinator.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "ipc/zmq_socket.h"
#include "protocol/engine_output.h"

namespace tandem::engine {

class HeartbeatThread {
 public:
  // Connects PUSH sockets to `output_endpoints` (and `stats_endpoint` when not empty).
  // Errors: kUnavailable naming the endpoint.
  static Result<std::unique_ptr<HeartbeatThread>> Start(
      const std::vector<std::string>& output_endpoints, const std::string& stats_endpoint,
      double interval_s, protocol::EngineStats initial);
  ~HeartbeatThread();

  // The stats the next heartbeat carries. Thread-safe; cheap.
  void Publish(const protocol::EngineStats& stats);

 private:
  HeartbeatThread() = default;
  void Loop();

  std::vector<std::unique_ptr<ipc::ZmqSocket>> outputs_;
  std::unique_ptr<ipc::ZmqSocket> stats_socket_;
  double interval_s_ = 0.5;
  std::mutex mu_;
  std::condition_variable cv_;
  protocol::EngineStats stats_;  // guarded by mu_
  bool stop_ = false;            // guarded by mu_
  std::thread thread_;
};

}  // namespace tandem::engine
