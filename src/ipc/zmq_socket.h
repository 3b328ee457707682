// ZmqSocket: one ZeroMQ socket carrying whole control-plane frames (protocol/message.h).
// No tensors ever travel here (that is comm/). Reference: ZeroMQ guide, PUSH/PULL pipeline.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/status.h"

namespace tandem::ipc {

enum class SocketKind { kPush, kPull };

class ZmqSocket {
 public:
  // Creates a socket of `kind`. Sockets share one process-wide zmq context.
  explicit ZmqSocket(SocketKind kind);
  ~ZmqSocket();
  ZmqSocket(const ZmqSocket&) = delete;
  ZmqSocket& operator=(const ZmqSocket&) = delete;

  // endpoint: "ipc:///path" or "tcp://host:port". Errors: kUnavailable naming the endpoint.
  Status Bind(const std::string& endpoint);
  Status Connect(const std::string& endpoint);

  // Sends one frame; blocks while the peer's queue is full (high-water mark).
  // Errors: kUnavailable (socket closed / context terminated).
  Status Send(const std::string& frame);

  // Receives one frame, waiting at most timeout_ms (-1 = forever, 0 = poll).
  // Returns nullopt on timeout. Errors: kUnavailable (context terminated).
  Result<std::optional<std::string>> Recv(int timeout_ms);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A fresh ipc:// endpoint path unique to this process: "ipc:///tmp/tandem-<pid>-<name>".
std::string MakeIpcEndpoint(const std::string& name);

}  // namespace tandem::ipc
