#include "router/mp_engine_client.h"

#include <chrono>
#include <vector>

#include "core/clock.h"
#include "core/logging.h"
#include "protocol/message.h"

namespace tandem::router {

using protocol::EngineOutput;
using protocol::EngineOutputs;
using protocol::FinishReason;
using protocol::MessageType;

MpEngineClient::MpEngineClient(MpEngineClientOptions options)
    : options_(std::move(options)), input_(ipc::SocketKind::kPush),
      output_(ipc::SocketKind::kPull) {}

MpEngineClient::~MpEngineClient() { Shutdown(); }

Status MpEngineClient::Start() {
  TANDEM_RETURN_IF_ERROR(output_.Bind(options_.output_endpoint));
  TANDEM_RETURN_IF_ERROR(input_.Connect(options_.input_endpoint));
  receiver_ = std::thread([this] { ReceiveLoop(); });
  return Status::Ok();
}

Status MpEngineClient::AddRequest(protocol::EngineRequest request, OutputCallback on_output) {
  if (dead_) return Unavailable("the engine core is not running; see the server log");
  if (!ready_) return Unavailable("the engine core is still loading the model; retry shortly");
  {
    std::lock_guard<std::mutex> lock(mu_);
    callbacks_[request.request_id] = std::move(on_output);
  }
  std::lock_guard<std::mutex> lock(send_mu_);
  Status st = input_.Send(protocol::Encode(MessageType::kAddRequest, request));
  if (!st.ok()) {
    std::lock_guard<std::mutex> l(mu_);
    callbacks_.erase(request.request_id);
  }
  return st;
}

void MpEngineClient::AbortRequest(const std::string& request_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (callbacks_.erase(request_id) == 0) return;
  }
  protocol::AbortRequests abort{{request_id}};
  std::lock_guard<std::mutex> lock(send_mu_);
  (void)input_.Send(protocol::Encode(MessageType::kAbortRequests, abort));
}

bool MpEngineClient::IsReady() const { return ready_ && !dead_; }

protocol::EngineStats MpEngineClient::LatestStats(int /*dp_rank*/) const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

bool MpEngineClient::WaitReady(double timeout_s) const {
  const double deadline = MonotonicSeconds() + timeout_s;
  while (!ready_ && !dead_ && MonotonicSeconds() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return IsReady();
}

void MpEngineClient::MarkEngineDead(const std::string& reason) {
  if (dead_.exchange(true)) return;
  TLOG_ERROR("engine core lost: {}", reason);
  FailAll("the engine core died (" + reason + "); the request could not finish");
}

void MpEngineClient::Shutdown() {
  if (stop_.exchange(true)) return;
  if (ready_ && !dead_) {
    std::lock_guard<std::mutex> lock(send_mu_);
    (void)input_.Send(protocol::Encode(MessageType::kShutdown, protocol::AbortRequests{}));
  }
  if (receiver_.joinable()) receiver_.join();
}

void MpEngineClient::ReceiveLoop() {
  while (!stop_) {
    auto frame = output_.Recv(100);
    if (!frame.ok()) break;
    if (!frame->has_value()) {
      if (ready_ && !dead_ &&
          MonotonicSeconds() - last_heard_s_.load() > options_.heartbeat_timeout_s) {
        MarkEngineDead("no heartbeat for " + std::to_string(options_.heartbeat_timeout_s) + " s");
      }
      continue;
    }
    last_heard_s_ = MonotonicSeconds();
    const std::string& bytes = **frame;
    auto type = protocol::PeekType(bytes);
    if (!type.ok()) continue;
    EngineOutputs outputs;
    if (*type == MessageType::kReady) {
      if (protocol::Decode(bytes, &outputs.stats).ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        stats_ = outputs.stats;
      }
      ready_ = true;
    } else if (*type == MessageType::kOutputs) {
      if (!protocol::Decode(bytes, &outputs).ok()) {
        TLOG_ERROR("dropping an undecodable engine output frame ({} bytes)", bytes.size());
        continue;
      }
      Dispatch(outputs);
    }
  }
}

void MpEngineClient::Dispatch(const EngineOutputs& outputs) {
  std::vector<std::pair<OutputCallback, const EngineOutput*>> calls;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_ = outputs.stats;
    for (const EngineOutput& out : outputs.outputs) {
      auto it = callbacks_.find(out.request_id);
      if (it == callbacks_.end()) continue;  // aborted by us: drop late outputs
      calls.emplace_back(it->second, &out);
      if (out.finish_reason != static_cast<uint8_t>(FinishReason::kNone)) callbacks_.erase(it);
    }
  }
  for (auto& [callback, out] : calls) callback(*out);
}

void MpEngineClient::FailAll(const std::string& reason) {
  std::unordered_map<std::string, OutputCallback> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending.swap(callbacks_);
  }
  for (auto& [id, callback] : pending) {
    EngineOutput out;
    out.request_id = id;
    out.finish_reason = static_cast<uint8_t>(FinishReason::kError);
    out.error = reason;
    callback(out);
  }
}

}  // namespace tandem::router
