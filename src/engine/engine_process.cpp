#include "engine/engine_process.h"

#include "engine/dp_wave.h"
#include "engine/heartbeat_thread.h"

#include <unistd.h>

#include <memory>
#include <unordered_map>
#include <utility>

#include "core/clock.h"
#include "core/logging.h"
#include "ipc/zmq_socket.h"
#include "protocol/engine_output.h"
#include "protocol/engine_request.h"
#include "protocol/message.h"

namespace tandem::engine {

namespace {

using protocol::MessageType;

enum class FrameAction { kContinue, kShutdown };

class EngineLoop {
 public:
  EngineLoop(EngineCore& core, const EngineLoopOptions& options,
             std::unique_ptr<ipc::ZmqSocket> input,
             std::vector<std::unique_ptr<ipc::ZmqSocket>> outputs,
             std::unique_ptr<ipc::ZmqSocket> stats)
      : core_(core),
        options_(options),
        input_(std::move(input)),
        outputs_(std::move(outputs)),
        stats_(std::move(stats)) {}

  int Run() {
    const pid_t parent_pid = getppid();
    if (!SendToAll(protocol::Encode(MessageType::kReady, core_.Stats()))) return 1;
    if (!options_.bind_output) {
      // Liveness from its own thread: a long step must not look like a dead engine.
      std::vector<std::string> endpoints = options_.output_endpoints;
      if (endpoints.empty()) endpoints.push_back(options_.output_endpoint);
      auto hb = HeartbeatThread::Start(endpoints, options_.stats_endpoint,
                                       options_.heartbeat_interval_s, core_.Stats());
      if (!hb.ok()) {
        TLOG_ERROR("engine loop: {}", hb.status().ToString());
        return 1;
      }
      heartbeat_ = std::move(hb).value();
    }
    double last_sent_s = MonotonicSeconds();
    while (true) {
      // Drain every waiting frame; block (briefly) only when there is nothing to compute.
      const bool wave_running = waves_ && waves_->running();
      const bool busy = wave_running || core_.HasWork();
      Result<FrameAction> drained = DrainFrames(busy ? 0 : options_.idle_poll_ms);
      if (!drained.ok()) {
        TLOG_ERROR("engine loop: {}", drained.status().ToString());
        return 1;
      }
      if (*drained == FrameAction::kShutdown) {
        TLOG_INFO("engine loop: shutdown requested");
        return 0;
      }
      if (options_.exit_when_parent_dies && getppid() != parent_pid) {
        TLOG_WARN("engine loop: parent process {} is gone; exiting", parent_pid);
        return 0;
      }
      if (waves_ && !waves_->running() && core_.HasWork()) {
        // Outside a wave only aborts can be pending; answer them without a forward.
        if (!SendOutputs(core_.TakePendingOutputs())) return 1;
      } else if (waves_ ? waves_->running() : core_.HasWork()) {
        protocol::EngineOutputs outputs = core_.Step();
        if (!outputs.outputs.empty()) {
          if (!SendOutputs(std::move(outputs))) return 1;
          last_sent_s = MonotonicSeconds();
        }
        MaybeSendStats(/*force=*/false);
        if (waves_) {
          if (Status st = waves_->AfterStep(core_.HasUnfinishedRequests()); !st.ok()) {
            TLOG_ERROR("engine loop: {}", st.ToString());
            return 1;
          }
        }
      }
      // A request that arrived or finished (or was refused) changes the load the DP load
      // balancer reads: reported now, not up to stats_interval_s later (vLLM's engines send
      // their counts with every output batch).
      if (load_changed_) MaybeSendStats(/*force=*/true);
      if (heartbeat_) {
        heartbeat_->Publish(core_.Stats());
        continue;
      }
      // Without a heartbeat thread (a bound output socket): stats at least every
      // heartbeat_interval_s from this loop.
      if (MonotonicSeconds() - last_sent_s >= options_.heartbeat_interval_s) {
        protocol::EngineOutputs heartbeat;
        heartbeat.stats = core_.Stats();
        if (!SendToAll(protocol::Encode(MessageType::kOutputs, heartbeat))) return 1;
        MaybeSendStats(/*force=*/true);
        last_sent_s = MonotonicSeconds();
      }
    }
  }

