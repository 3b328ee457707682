// LoginLimiter: failed logins counted per (username, client address) and per client address
// over a sliding window; past the limit a login is refused with 429 and Retry-After before its
// password is checked (issue 31, item 4: 60 wrong passwords in one second were all checked).
// Not per username alone: then anyone could lock the admin out from every address.
// Reference: OWASP Authentication Cheat Sheet ("account lockout" / throttling); GPUStack has no
// throttle of its own.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>

namespace tandem::cluster::manager {

class LoginLimiter {
 public:
  // At most `max_failures` failures per (username, address) and per address within
  // `window_s` seconds.
  LoginLimiter(int32_t max_failures = 10, double window_s = 60);

  // Seconds until a login for `username` from `address` may be tried again; 0 = now.
  // Thread-safe.
  int64_t RetryAfterS(const std::string& username, const std::string& address, double now_s);
  // A failed login of `username` from `address` at `now_s`. Thread-safe.
  void Failed(const std::string& username, const std::string& address, double now_s);
  // A successful login: the (username, address) failures are forgotten, not the address's.
  // Thread-safe.
  void Succeeded(const std::string& username, const std::string& address);

 private:
  // Failure times per key ("user:ADDRESS NAME" / "addr:ADDRESS"), the oldest first.
  using Failures = std::map<std::string, std::deque<double>>;
  void Prune(std::deque<double>& times, double now_s) const;
  int64_t Wait(const std::string& key, double now_s);  // mutex_ held

  const int32_t max_failures_;
  const double window_s_;
  std::mutex mutex_;
  Failures failures_;
};

}  // namespace tandem::cluster::manager
