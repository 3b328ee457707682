#include "router/mp_engine_client.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <utility>

#include "core/clock.h"
#include "core/logging.h"
#include "protocol/message.h"

namespace tandem::router {

using protocol::EngineOutput;
using protocol::EngineOutputs;
using protocol::FinishReason;
using protocol::MessageType;

MpEngineClient::MpEngineClient(MpEngineClientOptions options)
    : options_(std::move(options)),
      output_(ipc::SocketKind::kPull),
      snapshots_(ipc::SocketKind::kSub),
      ranks_(options_.dp_size),
      balancer_(options_.policy, options_.num_api_servers, options_.client_index) {}

MpEngineClient::~MpEngineClient() { Shutdown(); }

bool MpEngineClient::ServesRank(int dp_rank) const {
  if (dp_rank < 0 || dp_rank >= options_.dp_size) {
    return false;
  }
  if (options_.num_served_ranks < 0) {
    return true;
  }
  return dp_rank >= options_.first_served_rank &&
         dp_rank < options_.first_served_rank + options_.num_served_ranks;
}

Status MpEngineClient::Start() {
  TANDEM_RETURN_IF_ERROR(output_.Bind(options_.output_endpoint));
  if (!options_.snapshot_endpoint.empty()) {
    TANDEM_RETURN_IF_ERROR(snapshots_.Connect(options_.snapshot_endpoint));
  } else {
    TANDEM_RETURN_IF_ERROR(ConnectRank(0, options_.input_endpoint, /*mark_ready=*/false));
  }
  receiver_ = std::thread([this] { ReceiveLoop(); });
  return Status::Ok();
}

Status MpEngineClient::ConnectRank(int32_t rank, const std::string& endpoint, bool mark_ready) {
  auto socket = std::make_unique<ipc::ZmqSocket>(ipc::SocketKind::kPush);
  TANDEM_RETURN_IF_ERROR(socket->Connect(endpoint));
  std::lock_guard<std::mutex> send_lock(send_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  ranks_[rank].input = std::move(socket);
  ranks_[rank].endpoint = endpoint;
  if (mark_ready) {
    ranks_[rank].ready = true;
    ranks_[rank].last_heard_s = MonotonicSeconds();  // its heartbeats start now
  }
  return Status::Ok();
}

Result<int32_t> MpEngineClient::ChooseRank(int32_t pinned) {
  auto serving = [](const Rank& r) { return r.ready && !r.dead && r.input != nullptr; };
  if (pinned >= 0) {
    if (pinned >= options_.dp_size) {
      return InvalidArgument("X-data-parallel-rank " + std::to_string(pinned) +
                             " is out of range: this server has DP ranks 0.." +
                             std::to_string(options_.dp_size - 1));
    }
    if (!ServesRank(pinned)) {
      return InvalidArgument(
          "X-data-parallel-rank " + std::to_string(pinned) +
          " is not served by this API "
          "server: with hybrid / external DP load balancing it serves DP rank(s) " +
          std::to_string(options_.first_served_rank) + ".." +
          std::to_string(options_.first_served_rank + options_.num_served_ranks - 1) +
          "; send the request to the machine of that rank");
    }
    if (!serving(ranks_[pinned])) {
      return Unavailable("DP rank " + std::to_string(pinned) + " is not serving right now");
    }
    return pinned;
  }
  std::vector<RankView> views(ranks_.size());
  for (size_t r = 0; r < ranks_.size(); ++r) {
    const Rank& rank = ranks_[r];
    RankView& v = views[r];
    v.available = serving(rank);
    v.held_tokens = rank.load.held_tokens();
    v.unreported_tokens = rank.load.unreported_tokens();
  }
  const int32_t rank = balancer_.Pick(views);
  if (spdlog::should_log(spdlog::level::debug)) {
    std::string loads;
    for (const RankView& v : views) {
      loads += " " + std::to_string(v.held_tokens) + "+" + std::to_string(v.unreported_tokens);
    }
    TLOG_DEBUG("route: held+unreported tokens by rank:{} -> rank {}", loads, rank);
  }
  if (rank < 0) {
    bool loading = false;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      loading |= ServesRank(static_cast<int>(r)) && !ranks_[r].ready;
    }
    return Unavailable(loading ? "the engine is still loading the model; retry shortly"
                               : "no engine core is serving; see the server log");
  }
  return rank;
}

Status MpEngineClient::AddRequest(protocol::EngineRequest request, OutputCallback on_output,
                                  int32_t* dp_rank) {
  request.client_index = options_.client_index;
  const std::string frame = protocol::Encode(MessageType::kAddRequest, request);
  // Sends go out in the order their sequence numbers are taken (both under send_mu_), so the
  // k-th request a rank reports receiving from us is our k-th send to it.
  std::lock_guard<std::mutex> send_lock(send_mu_);
  // Load is tracked for the balancer only with data parallel: without a coordinator no
  // snapshot would ever forget a send.
  const bool track_load = !options_.snapshot_endpoint.empty();
  int32_t rank = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto chosen = ChooseRank(request.data_parallel_rank);
    if (!chosen.ok()) {
      return chosen.status();
    }
    rank = *chosen;
    // Under mu_, which the receive thread takes before it calls on_output.
    if (dp_rank != nullptr) {
      *dp_rank = rank;
    }
    callbacks_[request.request_id] = std::move(on_output);
    rank_of_request_[request.request_id] = rank;
    Rank& r = ranks_[rank];
    if (r.in_flight.empty()) {
      r.last_progress_s = MonotonicSeconds();  // its clock starts now
    }
    r.in_flight.insert(request.request_id);
    if (track_load) {
      r.load.OnSend(static_cast<int64_t>(request.prompt_token_ids.size()) +
                    request.sampling.max_tokens);
    }
  }
  const Status st = ranks_[rank].input->Send(frame);
  if (!st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    callbacks_.erase(request.request_id);
    rank_of_request_.erase(request.request_id);
    Rank& r = ranks_[rank];
    r.in_flight.erase(request.request_id);
    if (track_load) {
      r.load.OnSendFailed();
    }
  }
  return st;
}

