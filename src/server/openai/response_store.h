// ResponseStore: the responses of POST /v1/responses kept in process memory (store != false),
// so that GET /v1/responses/{id} can return them and a later request's previous_response_id can
// continue their conversation.
//
// Bounded: at most `capacity` responses and `max_bytes` bytes of them (their JSON text, the
// conversation included); storing one more evicts the least recently used (stored or read)
// until both hold. A response larger than max_bytes alone is not kept. A response is gone after a
// restart and is not seen by other API server processes
// (--api-server-count > 1 keeps one store per process). vLLM keeps responses in an unbounded dict
// behind VLLM_ENABLE_RESPONSES_API_STORE; OpenAI keeps them 30 days.
// Reference: vLLM entrypoints/openai/serving_responses.py (response_store, msg_store).
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace tandem::server::openai {

// One stored response.
struct StoredResponse {
  nlohmann::json response;              // the response object as it was returned
  nlohmann::ordered_json conversation;  // chat messages of the whole conversation so far: the
                                        // earlier turns, this request's input and its output
                                        // as an assistant message; never the instructions
};

class ResponseStore {
 public:
  // The number of responses kept when no capacity is given.
  static constexpr size_t kDefaultCapacity = 1000;
  // The bytes kept when no bound is given.
  static constexpr size_t kDefaultMaxBytes = size_t{256} << 20;

  explicit ResponseStore(size_t capacity = kDefaultCapacity, size_t max_bytes = kDefaultMaxBytes);

  // Stores (or replaces) the response `id`, evicting the least recently used one when full.
  // Thread-safe.
  void Put(const std::string& id, StoredResponse response);

  // The response `id`, marked as recently used; nullopt when unknown or evicted. Thread-safe.
  std::optional<StoredResponse> Get(const std::string& id);

  // Forgets `id`; false when it was not stored. Thread-safe.
  bool Erase(const std::string& id);

  size_t size() const;
  size_t bytes() const;  // of the responses kept, as counted against max_bytes

 private:
  struct Entry {
    std::string id;
    StoredResponse response;
    size_t bytes = 0;
  };
  void Remove(std::list<Entry>::iterator it);  // mutex_ held

  const size_t capacity_;
  const size_t max_bytes_;
  size_t bytes_ = 0;
  mutable std::mutex mutex_;
  std::list<Entry> entries_;                                           // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;  // id → its entry
};

}  // namespace tandem::server::openai
