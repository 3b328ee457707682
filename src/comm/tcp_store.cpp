// TcpStore: see tcp_store.h.
#include "comm/tcp_store.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gloo/common/error.h>

#include "core/clock.h"

namespace tandem::comm {
namespace {

bool WriteAll(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool ReadAll(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t k = recv(fd, c, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool WriteBlob(int fd, const void* p, uint32_t n) {
  return WriteAll(fd, &n, sizeof(n)) && WriteAll(fd, p, n);
}

bool ReadBlob(int fd, std::string* out) {
  uint32_t n;
  if (!ReadAll(fd, &n, sizeof(n)) || n > (64u << 20)) return false;
  out->resize(n);
  return ReadAll(fd, out->data(), n);
}

// Resolves host:port to a TCP socket address.
bool Resolve(const std::string& host, int port, sockaddr_storage* addr, socklen_t* len) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res) {
    return false;
  }
  std::memcpy(addr, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return true;
}

}  // namespace

Result<std::pair<std::string, int>> SplitHostPort(const std::string& host_port) {
  size_t colon = host_port.rfind(':');
  if (colon == std::string::npos || colon + 1 >= host_port.size()) {
    return InvalidArgument("rendezvous address '" + host_port + "' is not host:port");
  }
  std::string host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = 0;
  try {
    port = std::stoi(host_port.substr(colon + 1));
  } catch (...) {
    port = -1;
  }
  if (host.empty() || port <= 0 || port > 65535) {
    return InvalidArgument("rendezvous address '" + host_port +
                           "': expected host:port with a port in 1..65535");
  }
  return std::make_pair(host, port);
}

Result<std::unique_ptr<TcpStoreServer>> TcpStoreServer::Start(const std::string& host_port) {
  auto hp = SplitHostPort(host_port);
  if (!hp.ok()) return hp.status();
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (!Resolve(hp->first, hp->second, &addr, &len)) {
    return InvalidArgument("rendezvous host '" + hp->first + "' does not resolve");
  }
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    // The host name may be an address of another interface view (NAT, container): any address.
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_port = htons(static_cast<uint16_t>(hp->second));
    close(fd);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof(any)) != 0) {
      std::string err = std::strerror(errno);
      close(fd);
      return Unavailable("rendezvous store cannot listen on " + host_port + ": " + err);
    }
  }
  if (listen(fd, 128) != 0) {
    std::string err = std::strerror(errno);
    close(fd);
    return Unavailable("rendezvous store cannot listen on " + host_port + ": " + err);
  }
  std::unique_ptr<TcpStoreServer> server(new TcpStoreServer());
  server->listen_fd_ = fd;
  server->accept_thread_ = std::thread([s = server.get()] { s->AcceptLoop(); });
  return server;
}

void TcpStoreServer::AcceptLoop() {
  while (true) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      if (fd >= 0) close(fd);
      return;
    }
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    client_fds_.push_back(fd);
    client_threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TcpStoreServer::Serve(int fd) {
  while (true) {
    char op;
    std::string key;
    if (!ReadAll(fd, &op, 1) || !ReadBlob(fd, &key)) return;
    if (op == 'S') {
      std::string value;
      if (!ReadBlob(fd, &value)) return;
      {
        std::lock_guard<std::mutex> lock(mu_);
        data_[key] = std::vector<char>(value.begin(), value.end());
      }
      char ack = 1;
      if (!WriteAll(fd, &ack, 1)) return;
    } else if (op == 'G') {
      std::vector<char> value;
      bool found;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = data_.find(key);
        found = it != data_.end();
        if (found) value = it->second;
      }
      uint32_t n = found ? static_cast<uint32_t>(value.size()) : 0xffffffffu;
      if (!WriteAll(fd, &n, sizeof(n)) || (found && !WriteAll(fd, value.data(), value.size()))) {
        return;
      }
    } else if (op == 'C') {
      char present;
      {
        std::lock_guard<std::mutex> lock(mu_);
        present = data_.count(key) ? 1 : 0;
      }
      if (!WriteAll(fd, &present, 1)) return;
    } else {
      return;
    }
  }
}

