#include "cluster/manager/open_streams.h"

#include <utility>
#include <vector>

namespace tandem::cluster::manager {

std::shared_ptr<void> OpenStreams::Add(std::function<void()> end) {
  int64_t id = 0;
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->ended) {
      id = ++state_->next_id;
      state_->ends.emplace(id, end);  // a copy: `end` is called below when already ended
    }
  }
  if (id == 0) {
    end();
    return std::make_shared<int>(0);
  }
  return std::shared_ptr<void>(nullptr, [state = state_, id](void*) {
    std::lock_guard lock(state->mutex);
    state->ends.erase(id);
  });
}

void OpenStreams::EndAll() {
  std::vector<std::function<void()>> ends;
  {
    std::lock_guard lock(state_->mutex);
    state_->ended = true;
    for (auto& [id, end] : state_->ends) {
      ends.push_back(std::move(end));
    }
    state_->ends.clear();
  }
  for (auto& end : ends) {
    end();
  }
}

int64_t OpenStreams::size() const {
  std::lock_guard lock(state_->mutex);
  return static_cast<int64_t>(state_->ends.size());
}

}  // namespace tandem::cluster::manager
