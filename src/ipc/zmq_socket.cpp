#include "ipc/zmq_socket.h"

#include <unistd.h>

#include <zmq.hpp>

namespace tandem::ipc {
namespace {

zmq::context_t& Context() {
  static zmq::context_t* ctx = new zmq::context_t(1);  // leaked: outlives every socket
  return *ctx;
}

}  // namespace

struct ZmqSocket::Impl {
  zmq::socket_t socket;
  explicit Impl(SocketKind kind)
      : socket(Context(), kind == SocketKind::kPush ? zmq::socket_type::push
                                                    : zmq::socket_type::pull) {
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::sndhwm, 0);  // control messages are small; never drop
    socket.set(zmq::sockopt::rcvhwm, 0);
  }
};

ZmqSocket::ZmqSocket(SocketKind kind) : impl_(std::make_unique<Impl>(kind)) {}
ZmqSocket::~ZmqSocket() = default;

Status ZmqSocket::Bind(const std::string& endpoint) {
  try {
    impl_->socket.bind(endpoint);
  } catch (const zmq::error_t& e) {
    return Unavailable("cannot bind " + endpoint + ": " + e.what());
  }
  return Status::Ok();
}

Status ZmqSocket::Connect(const std::string& endpoint) {
  try {
    impl_->socket.connect(endpoint);
  } catch (const zmq::error_t& e) {
    return Unavailable("cannot connect to " + endpoint + ": " + e.what());
  }
  return Status::Ok();
}

Status ZmqSocket::Send(const std::string& frame) {
  try {
    impl_->socket.send(zmq::buffer(frame), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    return Unavailable(std::string("send failed: ") + e.what());
  }
  return Status::Ok();
}

Result<std::optional<std::string>> ZmqSocket::Recv(int timeout_ms) {
  try {
    zmq::pollitem_t item{static_cast<void*>(impl_->socket), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(timeout_ms)) == 0) {
      return std::optional<std::string>();
    }
    zmq::message_t msg;
    if (!impl_->socket.recv(msg, zmq::recv_flags::dontwait)) {
      return std::optional<std::string>();
    }
    return std::optional<std::string>(msg.to_string());
  } catch (const zmq::error_t& e) {
    return Unavailable(std::string("recv failed: ") + e.what());
  }
}

std::string MakeIpcEndpoint(const std::string& name) {
  return "ipc:///tmp/tandem-" + std::to_string(getpid()) + "-" + name;
}

}  // namespace tandem::ipc
