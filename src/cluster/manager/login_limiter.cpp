#include "cluster/manager/login_limiter.h"

#include <cmath>

namespace tandem::cluster::manager {
namespace {

// Keys kept at most: past this, keys whose failures have all expired are dropped (so that
// addresses or names that each fail once cannot grow the map without bound).
constexpr size_t kMaxKeys = 10000;

}  // namespace

LoginLimiter::LoginLimiter(int32_t max_failures, double window_s)
    : max_failures_(max_failures), window_s_(window_s) {}

void LoginLimiter::Prune(std::deque<double>& times, double now_s) const {
  while (!times.empty() && times.front() <= now_s - window_s_) {
    times.pop_front();
  }
}

int64_t LoginLimiter::Wait(const std::string& key, double now_s) {
  auto found = failures_.find(key);
  if (found == failures_.end()) {
    return 0;
  }
  Prune(found->second, now_s);
  if (static_cast<int32_t>(found->second.size()) < max_failures_) {
    return 0;
  }
  // Free once the oldest failure that keeps the count at the limit leaves the window.
  const double oldest = found->second[found->second.size() - max_failures_];
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(oldest + window_s_ - now_s)));
}

int64_t LoginLimiter::RetryAfterS(const std::string& username, const std::string& address,
                                  double now_s) {
  std::lock_guard lock(mutex_);
  return std::max(Wait("user:" + address + " " + username, now_s), Wait("addr:" + address, now_s));
}

void LoginLimiter::Failed(const std::string& username, const std::string& address, double now_s) {
  std::lock_guard lock(mutex_);
  if (failures_.size() >= kMaxKeys) {
    for (auto it = failures_.begin(); it != failures_.end();) {
      Prune(it->second, now_s);
      it = it->second.empty() ? failures_.erase(it) : std::next(it);
    }
  }
  for (const std::string& key : {"user:" + address + " " + username, "addr:" + address}) {
    std::deque<double>& times = failures_[key];
    Prune(times, now_s);
    times.push_back(now_s);
    // Only the last max_failures matter.
    while (static_cast<int32_t>(times.size()) > max_failures_) {
      times.pop_front();
    }
  }
}

void LoginLimiter::Succeeded(const std::string& username, const std::string& address) {
  std::lock_guard lock(mutex_);
  failures_.erase("user:" + address + " " + username);
}

}  // namespace tandem::cluster::manager
