#include "router/coordinator.h"

#include "core/clock.h"
#include "core/logging.h"
#include "protocol/engine_output.h"
#include "protocol/message.h"

namespace tandem::router {

using protocol::MessageType;

Coordinator::Coordinator(CoordinatorOptions options)
    : options_(std::move(options)),
      stats_(ipc::SocketKind::kPull),
      publisher_(ipc::SocketKind::kPub) {
  snapshot_.ranks.resize(options_.dp_size);
  for (int32_t r = 0; r < options_.dp_size; ++r) snapshot_.ranks[r].dp_rank = r;
  last_heard_s_.assign(options_.dp_size, 0);
}

Coordinator::~Coordinator() { Stop(); }

Status Coordinator::Start() {
  TANDEM_RETURN_IF_ERROR(stats_.Bind(options_.stats_endpoint));
  TANDEM_RETURN_IF_ERROR(publisher_.Bind(options_.publish_endpoint));
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void Coordinator::OnEngineReady(int32_t dp_rank, const std::string& input_endpoint) {
  std::lock_guard<std::mutex> lock(mu_);
  if (dp_rank < 0 || dp_rank >= options_.dp_size) return;
  protocol::RankLoad& rank = snapshot_.ranks[dp_rank];
  rank.ready = true;
  rank.alive = true;
  rank.input_endpoint = input_endpoint;
  last_heard_s_[dp_rank] = MonotonicSeconds();
  changed_ = true;
}

void Coordinator::Stop() {
  if (stop_.exchange(true)) return;
  if (thread_.joinable()) thread_.join();
}

protocol::LoadSnapshot Coordinator::CurrentSnapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_;
}

bool Coordinator::UpdateAliveness(double now) {
  bool changed = false;
  for (protocol::RankLoad& rank : snapshot_.ranks) {
    const bool alive = rank.ready && now - last_heard_s_[rank.dp_rank] <= options_.rank_timeout_s;
    if (alive != rank.alive) {
      if (!alive) {
        TLOG_ERROR("coordinator: DP rank {} silent for {:.1f} s; marking it dead", rank.dp_rank,
                   now - last_heard_s_[rank.dp_rank]);
      } else {
        TLOG_INFO("coordinator: DP rank {} is back", rank.dp_rank);
      }
      rank.alive = alive;
      changed = true;
    }
  }
  return changed;
}

namespace {

int64_t Sum(const std::vector<int64_t>& v) {
  int64_t sum = 0;
  for (int64_t x : v) sum += x;
  return sum;
}

// An engine's stats come from two sockets (its loop's, after steps, and its heartbeat
// thread's), so an older picture can arrive after a newer one. Requests received and
// finished only grow: a picture with fewer of either is older and must not undo the newer.
bool OlderThan(const protocol::EngineStats& stats, const protocol::RankLoad& rank) {
  return stats.num_requests_finished < rank.num_requests_finished ||
         Sum(stats.num_received_by_client) < Sum(rank.num_received_by_client);
}

bool LoadDiffers(const protocol::EngineStats& stats, const protocol::RankLoad& rank) {
  return rank.num_waiting != stats.num_waiting || rank.num_running != stats.num_running ||
         rank.kv_cache_usage != stats.kv_cache_usage ||
         rank.num_held_tokens != stats.num_held_tokens ||
         rank.num_received_by_client != stats.num_received_by_client ||
         rank.num_requests_finished != stats.num_requests_finished;
}

bool IsStartWave(const std::string& frame) {
  Result<MessageType> type = protocol::PeekType(frame);
  return type.ok() && *type == MessageType::kStartWave;
}

}  // namespace

void Coordinator::Loop() {
  double last_publish_s = 0;
  while (!stop_) {
    auto frame = stats_.Recv(20);
    const double now = MonotonicSeconds();
    if (!frame.ok()) break;
    std::string snapshot_frame;
    if (frame->has_value() && IsStartWave(**frame)) {
      // DP waves: a rank outside a wave got a request; every rank must join (vLLM
      // DPCoordinator). Relayed as is; ranks already in that wave or past it ignore it.
      (void)publisher_.Send(**frame);
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (frame->has_value()) {
        protocol::EngineStats stats;
        if (protocol::Decode(**frame, &stats).ok() && stats.dp_rank >= 0 &&
            stats.dp_rank < options_.dp_size) {
          protocol::RankLoad& rank = snapshot_.ranks[stats.dp_rank];
          last_heard_s_[stats.dp_rank] = now;
          if (!OlderThan(stats, rank) && LoadDiffers(stats, rank)) {
            rank.num_waiting = stats.num_waiting;
            rank.num_running = stats.num_running;
            rank.kv_cache_usage = stats.kv_cache_usage;
            rank.num_held_tokens = stats.num_held_tokens;
            rank.num_received_by_client = stats.num_received_by_client;
            rank.num_requests_finished = stats.num_requests_finished;
            changed_ = true;
          }
        }
      }
      if (UpdateAliveness(now)) changed_ = true;
      const double since = now - last_publish_s;
      if ((changed_ && since >= options_.min_publish_interval_s) || since >= options_.heartbeat_s) {
        ++snapshot_.seq;
        snapshot_frame = protocol::Encode(MessageType::kLoadSnapshot, snapshot_);
        changed_ = false;
        last_publish_s = now;
      }
    }
    if (!snapshot_frame.empty()) (void)publisher_.Send(snapshot_frame);
  }
}

}  // namespace tandem::router
