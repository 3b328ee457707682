// The data-parallel start-up handshake (ARCHITECTURE.md §3 "Startup"): the head binds a ROUTER
// at --data-parallel-address:--data-parallel-rpc-port; every engine core dials it, says HELLO
// (rank, address, settings), gets where to send outputs and stats, loads its model and says
// READY. Start order between machines does not matter: a DEALER that dials a head not up yet
// keeps retrying (ZeroMQ reconnects) until the deadline.
// Reference: vLLM v1 engine/utils.py wait_for_engine_startup (HELLO/READY over a ROUTER).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "ipc/zmq_socket.h"
#include "protocol/dp_messages.h"

namespace tandem::ipc {

using Settings = std::vector<std::pair<std::string, std::string>>;

// The first setting whose value differs between `ours` and `theirs` (a key missing on one side
// counts as different), as a message naming both values; "" when they agree.
std::string DescribeSettingsMismatch(const Settings& ours, const std::string& our_host,
                                     const Settings& theirs, const std::string& their_host,
                                     int their_rank);

struct HandshakeServerOptions {
  std::string bind_endpoint;                  // "tcp://A:P"
  int32_t dp_size = 1;                        // ranks 0 … dp_size-1 must all say READY
  std::string host;                           // the head's address, for messages
  Settings settings;                          // the head's own, compared with every HELLO
  std::vector<std::string> output_endpoints;  // handed to engines: API servers' PULLs
  std::string stats_endpoint;                 // handed to engines: the coordinator's PULL
  // Handed to engines as they are (see protocol::HandshakeReply): the coordinator's PUB and
  // the collectives groups spanning DP ranks.
  std::string publish_endpoint;
  std::string group_backend;
  std::string group_name;
  std::string ep_rendezvous;
  std::string dp_rendezvous;
};

// Head side. Thread: one owner thread calls Bind then Run.
class HandshakeServer {
 public:
  explicit HandshakeServer(HandshakeServerOptions options);

  Status Bind();

  // Answers HELLOs and collects READYs until every rank is ready (returns Ok), the deadline
  // (monotonic seconds) passes (kUnavailable naming the missing ranks and the address they
  // should dial), or a fatal refusal (kInvalidArgument: a settings mismatch). Duplicate or
  // out-of-range ranks are refused (the engine is told why) and logged; the head goes on.
  // `on_ready(rank, hello)` runs on this thread for every rank that becomes ready. When
  // `keep_going` (optional, polled every ~200 ms) turns false, returns kUnavailable at once.
  Status RunUntilAllReady(double deadline_s,
                          const std::function<void(const protocol::EngineHello&)>& on_ready,
                          const std::function<bool()>& keep_going = {});

  // After start-up: keeps refusing late or duplicate HELLOs until `keep_going` is false.
  void ServeLateComers(const std::function<bool()>& keep_going);

 private:
  Status HandleMessage(const std::vector<std::string>& frames,
                       const std::function<void(const protocol::EngineHello&)>& on_ready);
  // An API machine's hello: settings compared, then the endpoints of the reply.
  Status HandleApiServerHello(const std::string& identity, const protocol::ApiServerHello& hello);
  // The accepted reply: every endpoint and group setting of this deployment.
  protocol::HandshakeReply AcceptedReply() const;
  void Reply(const std::string& identity, const protocol::HandshakeReply& reply);

  HandshakeServerOptions options_;
  ZmqSocket router_;
  std::map<int32_t, protocol::EngineHello> hello_by_rank_;  // accepted HELLOs
  std::map<std::string, int32_t> rank_by_identity_;
  std::map<int32_t, bool> ready_by_rank_;
};

// Engine side.
class HandshakeClient {
 public:
  explicit HandshakeClient(std::string head_endpoint);

  // Sends HELLO and waits for the head's answer until `deadline_s` (monotonic), logging
  // every ~10 s while the head is silent. Errors: kUnavailable naming the address when the
  // deadline passes; kInvalidArgument with the head's reason when refused.
  Result<protocol::HandshakeReply> Hello(const protocol::EngineHello& hello, double deadline_s);

  // An API machine's hello (hybrid / external DP load balancing): the reply's publish_endpoint
  // is the coordinator's PUB. Errors as Hello's; also kUnavailable as soon as `cancelled` (when
  // given) turns true (a shutdown signal while waiting for the head).
  Result<protocol::HandshakeReply> Hello(const protocol::ApiServerHello& hello, double deadline_s,
                                         const std::atomic<bool>* cancelled = nullptr);

  // Tells the head this rank has loaded its model.
  Status Ready(const protocol::EngineReadyInfo& info);

 private:
  // Sends `frame` and waits for the head's HandshakeReply; `who` names us in messages.
  Result<protocol::HandshakeReply> Exchange(const std::string& frame, const std::string& who,
                                            double deadline_s,
                                            const std::atomic<bool>* cancelled = nullptr);

  std::string head_endpoint_;
  ZmqSocket dealer_;
};

}  // namespace tandem::ipc
