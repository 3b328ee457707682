#include "router/rank_load_tracker.h"

namespace tandem::router {

void RankLoadTracker::OnSend(int64_t tokens) {
  unreported_.emplace_back(++num_sent_, tokens);
  unreported_tokens_ += tokens;
}

void RankLoadTracker::OnSendFailed() {
  // A snapshot can have forgotten the failed send only by counting it, which the rank cannot.
  if (!unreported_.empty() && unreported_.back().first == num_sent_) {
    unreported_tokens_ -= unreported_.back().second;
    unreported_.pop_back();
  }
  if (num_sent_ > 0) --num_sent_;
}

void RankLoadTracker::OnSnapshot(int64_t held_tokens, int64_t received_from_us) {
  if (received_from_us < num_received_) return;
  num_received_ = received_from_us;
  held_tokens_ = held_tokens;
  while (!unreported_.empty() && unreported_.front().first <= received_from_us) {
    unreported_tokens_ -= unreported_.front().second;
    unreported_.pop_front();
  }
}

void RankLoadTracker::Clear() {
  unreported_.clear();
  unreported_tokens_ = 0;
  held_tokens_ = 0;
}

}  // namespace tandem::router
