#include "worker/worker_process.h"

#include <unistd.h>

#include "core/logging.h"
#include "ipc/zmq_socket.h"
#include "protocol/message.h"
#include "protocol/step_plan.h"

namespace tandem::worker {

using protocol::MessageType;

int RunWorkerLoop(const WorkerLoopOptions& options,
                  const std::function<Result<std::unique_ptr<Worker>>(int32_t)>& make_worker) {
  ipc::ZmqSocket plans(ipc::SocketKind::kPull);
  ipc::ZmqSocket acks(ipc::SocketKind::kPush);
  for (Status st : {plans.Connect(options.plan_endpoint), acks.Connect(options.ack_endpoint)}) {
    if (!st.ok()) {
      TLOG_ERROR("TP worker {}: {}", options.tp_rank, st.message());
      return 1;
    }
  }
  auto send_ack = [&](int64_t step_id, const Status& st) {
    protocol::WorkerAck ack{options.tp_rank, step_id, st.ok(), st.message()};
    (void)acks.Send(protocol::Encode(MessageType::kWorkerAck, ack));
  };
  const pid_t parent = getppid();
  std::unique_ptr<Worker> worker;
  while (true) {
    auto frame = plans.Recv(200);
    if (!frame.ok()) return 1;
    if (!frame->has_value()) {
      if (getppid() != parent) return 0;  // the engine core is gone
      continue;
    }
    auto type = protocol::PeekType(**frame);
    if (!type.ok()) continue;
    if (*type == MessageType::kShutdown) return 0;
    if (*type == MessageType::kWorkerInit) {
      protocol::WorkerInit init;
      if (!protocol::Decode(**frame, &init).ok()) return 1;
      auto made = make_worker(init.num_kv_blocks);
      if (!made.ok()) {
        TLOG_ERROR("TP worker {}: {}", options.tp_rank, made.status().message());
        send_ack(-1, made.status());
        return 1;
      }
      worker = std::move(made).value();
      send_ack(-1, Status::Ok());
      continue;
    }
    if (*type != MessageType::kStepPlan || !worker) continue;
    protocol::StepPlan plan;
    Status st = protocol::Decode(**frame, &plan);
    if (st.ok()) {
      auto result = worker->ExecuteStep(plan);
      st = result.ok() ? Status::Ok() : result.status();
    }
    if (!st.ok())
      TLOG_ERROR("TP worker {}: step {} failed: {}", options.tp_rank, plan.step_id, st.message());
    send_ack(plan.step_id, st);
  }
}

}  // namespace tandem::worker
