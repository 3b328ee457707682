// OpenStreams: the manager's open /v2 streams (`?watch=true` lists, followed instance logs), so
// that a shutdown ends each with its last chunk (a complete response the client can tell from
// a lost connection) instead of dropping the connection mid-stream.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace tandem::cluster::manager {

class OpenStreams {
 public:
  // Registers a stream: `end` ends it (writes its last chunk or makes its producer do so); it
  // is called at most once, by EndAll, or at once here when EndAll already ran. The stream is
  // open until the returned token is destroyed (the token may outlive this object). Thread-safe.
  std::shared_ptr<void> Add(std::function<void()> end);

  // Ends every open stream (calls each `end` outside the lock); a stream added afterwards is
  // ended as it is added. Thread-safe; idempotent.
  void EndAll();

  // Streams registered whose tokens are alive.
  int64_t size() const;

 private:
  struct State {
    std::mutex mutex;
    bool ended = false;
    int64_t next_id = 0;
    std::map<int64_t, std::function<void()>> ends;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace tandem::cluster::manager