TcpStoreServer::~TcpStoreServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    for (int fd : client_fds_) shutdown(fd, SHUT_RDWR);
  }
  accept_thread_.join();
  for (auto& t : client_threads_) t.join();
  for (int fd : client_fds_) close(fd);
  close(listen_fd_);
}

Result<std::unique_ptr<TcpStoreClient>> TcpStoreClient::Connect(const std::string& group,
                                                                const std::string& host_port,
                                                                double timeout_s) {
  auto hp = SplitHostPort(host_port);
  if (!hp.ok()) return hp.status();
  double deadline_s = MonotonicSeconds() + timeout_s;
  std::string last_error = "not tried";
  while (MonotonicSeconds() < deadline_s) {
    sockaddr_storage addr{};
    socklen_t len = 0;
    if (Resolve(hp->first, hp->second, &addr, &len)) {
      int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (connect(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        std::unique_ptr<TcpStoreClient> client(new TcpStoreClient());
        client->group_ = group;
        client->address_ = host_port;
        client->timeout_s_ = timeout_s;
        client->fd_ = fd;
        return client;
      }
      last_error = std::strerror(errno);
      close(fd);
    } else {
      last_error = "host does not resolve";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Unavailable("gloo group '" + group + "': rendezvous store " + host_port +
                     " not reachable within " + std::to_string(timeout_s) + " s (" + last_error +
                     "; is rank 0 running?)");
}

TcpStoreClient::~TcpStoreClient() {
  if (fd_ >= 0) close(fd_);
}

void TcpStoreClient::Fail(const std::string& what) {
  throw ::gloo::IoException("gloo group '" + group_ + "': rendezvous store " + address_ + ": " +
                            what);
}

void TcpStoreClient::set(const std::string& key, const std::vector<char>& data) {
  char op = 'S', ack = 0;
  if (!WriteAll(fd_, &op, 1) || !WriteBlob(fd_, key.data(), key.size()) ||
      !WriteBlob(fd_, data.data(), data.size()) || !ReadAll(fd_, &ack, 1)) {
    Fail("lost the connection while setting '" + key + "'");
  }
}

bool TcpStoreClient::Check(const std::string& key) {
  char op = 'C', present = 0;
  if (!WriteAll(fd_, &op, 1) || !WriteBlob(fd_, key.data(), key.size()) ||
      !ReadAll(fd_, &present, 1)) {
    Fail("lost the connection while checking '" + key + "'");
  }
  return present != 0;
}

std::vector<char> TcpStoreClient::get(const std::string& key) {
  wait({key});
  char op = 'G';
  uint32_t n = 0;
  if (!WriteAll(fd_, &op, 1) || !WriteBlob(fd_, key.data(), key.size()) ||
      !ReadAll(fd_, &n, sizeof(n)) || n == 0xffffffffu) {
    Fail("could not read key '" + key + "'");
  }
  std::vector<char> value(n);
  if (!ReadAll(fd_, value.data(), n)) Fail("lost the connection while reading '" + key + "'");
  return value;
}

void TcpStoreClient::wait(const std::vector<std::string>& keys) {
  wait(keys, std::chrono::milliseconds(static_cast<int64_t>(timeout_s_ * 1000)));
}

void TcpStoreClient::wait(const std::vector<std::string>& keys,
                          const std::chrono::milliseconds& timeout) {
  double deadline_s = MonotonicSeconds() + timeout.count() / 1000.0;
  for (const std::string& key : keys) {
    while (!Check(key)) {
      if (MonotonicSeconds() > deadline_s) {
        Fail("key '" + key + "' was not set within " + std::to_string(timeout.count()) +
             " ms (a rank did not join)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

}  // namespace tandem::comm
