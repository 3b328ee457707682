#include "engine/engine_process.h"

#include <unistd.h>

#include <memory>
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
             std::unique_ptr<ipc::ZmqSocket> input, std::unique_ptr<ipc::ZmqSocket> output)
      : core_(core), options_(options), input_(std::move(input)), output_(std::move(output)) {}

  int Run() {
    const pid_t parent_pid = getppid();
    if (!SendFrame(protocol::Encode(MessageType::kReady, core_.Stats()))) return 1;
    double last_sent_s = MonotonicSeconds();
    while (true) {
      // Drain every waiting frame; block (briefly) only when there is nothing to compute.
      int timeout_ms = core_.HasWork() ? 0 : options_.idle_poll_ms;
      while (true) {
        Result<std::optional<std::string>> frame = input_->Recv(timeout_ms);
        if (!frame.ok()) {
          TLOG_ERROR("engine loop: {}", frame.status().ToString());
          return 1;
        }
        if (!frame->has_value()) break;
        if (HandleFrame(**frame) == FrameAction::kShutdown) {
          TLOG_INFO("engine loop: shutdown requested");
          return 0;
        }
        timeout_ms = 0;
      }
      if (options_.exit_when_parent_dies && getppid() != parent_pid) {
        TLOG_WARN("engine loop: parent process {} is gone; exiting", parent_pid);
        return 0;
      }
      if (core_.HasWork()) {
        protocol::EngineOutputs outputs = core_.Step();
        if (!outputs.outputs.empty()) {
          if (!SendFrame(protocol::Encode(MessageType::kOutputs, outputs))) return 1;
          last_sent_s = MonotonicSeconds();
        }
      }
      // Stats at least every heartbeat_interval_s, also while long prefills emit nothing.
      if (MonotonicSeconds() - last_sent_s >= options_.heartbeat_interval_s) {
        protocol::EngineOutputs heartbeat;
        heartbeat.stats = core_.Stats();
        if (!SendFrame(protocol::Encode(MessageType::kOutputs, heartbeat))) return 1;
        last_sent_s = MonotonicSeconds();
      }
    }
  }

 private:
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
    status = core_.AddRequest(std::move(request));
    if (status.ok()) return;
    TLOG_WARN("engine loop: rejected request '{}': {}", request_id, status.ToString());
    protocol::EngineOutputs rejected;
    protocol::EngineOutput output;
    output.request_id = request_id;
    output.finish_reason = static_cast<uint8_t>(protocol::FinishReason::kError);
    output.error = status.message();
    rejected.outputs.push_back(std::move(output));
    rejected.stats = core_.Stats();
    SendFrame(protocol::Encode(MessageType::kOutputs, rejected));
  }

  bool SendFrame(const std::string& frame) {
    Status status = output_->Send(frame);
    if (!status.ok()) TLOG_ERROR("engine loop: {}", status.ToString());
    return status.ok();
  }

  EngineCore& core_;
  const EngineLoopOptions& options_;
  std::unique_ptr<ipc::ZmqSocket> input_;
  std::unique_ptr<ipc::ZmqSocket> output_;
};

}  // namespace

int RunEngineLoop(EngineCore& core, const EngineLoopOptions& options) {
  auto input = std::make_unique<ipc::ZmqSocket>(ipc::SocketKind::kPull);
  auto output = std::make_unique<ipc::ZmqSocket>(ipc::SocketKind::kPush);
  Status status = options.bind_input ? input->Bind(options.input_endpoint)
                                     : input->Connect(options.input_endpoint);
  if (status.ok()) {
    status = options.bind_output ? output->Bind(options.output_endpoint)
                                 : output->Connect(options.output_endpoint);
  }
  if (!status.ok()) {
    TLOG_ERROR("engine loop: {}", status.ToString());
    return 1;
  }
  EngineLoop loop(core, options, std::move(input), std::move(output));
  return loop.Run();
}

}  // namespace tandem::engine