void MpEngineClient::AbortRequest(const std::string& request_id) {
  int32_t rank = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = rank_of_request_.find(request_id);
    if (it == rank_of_request_.end()) {
      return;
    }
    rank = it->second;
    rank_of_request_.erase(it);
    callbacks_.erase(request_id);
    ranks_[rank].in_flight.erase(request_id);
  }
  protocol::AbortRequests abort{{request_id}};
  std::lock_guard<std::mutex> send_lock(send_mu_);
  if (ranks_[rank].input) {
    (void)ranks_[rank].input->Send(protocol::Encode(MessageType::kAbortRequests, abort));
  }
}

bool MpEngineClient::IsReady() const {
  std::lock_guard<std::mutex> lock(mu_);
  // Start-up ends when every rank has been ready (a request pinned to any rank can go);
  // after that, serving as long as one rank is.
  bool all = true, any = false;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    if (!ServesRank(static_cast<int>(i))) {
      continue;
    }
    const Rank& r = ranks_[i];
    all = all && r.ready && r.input;
    any = any || (r.ready && !r.dead && !r.stalled && r.input);
  }
  if (all) {
    started_up_ = true;
  }
  return started_up_ && any;
}

std::string MpEngineClient::NotReadyReason() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_up_) {
    return "the engine is still loading the model; retry shortly";
  }
  for (const Rank& r : ranks_) {
    if (r.stalled && !r.dead) {
      return "the engine has built no output for its requests in " +
             std::to_string(static_cast<int>(options_.iteration_timeout_s)) +
             " s (VLLM_ENGINE_ITERATION_TIMEOUT_S): a step is stuck (see the server log)";
    }
  }
  return "no engine core is serving: every DP rank was lost (see the server log)";
}

bool MpEngineClient::RankAlive(int dp_rank) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (dp_rank < 0 || dp_rank >= static_cast<int>(ranks_.size())) {
    return false;
  }
  const Rank& r = ranks_[dp_rank];
  return r.ready && !r.dead;
}

protocol::EngineStats MpEngineClient::LatestStats(int dp_rank) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (dp_rank < 0 || dp_rank >= static_cast<int>(ranks_.size())) {
    return {};
  }
  return ranks_[dp_rank].stats;
}

bool MpEngineClient::WaitReady(double timeout_s) const {
  const double deadline = MonotonicSeconds() + timeout_s;
  while (!IsReady() && !stop_ && MonotonicSeconds() < deadline) {
    bool all_dead = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t r = 0; r < ranks_.size(); ++r) {
        all_dead &= !ServesRank(static_cast<int>(r)) || ranks_[r].dead;
      }
    }
    if (all_dead) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return IsReady();
}

void MpEngineClient::MarkEngineDead(const std::string& reason, int dp_rank) {
  for (int32_t r = 0; r < options_.dp_size; ++r) {
    if ((dp_rank < 0 || dp_rank == r) && ServesRank(r)) {
      FailRank(r, reason);
    }
  }
}

