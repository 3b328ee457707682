#include "executor/multiproc_executor.h"

#include "core/clock.h"
#include "protocol/message.h"

namespace tandem::executor {

using protocol::MessageType;

MultiprocExecutor::MultiprocExecutor(MultiprocExecutorOptions options)
    : options_(std::move(options)), acks_(ipc::SocketKind::kPull) {}

MultiprocExecutor::~MultiprocExecutor() {
  // Never block here: a worker that already died has no socket to take the frame.
  for (auto& p : plans_)
    (void)p->TrySend(protocol::Encode(MessageType::kShutdown, protocol::WorkerInit{}));
}

Status MultiprocExecutor::Bind() {
  TANDEM_RETURN_IF_ERROR(acks_.Bind(options_.ack_endpoint));
  for (const std::string& endpoint : options_.plan_endpoints) {
    plans_.push_back(std::make_unique<ipc::ZmqSocket>(ipc::SocketKind::kPush));
    TANDEM_RETURN_IF_ERROR(plans_.back()->Bind(endpoint));
  }
  return Status::Ok();
}

Status MultiprocExecutor::WaitForAcks(int64_t step_id) {
  std::vector<bool> acked(plans_.size(), false);
  size_t num_acked = 0;
  const double deadline = MonotonicSeconds() + options_.ack_timeout_s;
  while (num_acked < plans_.size()) {
    const double left = deadline - MonotonicSeconds();
    if (left <= 0) {
      for (size_t i = 0; i < acked.size(); ++i) {
        if (!acked[i]) {
          return Unavailable("TP rank " + std::to_string(i + 1) + " did not answer step " +
                             std::to_string(step_id) + " within " +
                             std::to_string(options_.ack_timeout_s) + " s");
        }
      }
    }
    auto frame = acks_.Recv(static_cast<int>(std::min(left, 0.5) * 1000) + 1);
    if (!frame.ok()) return frame.status();
    if (!frame->has_value()) continue;
    protocol::WorkerAck ack;
    if (!protocol::Decode(**frame, &ack).ok() || ack.step_id != step_id) continue;
    if (!ack.ok) {
      return Unavailable("TP rank " + std::to_string(ack.tp_rank) + " failed: " + ack.error);
    }
    const size_t i = static_cast<size_t>(ack.tp_rank - 1);
    if (i < acked.size() && !acked[i]) {
      acked[i] = true;
      ++num_acked;
    }
  }
  return Status::Ok();
}

Status MultiprocExecutor::InitWorkers(int32_t num_kv_blocks) {
  const std::string frame =
      protocol::Encode(MessageType::kWorkerInit, protocol::WorkerInit{num_kv_blocks});
  for (auto& p : plans_) TANDEM_RETURN_IF_ERROR(p->Send(frame));
  return WaitForAcks(-1);
}

Result<protocol::StepResult> MultiprocExecutor::ExecuteStep(const protocol::StepPlan& plan) {
  const std::string frame = protocol::Encode(MessageType::kStepPlan, plan);
  for (auto& p : plans_) TANDEM_RETURN_IF_ERROR(p->Send(frame));
  auto result = rank0_->ExecuteStep(plan);
  Status acks = WaitForAcks(plan.step_id);
  if (!result.ok()) return result.status();
  if (!acks.ok()) return acks;
  return result;
}

}  // namespace tandem::executor
