// MpEngineClient: the API server's EngineClient for one engine core in another process,
// over two ZeroMQ pipes (requests out, outputs + heartbeats in).
// Reference: vLLM V1 AsyncMPClient (core_client.py): outputs are demultiplexed by request id
// on a background thread.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "ipc/zmq_socket.h"
#include "router/engine_client.h"

namespace tandem::router {

struct MpEngineClientOptions {
  std::string input_endpoint;   // engine's request pipe (we PUSH, engine PULLs; engine binds)
  std::string output_endpoint;  // engine's output pipe (engine PUSHes, we PULL; we bind)
  double heartbeat_timeout_s = 5.0;  // silence longer than this after READY = engine dead
};

class MpEngineClient : public EngineClient {
 public:
  explicit MpEngineClient(MpEngineClientOptions options);
  ~MpEngineClient() override;

  // Binds the output pipe, connects the input pipe and starts the receive thread.
  // Errors: kUnavailable naming the endpoint.
  Status Start();

  Status AddRequest(protocol::EngineRequest request, OutputCallback on_output) override;
  void AbortRequest(const std::string& request_id) override;
  bool IsReady() const override;
  protocol::EngineStats LatestStats(int dp_rank = 0) const override;

  // Blocks until the engine said READY (true) or `timeout_s` passed / it died (false).
  bool WaitReady(double timeout_s) const;
  // Marks the engine dead (its process exited): every in-flight request ends with kError.
  void MarkEngineDead(const std::string& reason);
  // Asks the engine to exit, then stops the receive thread.
  void Shutdown();

 private:
  void ReceiveLoop();
  void Dispatch(const protocol::EngineOutputs& outputs);
  void FailAll(const std::string& reason);

  MpEngineClientOptions options_;
  ipc::ZmqSocket input_;
  ipc::ZmqSocket output_;
  std::mutex send_mu_;                      // guards input_ (zmq sockets are single-threaded)
  mutable std::mutex mu_;                   // guards callbacks_ and stats_
  std::unordered_map<std::string, OutputCallback> callbacks_;
  protocol::EngineStats stats_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> dead_{false};
  std::atomic<bool> stop_{false};
  std::atomic<double> last_heard_s_{0};
  std::thread receiver_;
};

}  // namespace tandem::router