  // Joins the DP waves when the core steps in lock-step. Errors: as DpWave::Connect.
  Status StartWaves() {
    if (!core_.lockstep()) return Status::Ok();
    TANDEM_ASSIGN_OR_RETURN(waves_, DpWave::Connect(options_.wave_endpoint, options_.any_busy,
                                                    options_.wave_sync_interval_steps, stats_.get(),
                                                    core_.Stats().dp_rank));
    return Status::Ok();
  }

 private:
  // Reads every frame waiting on the request socket (and the wave socket), waiting up to
  // timeout_ms for the first.
  Result<FrameAction> DrainFrames(int timeout_ms) {
    std::vector<ipc::ZmqSocket*> sockets = {input_.get()};
    if (waves_) sockets.push_back(&waves_->socket());
    TANDEM_ASSIGN_OR_RETURN(std::vector<bool> readable,
                            ipc::ZmqSocket::PollReadable(sockets, timeout_ms));
    (void)readable;
    while (true) {
      TANDEM_ASSIGN_OR_RETURN(std::optional<std::string> frame, input_->Recv(0));
      if (!frame.has_value()) break;
      if (HandleFrame(*frame) == FrameAction::kShutdown) return FrameAction::kShutdown;
    }
    if (waves_) {
      TANDEM_ASSIGN_OR_RETURN(const bool joined, waves_->DrainStartWaves());
      if (joined) core_.NoteWaveStarted();
    }
    return FrameAction::kContinue;
  }

  FrameAction HandleFrame(const std::string& frame) {
    Result<MessageType> type = protocol::PeekType(frame);
    if (!type.ok()) {
      TLOG_WARN("engine loop: skipping frame: {}", type.status().ToString());
      return FrameAction::kContinue;
    }
    switch (*type) {
      case MessageType::kAddRequest:
        HandleAddRequest(frame);
        return FrameAction::kContinue;
      case MessageType::kAbortRequests: {
        protocol::AbortRequests abort;
        Status status = protocol::Decode(frame, &abort);
        if (status.ok()) {
          core_.AbortRequests(abort.request_ids);
        } else {
          TLOG_WARN("engine loop: skipping AbortRequests frame: {}", status.ToString());
        }
        return FrameAction::kContinue;
      }
      case MessageType::kShutdown:
        return FrameAction::kShutdown;
      default:
        TLOG_WARN("engine loop: skipping frame of unexpected type {}", static_cast<int>(*type));
        return FrameAction::kContinue;
    }
  }

  void HandleAddRequest(const std::string& frame) {
    protocol::EngineRequest request;
    Status status = protocol::Decode(frame, &request);
    if (!status.ok()) {
      TLOG_WARN("engine loop: skipping AddRequest frame: {}", status.ToString());
      return;
    }
    const std::string request_id = request.request_id;
    const int32_t client = request.client_index;
    if (client < 0 || client >= static_cast<int32_t>(outputs_.size())) {
      TLOG_WARN("engine loop: request '{}' names API server {}, but there are {}; dropped",
                request_id, client, outputs_.size());
      return;
    }
    client_of_request_[request_id] = client;
    core_.NoteReceived(client);
    load_changed_ = true;
    status = core_.AddRequest(std::move(request));
    if (status.ok()) {
      if (waves_ && waves_->OnRequest()) core_.NoteWaveStarted();
      return;
    }
    TLOG_WARN("engine loop: rejected request '{}': {}", request_id, status.ToString());
    protocol::EngineOutputs rejected;
    protocol::EngineOutput output;
    output.request_id = request_id;
    output.finish_reason = static_cast<uint8_t>(protocol::FinishReason::kError);
    output.error = status.message();
    rejected.outputs.push_back(std::move(output));
    rejected.stats = core_.Stats();
    SendOutputs(std::move(rejected));
  }

