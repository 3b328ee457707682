#include "ipc/zmq_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <zmq.hpp>

#include "ipc/ipc_path.h"

namespace tandem::ipc {
namespace {

zmq::context_t& Context() {
  static zmq::context_t* ctx = new zmq::context_t(1);  // leaked: outlives every socket
  return *ctx;
}

zmq::socket_type TypeOf(SocketKind kind) {
  switch (kind) {
    case SocketKind::kPush:
      return zmq::socket_type::push;
    case SocketKind::kPull:
      return zmq::socket_type::pull;
    case SocketKind::kRouter:
      return zmq::socket_type::router;
    case SocketKind::kDealer:
      return zmq::socket_type::dealer;
    case SocketKind::kPub:
      return zmq::socket_type::pub;
    case SocketKind::kSub:
      return zmq::socket_type::sub;
  }
  return zmq::socket_type::pair;
}

}  // namespace

struct ZmqSocket::Impl {
  zmq::socket_t socket;
  explicit Impl(SocketKind kind) : socket(Context(), TypeOf(kind)) {
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::sndhwm, 0);  // control messages are small; never drop
    socket.set(zmq::sockopt::rcvhwm, 0);
    socket.set(zmq::sockopt::reconnect_ivl, 100);  // ms; peers restart or start late
    socket.set(zmq::sockopt::reconnect_ivl_max, 1000);
    if (kind == SocketKind::kSub) socket.set(zmq::sockopt::subscribe, "");
    if (kind == SocketKind::kRouter) socket.set(zmq::sockopt::router_mandatory, 1);
  }
  // libzmq removes an ipc socket file on close only from its I/O thread, which a process that
  // exits right after (the context is never terminated) does not wait for: remove them here.
  ~Impl() {
    for (const std::string& endpoint : bound_ipc_endpoints) RemoveIpcPath(endpoint);
  }
  std::vector<std::string> bound_ipc_endpoints;
};

ZmqSocket::ZmqSocket(SocketKind kind) : impl_(std::make_unique<Impl>(kind)) {}
ZmqSocket::~ZmqSocket() = default;

void ZmqSocket::SetIdentity(const std::string& identity) {
  impl_->socket.set(zmq::sockopt::routing_id, identity);
}

Status ZmqSocket::Bind(const std::string& endpoint) {
  try {
    impl_->socket.bind(endpoint);
  } catch (const zmq::error_t& e) {
    return Unavailable("cannot bind " + endpoint + ": " + e.what());
  }
  if (endpoint.rfind("ipc://", 0) == 0) impl_->bound_ipc_endpoints.push_back(endpoint);
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

std::string ZmqSocket::BoundEndpoint() const {
  return impl_->socket.get(zmq::sockopt::last_endpoint);
}

Status ZmqSocket::Send(const std::string& frame) { return SendMultipart({frame}); }

bool ZmqSocket::TrySend(const std::string& frame) {
  try {
    return impl_->socket.send(zmq::buffer(frame), zmq::send_flags::dontwait).has_value();
  } catch (const zmq::error_t&) {
    return false;
  }
}

Status ZmqSocket::SendMultipart(const std::vector<std::string>& frames) {
  try {
    for (size_t i = 0; i < frames.size(); ++i) {
      const auto flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
      impl_->socket.send(zmq::buffer(frames[i]), flags);
    }
  } catch (const zmq::error_t& e) {
    return Unavailable(std::string("send failed: ") + e.what());
  }
  return Status::Ok();
}

Result<std::optional<std::string>> ZmqSocket::Recv(int timeout_ms) {
  auto message = RecvMultipart(timeout_ms);
  if (!message.ok()) return message.status();
  if (!message->has_value()) return std::optional<std::string>();
  return std::optional<std::string>((*message)->back());
}

Result<std::optional<std::vector<std::string>>> ZmqSocket::RecvMultipart(int timeout_ms) {
  using Out = std::optional<std::vector<std::string>>;
  try {
    zmq::pollitem_t item{static_cast<void*>(impl_->socket), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(timeout_ms)) == 0) return Out();
    std::vector<std::string> frames;
    while (true) {
      zmq::message_t msg;
      if (!impl_->socket.recv(msg, zmq::recv_flags::dontwait)) break;
      frames.push_back(msg.to_string());
      if (!msg.more()) break;
    }
    if (frames.empty()) return Out();
    return Out(std::move(frames));
  } catch (const zmq::error_t& e) {
    return Unavailable(std::string("recv failed: ") + e.what());
  }
}

Result<std::vector<bool>> ZmqSocket::PollReadable(const std::vector<ZmqSocket*>& sockets,
                                                  int timeout_ms) {
  std::vector<zmq::pollitem_t> items;
  for (ZmqSocket* s : sockets) {
    items.push_back({static_cast<void*>(s->impl_->socket), 0, ZMQ_POLLIN, 0});
  }
  try {
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(timeout_ms));
  } catch (const zmq::error_t& e) {
    return Unavailable(std::string("poll failed: ") + e.what());
  }
  std::vector<bool> readable;
  for (const auto& item : items) readable.push_back((item.revents & ZMQ_POLLIN) != 0);
  return readable;
}

namespace {

// Binds a TCP socket to host:port (0 = the kernel picks) and returns the port it got, or -1
// with `why` set. The socket is closed again.
int TryBindTcpPort(const sockaddr_in& base, int port, std::string* why) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    *why = "cannot create a socket";
    return -1;
  }
  sockaddr_in addr = base;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    *why = strerror(errno);
    close(fd);
    return -1;
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

}  // namespace

Result<int> PickFreeTcpPort(const std::string& host) {
  sockaddr_in base{};
  base.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &base.sin_addr) != 1) {
    return Unavailable("'" + host + "' is not an IPv4 address");
  }
  // A port outside the kernel's ephemeral range: bind(0) and connect() elsewhere (an engine
  // core's own sockets) never take it between this check and its owner's bind, as they could
  // take a port that bind(0) handed out here and that was closed again.
  int ephemeral_low = 32768, ephemeral_high = 60999;
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  range >> ephemeral_low >> ephemeral_high;
  std::vector<int> ranges;  // [low, high] pairs outside the ephemeral range, above 1023
  if (ephemeral_low > 1024) {
    ranges.insert(ranges.end(), {1024, ephemeral_low - 1});
  }
  if (ephemeral_high < 65535) {
    ranges.insert(ranges.end(), {ephemeral_high + 1, 65535});
  }
  int64_t count = 0;
  for (size_t i = 0; i < ranges.size(); i += 2) {
    count += ranges[i + 1] - ranges[i] + 1;
  }
  std::string why;
  if (count > 0) {
    std::mt19937_64 rng(std::random_device{}());
    std::uniform_int_distribution<int64_t> pick(0, count - 1);
    for (int attempt = 0; attempt < 64; ++attempt) {
      int64_t k = pick(rng);
      int port = 0;
      for (size_t i = 0; i < ranges.size(); i += 2) {
        const int64_t size = ranges[i + 1] - ranges[i] + 1;
        if (k < size) {
          port = ranges[i] + static_cast<int>(k);
          break;
        }
        k -= size;
      }
      if (TryBindTcpPort(base, port, &why) > 0) {
        return port;
      }
    }
  }
  // Every try was taken (or no port lies outside the range): the kernel's pick.
  const int port = TryBindTcpPort(base, 0, &why);
  if (port < 0) {
    return Unavailable("cannot bind a port on " + host + ": " + why);
  }
  return port;
}

}  // namespace tandem::ipc
