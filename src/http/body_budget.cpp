#include "http/body_budget.h"

namespace tandem::http {

BodyBudget::BodyBudget(int64_t max_total_bytes, int64_t max_per_address_bytes)
    : max_total_bytes_(max_total_bytes), max_per_address_bytes_(max_per_address_bytes) {}

bool BodyBudget::Charge(const std::string& address, int64_t bytes) {
  if (bytes <= 0) {
    return true;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = by_address_.find(address);
  const int64_t held = found == by_address_.end() ? 0 : found->second;
  if (total_ + bytes > max_total_bytes_ || held + bytes > max_per_address_bytes_) {
    return false;
  }
  total_ += bytes;
  by_address_[address] = held + bytes;
  return true;
}

void BodyBudget::Release(const std::string& address, int64_t bytes) {
  if (bytes <= 0) {
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  total_ -= bytes;
  auto found = by_address_.find(address);
  if (found == by_address_.end()) {
    return;
  }
  found->second -= bytes;
  if (found->second <= 0) {
    by_address_.erase(found);
  }
}

std::shared_ptr<const void> BodyBudget::Hold(const std::string& address, int64_t bytes) {
  std::weak_ptr<BodyBudget> budget = weak_from_this();
  return std::shared_ptr<const void>(nullptr, [budget, address, bytes](const void*) {
    if (auto alive = budget.lock()) {
      alive->Release(address, bytes);
    }
  });
}

int64_t BodyBudget::total_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return total_;
}

}  // namespace tandem::http
