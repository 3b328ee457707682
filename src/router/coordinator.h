// Coordinator: the one DP coordinator, beside DP rank 0 on the head. Engines push their
// EngineStats to it; it publishes a LoadSnapshot of every rank to every API server — at most
// every 100 ms while loads change, and every `heartbeat_s` otherwise — which is also how API
// servers learn where each rank takes requests and which ranks are alive.
// MoE "waves" (expert parallel, DP > 1: all ranks step together): a rank that gets a request
// outside a wave sends StartWave here and the coordinator publishes it to every engine (engines
// subscribe to the same PUB); ranks leave a wave together by their own all-reduce.
// Reference: vLLM v1/engine/coordinator.py DPCoordinatorProc.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "ipc/zmq_socket.h"
#include "protocol/dp_messages.h"

namespace tandem::router {

struct CoordinatorOptions {
  int32_t dp_size = 1;
  std::string stats_endpoint;    // PULL bound here (engines connect)
  std::string publish_endpoint;  // PUB bound here (API servers and, for waves, engines connect)
  double min_publish_interval_s = 0.1;
  double heartbeat_s = 0.5;
  double rank_timeout_s = 3.0;  // a ready rank silent this long is published as not alive
};

class Coordinator {
 public:
  explicit Coordinator(CoordinatorOptions options);
  ~Coordinator();

  // Binds both sockets and starts the publishing thread. Errors: kUnavailable.
  Status Start();
  // A rank finished its handshake: publish it (with where it takes requests). Thread-safe.
  void OnEngineReady(int32_t dp_rank, const std::string& input_endpoint);
  void Stop();

  // The snapshot as it would be published now (tests). Thread-safe.
  protocol::LoadSnapshot CurrentSnapshot() const;

 private:
  void Loop();
  bool UpdateAliveness(double now);

  CoordinatorOptions options_;
  ipc::ZmqSocket stats_;
  ipc::ZmqSocket publisher_;
  mutable std::mutex mu_;
  protocol::LoadSnapshot snapshot_;   // guarded by mu_
  std::vector<double> last_heard_s_;  // guarded by mu_
  bool changed_ = true;               // guarded by mu_
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tandem::router
