// ZmqSocket: one ZeroMQ socket carrying whole control-plane frames (protocol/message.h).
// No tensors ever travel here (that is comm/). Reference: ZeroMQ guide (PUSH/PULL pipelines,
// ROUTER/DEALER for addressed handshakes, PUB/SUB for load snapshots).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace tandem::ipc {

enum class SocketKind { kPush, kPull, kRouter, kDealer, kPub, kSub };

class ZmqSocket {
 public:
  // Creates a socket of `kind`. Sockets share one process-wide zmq context. A kSub socket
  // subscribes to every message.
  explicit ZmqSocket(SocketKind kind);
  ~ZmqSocket();
  ZmqSocket(const ZmqSocket&) = delete;
  ZmqSocket& operator=(const ZmqSocket&) = delete;

  // Routing id a ROUTER peer sees for this (DEALER) socket. Call before Connect.
  void SetIdentity(const std::string& identity);

  // endpoint: "ipc:///path" or "tcp://host:port" ("tcp://host:*" binds a free port; see
  // BoundEndpoint). Errors: kUnavailable naming the endpoint.
  Status Bind(const std::string& endpoint);
  Status Connect(const std::string& endpoint);
  // The endpoint actually bound last (with the chosen port for "tcp://host:*").
  std::string BoundEndpoint() const;

  // Sends one frame; blocks while the peer's queue is full (high-water mark).
  // Errors: kUnavailable (socket closed / context terminated).
  Status Send(const std::string& frame);
  // Sends one frame only if it can go at once (a PUSH with no connected peer would block);
  // false when it could not.
  bool TrySend(const std::string& frame);
  // Sends several frames as one message (ROUTER: [peer identity, payload]).
  Status SendMultipart(const std::vector<std::string>& frames);

  // Receives one frame, waiting at most timeout_ms (-1 = forever, 0 = poll).
  // Returns nullopt on timeout. Errors: kUnavailable (context terminated).
  Result<std::optional<std::string>> Recv(int timeout_ms);
  // Receives one whole message (all its frames); nullopt on timeout.
  Result<std::optional<std::vector<std::string>>> RecvMultipart(int timeout_ms);

  // Waits up to timeout_ms until at least one of `sockets` can be read; returns, per socket,
  // whether it can. Errors: kUnavailable.
  static Result<std::vector<bool>> PollReadable(const std::vector<ZmqSocket*>& sockets,
                                                int timeout_ms);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A TCP port on `host` that was free a moment ago (bound and closed again), chosen at random
// outside the kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range) so that no
// bind(0) or connect() of another socket takes it before its owner binds it; the kernel's own
// pick when 64 tries there are all taken. Errors: kUnavailable naming the host.
Result<int> PickFreeTcpPort(const std::string& host);

}  // namespace tandem::ipc
