// TcpStore: the small key-value store the "gloo" backend rendezvouses through (implements
// gloo::rendezvous::Store). Rank 0 runs the server on the group's rendezvous "host:port"; every
// rank (rank 0 too) is a client over one TCP connection. Keys are written once; `wait` polls.
// Wire format, one request per round trip: op byte ('S' set, 'G' get, 'C' check), u32 key
// length, key, and for 'S' a u32 value length and the value. Replies: 'S' → 1 byte; 'G' → u32
// length + value (length 0xffffffff when absent); 'C' → 1 byte (1 present, 0 absent).
// Store methods throw gloo::IoException on failure (Gloo's contract); GlooProcessGroup catches
// it, so no exception leaves comm/.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "core/status.h"

namespace tandem::comm {

// The server side; lives in rank 0 for the group's lifetime.
class TcpStoreServer {
 public:
  // Listens on host:port (the host's address; all interfaces when that fails to bind).
  // Errors: kInvalidArgument (malformed address), kUnavailable (port in use).
  static Result<std::unique_ptr<TcpStoreServer>> Start(const std::string& host_port);
  ~TcpStoreServer();  // stops accepting, closes every connection, joins the threads

 private:
  TcpStoreServer() = default;
  void AcceptLoop();
  void Serve(int fd);

  int listen_fd_ = -1;
  std::thread accept_thread_;
  std::mutex mu_;
  bool stopping_ = false;
  std::vector<int> client_fds_;
  std::vector<std::thread> client_threads_;
  std::map<std::string, std::vector<char>> data_;
};

class TcpStoreClient : public ::gloo::rendezvous::Store {
 public:
  // Connects to host:port, retrying until timeout_s passed (the server may start later).
  // Errors: kUnavailable naming `group` and the address.
  static Result<std::unique_ptr<TcpStoreClient>> Connect(const std::string& group,
                                                         const std::string& host_port,
                                                         double timeout_s);
  ~TcpStoreClient() override;

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  TcpStoreClient() = default;
  bool Check(const std::string& key);
  [[noreturn]] void Fail(const std::string& what);

  std::string group_;
  std::string address_;
  double timeout_s_ = 60;
  int fd_ = -1;
};

// Splits "host:port" (IPv4 or a name; "[v6]:port" too). Errors: kInvalidArgument.
Result<std::pair<std::string, int>> SplitHostPort(const std::string& host_port);

}  // namespace tandem::comm
