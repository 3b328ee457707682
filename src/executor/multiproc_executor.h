// MultiprocExecutor: the engine core reaches TP ranks 1 … T-1 in their own processes. Each
// step the plan goes to every worker process (ZeroMQ), rank 0 runs in this process, and the
// model's collectives pair the ranks up inside the forward pass; every worker then
// acknowledges, so a failed rank fails the step instead of hanging it. Rank 0's sampled tokens
// are the step's result (every rank samples the same tokens from the same gathered logits).
// Reference: vLLM v1 executor/multiproc_executor.py (rpc_broadcast_mq + response queues).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "ipc/zmq_socket.h"
#include "worker/worker.h"

namespace tandem::executor {

struct MultiprocExecutorOptions {
  std::vector<std::string> plan_endpoints;  // one PUSH per worker process, bound here
  std::string ack_endpoint;                 // PULL for WorkerAcks, bound here
  double ack_timeout_s = 60;                // a worker silent this long fails the step
};

class MultiprocExecutor : public engine::Executor {
 public:
  explicit MultiprocExecutor(MultiprocExecutorOptions options);
  ~MultiprocExecutor() override;

  // Binds the sockets (before the worker processes start).
  Status Bind();
  // Sends WorkerInit to every worker and waits for all their acks. Errors: kUnavailable
  // naming the rank that failed or stayed silent.
  Status InitWorkers(int32_t num_kv_blocks);
  // TP rank 0's worker, run in this process.
  void set_rank0(std::unique_ptr<worker::Worker> worker) { rank0_ = std::move(worker); }

  Result<protocol::StepResult> ExecuteStep(const protocol::StepPlan& plan) override;

 private:
  Status WaitForAcks(int64_t step_id);

  MultiprocExecutorOptions options_;
  std::vector<std::unique_ptr<ipc::ZmqSocket>> plans_;
  ipc::ZmqSocket acks_;
  std::unique_ptr<worker::Worker> rank0_;
};

}  // namespace tandem::executor
