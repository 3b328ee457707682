// BodyBudget: the request bytes a server holds for requests it has not finished with — bodies
// being received, and bodies read but waiting for (or in) their handler — over all connections
// and per client address. A request whose body would pass either cap is refused (503) before
// its body is read: with a Content-Length the whole length is charged when the header arrives,
// a chunked body as its chunks arrive. The charge is released when the last copy of the request
// (HttpRequest::body_charge) goes away.
// Why: 250 clients sending 15 MB bodies each took `tandem serve` to 3.5 GB (issue 31, item 7).
// Reference: nginx limit_conn / client_max_body_size act per connection; this bounds the sum.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace tandem::http {

class BodyBudget : public std::enable_shared_from_this<BodyBudget> {
 public:
  // Caps in bytes (> 0).
  BodyBudget(int64_t max_total_bytes, int64_t max_per_address_bytes);

  // Charges `bytes` to `address`; false (nothing charged) when the total or the address's share
  // would pass its cap. Thread-safe.
  bool Charge(const std::string& address, int64_t bytes);
  // Gives back bytes charged to `address`. Thread-safe.
  void Release(const std::string& address, int64_t bytes);

  // A handle that releases `bytes` of `address` when its last copy is destroyed (the budget
  // may be gone by then). `bytes` must have been charged.
  std::shared_ptr<const void> Hold(const std::string& address, int64_t bytes);

  int64_t max_total_bytes() const { return max_total_bytes_; }
  int64_t max_per_address_bytes() const { return max_per_address_bytes_; }
  int64_t total_bytes() const;

 private:
  const int64_t max_total_bytes_;
  const int64_t max_per_address_bytes_;
  mutable std::mutex mutex_;
  int64_t total_ = 0;
  std::map<std::string, int64_t> by_address_;  // only addresses holding bytes
};

}  // namespace tandem::http
