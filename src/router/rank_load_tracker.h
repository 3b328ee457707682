// RankLoadTracker: one DP rank's load as one API server sees it — the tokens of work the
// coordinator's latest snapshot says the rank holds, plus this API server's sends that the
// snapshot does not count yet. Pure logic, no sockets; not thread-safe. The caller must keep
// each OnSend, the send itself and any OnSendFailed together, with no other send to the same
// rank in between (MpEngineClient holds its send mutex across all three): numbers must follow
// the order in which the rank receives the requests.
//
// "Not counted yet" is exact, not vLLM's reset-on-every-snapshot: sends are numbered 1, 2, …
// per rank, in the order they leave, and the rank reports how many it has received from this
// API server (EngineStats::num_received_by_client) in the same stats as its load, so a
// snapshot taken before a send arrived keeps that send in the count.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

namespace tandem::router {

class RankLoadTracker {
 public:
  // A request weighing `tokens` (prompt + max_tokens) is being sent to the rank.
  void OnSend(int64_t tokens);
  // The newest send never left (the socket refused it): it will never be counted.
  void OnSendFailed();
  // A snapshot says the rank holds `held_tokens` having received `received_from_us` of our
  // requests. Ignored when it has received fewer than an earlier snapshot said (an older
  // picture); otherwise forgets the sends it counts.
  void OnSnapshot(int64_t held_tokens, int64_t received_from_us);
  // The rank was lost: nothing it holds will be counted again.
  void Clear();

  int64_t held_tokens() const { return held_tokens_; }
  // Σ tokens of our sends the latest snapshot does not count.
  int64_t unreported_tokens() const { return unreported_tokens_; }
  int64_t num_unreported() const { return static_cast<int64_t>(unreported_.size()); }

 private:
  int64_t held_tokens_ = 0;
  int64_t num_received_ = 0;  // of our requests, per the latest snapshot
  int64_t num_sent_ = 0;
  int64_t unreported_tokens_ = 0;
  std::deque<std::pair<int64_t, int64_t>> unreported_;  // (send number, tokens), oldest first
};

}  // namespace tandem::router