void MpEngineClient::FailRank(int32_t rank, const std::string& reason) {
  std::vector<std::pair<std::string, OutputCallback>> pending;
  std::vector<int32_t> stepping_with_it;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Rank& r = ranks_[rank];
    if (r.dead) {
      return;
    }
    r.dead = true;
    if (r.stats.lockstep) {
      // Expert-parallel ranks step together: the others now wait in collectives the lost
      // rank will never enter, so none of them can finish anything.
      for (size_t o = 0; o < ranks_.size(); ++o) {
        if (static_cast<int32_t>(o) != rank && !ranks_[o].dead && ServesRank(static_cast<int>(o))) {
          stepping_with_it.push_back(static_cast<int32_t>(o));
        }
      }
    }
    for (const std::string& id : r.in_flight) {
      auto it = callbacks_.find(id);
      if (it != callbacks_.end()) {
        pending.emplace_back(id, std::move(it->second));
        callbacks_.erase(it);
      }
      rank_of_request_.erase(id);
    }
    r.in_flight.clear();
    r.load.Clear();
  }
  TLOG_ERROR("DP rank {} lost: {}; {} in-flight request(s) fail", rank, reason, pending.size());
  for (auto& [id, callback] : pending) {
    EngineOutput out;
    out.request_id = id;
    out.finish_reason = static_cast<uint8_t>(FinishReason::kError);
    out.error = "DP rank " + std::to_string(rank) + " (its engine core) died: " + reason +
                "; the request could not finish";
    callback(out);
  }
  for (int32_t other : stepping_with_it) {
    FailRank(other, "DP rank " + std::to_string(rank) +
                        " was lost and the expert-parallel ranks step together (" + reason + ")");
  }
  bool all_lost = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    bool every_served_rank_dead = true;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      every_served_rank_dead &= !ServesRank(static_cast<int>(r)) || ranks_[r].dead;
    }
    all_lost = !all_lost_reported_ && every_served_rank_dead;
    if (all_lost) {
      all_lost_reported_ = true;
    }
  }
  if (all_lost && options_.on_all_ranks_lost) {
    options_.on_all_ranks_lost(reason);
  }
}

void MpEngineClient::Shutdown() {
  if (stop_.exchange(true)) {
    return;
  }
  if (receiver_.joinable()) {
    receiver_.join();
  }
  if (!options_.shutdown_engines) {
    return;
  }
  std::lock_guard<std::mutex> send_lock(send_mu_);
  for (Rank& r : ranks_) {
    if (r.input && r.ready && !r.dead) {
      (void)r.input->Send(protocol::Encode(MessageType::kShutdown, protocol::AbortRequests{}));
    }
  }
}

void MpEngineClient::ReceiveLoop() {
  std::vector<ipc::ZmqSocket*> sockets = {&output_};
  if (!options_.snapshot_endpoint.empty()) {
    sockets.push_back(&snapshots_);
  }
  while (!stop_) {
    auto readable = ipc::ZmqSocket::PollReadable(sockets, 100);
    if (!readable.ok()) {
      break;
    }
    if ((*readable)[0]) {
      auto frame = output_.Recv(0);
      if (frame.ok() && frame->has_value()) {
        HandleOutputs(**frame);
      }
    }
    if (sockets.size() > 1 && (*readable)[1]) {
      auto frame = snapshots_.Recv(0);
      if (frame.ok() && frame->has_value()) {
        HandleSnapshot(**frame);
      }
    }
    CheckHeartbeats();
  }
}

void MpEngineClient::HandleOutputs(const std::string& frame) {
  auto type = protocol::PeekType(frame);
  if (!type.ok()) {
    return;
  }
  EngineOutputs outputs;
  if (*type == MessageType::kReady) {
    if (!protocol::Decode(frame, &outputs.stats).ok()) {
      return;
    }
  } else if (*type == MessageType::kOutputs) {
    if (!protocol::Decode(frame, &outputs).ok()) {
      TLOG_ERROR("dropping an undecodable engine output frame ({} bytes)", frame.size());
      return;
    }
  } else {
    return;
  }
  const int32_t rank = outputs.stats.dp_rank;
  if (rank < 0 || rank >= options_.dp_size) {
    return;
  }
  std::vector<std::pair<OutputCallback, const EngineOutput*>> calls;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Rank& r = ranks_[rank];
    // A heartbeat sent before the last outputs may arrive after them: keep the newest stats.
    // A newer seq is progress: the engine built outputs since.
    if (outputs.stats.seq > r.stats.seq || !outputs.outputs.empty()) {
      r.last_progress_s = MonotonicSeconds();
    }
    if (outputs.stats.seq >= r.stats.seq) {
      r.stats = outputs.stats;
    }
    r.last_heard_s = MonotonicSeconds();
    if (*type == MessageType::kReady && options_.snapshot_endpoint.empty()) {
      r.ready = true;
    }
    for (const EngineOutput& out : outputs.outputs) {
      auto it = callbacks_.find(out.request_id);
      if (it == callbacks_.end()) {
        continue;  // aborted by us: drop late outputs
      }
      calls.emplace_back(it->second, &out);
      if (out.finish_reason != static_cast<uint8_t>(FinishReason::kNone)) {
        callbacks_.erase(it);
        rank_of_request_.erase(out.request_id);
        r.in_flight.erase(out.request_id);
      }
    }
  }
  for (auto& [callback, out] : calls) {
    callback(*out);
  }
}