  // Splits a step's outputs by the API server that sent each request; every API server
  // that had outputs gets one frame with them and the stats.
  bool SendOutputs(protocol::EngineOutputs outputs) {
    std::vector<protocol::EngineOutputs> by_client(outputs_.size());
    for (protocol::EngineOutput& out : outputs.outputs) {
      auto it = client_of_request_.find(out.request_id);
      const int32_t client = it == client_of_request_.end() ? 0 : it->second;
      if (out.finish_reason != static_cast<uint8_t>(protocol::FinishReason::kNone)) {
        load_changed_ = true;
        if (it != client_of_request_.end()) client_of_request_.erase(it);
      }
      by_client[client].outputs.push_back(std::move(out));
    }
    for (size_t c = 0; c < by_client.size(); ++c) {
      if (by_client[c].outputs.empty()) continue;
      by_client[c].stats = outputs.stats;
      if (!SendFrame(*outputs_[c], protocol::Encode(MessageType::kOutputs, by_client[c]))) {
        return false;
      }
    }
    return true;
  }

  bool SendToAll(const std::string& frame) {
    for (auto& out : outputs_) {
      if (!SendFrame(*out, frame)) return false;
    }
    return true;
  }

  // Load for the DP coordinator: after a step in which a request arrived or finished, else
  // at most every stats_interval_s, and always with the heartbeat (force).
  void MaybeSendStats(bool force) {
    if (!stats_) return;
    const double now = MonotonicSeconds();
    if (!force && now - last_stats_s_ < options_.stats_interval_s) return;
    SendFrame(*stats_, protocol::Encode(MessageType::kEngineStats, core_.Stats()));
    last_stats_s_ = now;
    load_changed_ = false;
  }

  static bool SendFrame(ipc::ZmqSocket& socket, const std::string& frame) {
    Status status = socket.Send(frame);
    if (!status.ok()) TLOG_ERROR("engine loop: {}", status.ToString());
    return status.ok();
  }

  EngineCore& core_;
  const EngineLoopOptions& options_;
  std::unique_ptr<ipc::ZmqSocket> input_;
  std::vector<std::unique_ptr<ipc::ZmqSocket>> outputs_;
  std::unique_ptr<ipc::ZmqSocket> stats_;
  std::unordered_map<std::string, int32_t> client_of_request_;
  double last_stats_s_ = 0;
  bool load_changed_ = false;  // a request arrived or finished since the last stats sent
  std::unique_ptr<HeartbeatThread> heartbeat_;  // null when the output socket is bound
  std::unique_ptr<DpWave> waves_;               // null unless the core steps in lock-step
};

}  // namespace

int RunEngineLoop(EngineCore& core, const EngineLoopOptions& options) {
  return RunEngineLoop(core, options, nullptr);
}

int RunEngineLoop(EngineCore& core, const EngineLoopOptions& options,
                  std::unique_ptr<ipc::ZmqSocket> bound_input) {
  std::unique_ptr<ipc::ZmqSocket> input = std::move(bound_input);
  Status status;
  if (!input) {
    input = std::make_unique<ipc::ZmqSocket>(ipc::SocketKind::kPull);
    status = options.bind_input ? input->Bind(options.input_endpoint)
                                : input->Connect(options.input_endpoint);
  }
  std::vector<std::string> endpoints = options.output_endpoints;
  if (endpoints.empty()) endpoints.push_back(options.output_endpoint);
  std::vector<std::unique_ptr<ipc::ZmqSocket>> outputs;
  for (const std::string& endpoint : endpoints) {
    if (!status.ok()) break;
    outputs.push_back(std::make_unique<ipc::ZmqSocket>(ipc::SocketKind::kPush));
    status = options.bind_output && endpoints.size() == 1 ? outputs.back()->Bind(endpoint)
                                                          : outputs.back()->Connect(endpoint);
  }
  std::unique_ptr<ipc::ZmqSocket> stats;
  if (status.ok() && !options.stats_endpoint.empty()) {
    stats = std::make_unique<ipc::ZmqSocket>(ipc::SocketKind::kPush);
    status = stats->Connect(options.stats_endpoint);
  }
  if (!status.ok()) {
    TLOG_ERROR("engine loop: {}", status.ToString());
    return 1;
  }
  EngineLoop loop(core, options, std::move(input), std::move(outputs), std::move(stats));
  if (Status st = loop.StartWaves(); !st.ok()) {
    TLOG_ERROR("engine loop: {}", st.ToString());
    return 1;
  }
  return loop.Run();
}

}  // namespace tandem::engine
