#include "server/openai/response_store.h"

#include <iterator>

#include "core/check.h"

namespace tandem::server::openai {

ResponseStore::ResponseStore(size_t capacity, size_t max_bytes)
    : capacity_(capacity), max_bytes_(max_bytes) {
  TANDEM_CHECK(capacity_ > 0) << "a ResponseStore needs room for at least one response";
}

void ResponseStore::Remove(std::list<Entry>::iterator it) {
  bytes_ -= it->bytes;
  index_.erase(it->id);
  entries_.erase(it);
}

void ResponseStore::Put(const std::string& id, StoredResponse response) {
  // Counted outside the lock: the JSON text's size (replace: invalid UTF-8 cannot throw).
  const size_t bytes =
      id.size() +
      response.response.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size() +
      response.conversation.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size();
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(id); it != index_.end()) {
    Remove(it->second);
  }
  if (bytes > max_bytes_) {
    return;  // larger than the whole store: not kept
  }
  entries_.push_front(Entry{id, std::move(response), bytes});
  index_[id] = entries_.begin();
  bytes_ += bytes;
  while (entries_.size() > capacity_ || bytes_ > max_bytes_) {
    Remove(std::prev(entries_.end()));
  }
}

std::optional<StoredResponse> ResponseStore::Get(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(id);
  if (it == index_.end()) {
    return std::nullopt;
  }
  entries_.splice(entries_.begin(), entries_, it->second);  // iterators stay valid
  return it->second->response;
}

bool ResponseStore::Erase(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(id);
  if (it == index_.end()) {
    return false;
  }
  Remove(it->second);
  return true;
}

size_t ResponseStore::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

size_t ResponseStore::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace tandem::server::openai