void MpEngineClient::HandleSnapshot(const std::string& frame) {
  Result<protocol::MessageType> type = protocol::PeekType(frame);
  if (!type.ok() || *type != protocol::MessageType::kLoadSnapshot) {
    return;  // e.g. StartWave
  }
  protocol::LoadSnapshot snapshot;
  if (!protocol::Decode(frame, &snapshot).ok()) {
    return;
  }
  std::vector<std::pair<int32_t, std::string>> to_connect;
  std::vector<int32_t> to_fail;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const protocol::RankLoad& load : snapshot.ranks) {
      if (load.dp_rank < 0 || load.dp_rank >= options_.dp_size) {
        continue;
      }
      Rank& r = ranks_[load.dp_rank];
      const size_t me = static_cast<size_t>(options_.client_index);
      r.load.OnSnapshot(load.num_held_tokens, me < load.num_received_by_client.size()
                                                  ? load.num_received_by_client[me]
                                                  : 0);
      if (!ServesRank(load.dp_rank)) {
        continue;  // another machine's API servers serve it
      }
      if (load.ready && !r.ready && load.alive) {
        to_connect.emplace_back(load.dp_rank, load.input_endpoint);  // ready once connected
      }
      if (r.ready && !load.alive && !r.dead) {
        to_fail.push_back(load.dp_rank);
      }
    }
  }
  for (auto& [rank, endpoint] : to_connect) {
    Status st = ConnectRank(rank, endpoint, /*mark_ready=*/true);
    if (!st.ok()) {
      TLOG_ERROR("DP rank {}: {}", rank, st.message());
    }
  }
  for (int32_t rank : to_fail) {
    FailRank(rank, "the coordinator stopped hearing from it");
  }
}

double EngineIterationTimeoutS() {
  const char* text = std::getenv("VLLM_ENGINE_ITERATION_TIMEOUT_S");
  if (text == nullptr || *text == '\0') {
    return 60.0;
  }
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value > 0)) {
    TLOG_WARN(
        "VLLM_ENGINE_ITERATION_TIMEOUT_S='{}' is not a positive number of seconds; "
        "using 60",
        text);
    return 60.0;
  }
  return value;
}

void MpEngineClient::CheckHeartbeats() {
  std::vector<int32_t> silent;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const double now = MonotonicSeconds();
    // The step watchdog: work waiting and no output built for iteration_timeout_s.
    for (size_t i = 0; i < ranks_.size(); ++i) {
      Rank& rank = ranks_[i];
      const bool stalled = options_.iteration_timeout_s > 0 && rank.ready && !rank.dead &&
                           !rank.in_flight.empty() &&
                           now - rank.last_progress_s > options_.iteration_timeout_s;
      if (stalled != rank.stalled) {
        if (stalled) {
          TLOG_ERROR(
              "DP rank {}: no output for its {} request(s) in flight for {:.0f} s "
              "(VLLM_ENGINE_ITERATION_TIMEOUT_S); /health answers 503 until it steps",
              i, rank.in_flight.size(), now - rank.last_progress_s);
        } else {
          TLOG_INFO("DP rank {}: stepping again", i);
        }
        rank.stalled = stalled;
      }
    }
    for (size_t r = 0; r < ranks_.size(); ++r) {
      if (ranks_[r].ready && !ranks_[r].dead &&
          now - ranks_[r].last_heard_s > options_.heartbeat_timeout_s) {
        silent.push_back(static_cast<int32_t>(r));
      }
    }
  }
  for (int32_t r : silent) {
    FailRank(r, "no heartbeat for " + std::to_string(options_.heartbeat_timeout_s) + " s");
  }
}

}  // namespace tandem::router
