// DpWave: one engine core's part in the DP waves of an expert-parallel MoE deployment (DP > 1),
// where every rank's forward enters the same EP collectives, so all ranks must step together.
// While any rank has work every rank steps (a dummy step when it has nothing scheduled). Every
// `sync_interval_steps` steps the ranks call `any_busy` — an all-reduce over the DP ranks'
// engine cores — and all leave the wave on that same step when no one is busy. A request that
// reaches a rank outside a wave starts the next one: StartWave goes to the coordinator, which
// publishes it to every rank (this object's SUB socket); ranks already in it or past it ignore
// it. Waves are numbered by how many have ended, so every rank agrees on the next number.
// Reference: vLLM v1 DPEngineCoreProc.run_busy_loop / _has_global_unfinished_reqs, and
// DPCoordinator (start_wave, current_wave). Thread: the engine loop's only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "ipc/zmq_socket.h"

namespace tandem::engine {

// True when any DP rank passed true (an all-reduce). Errors: a peer gone, a timeout.
using AnyBusyFn = std::function<Result<bool>(bool local_busy)>;

class DpWave {
 public:
  // Subscribes to the coordinator's PUB at `wave_endpoint`; StartWave frames go out on
  // `coordinator` (the engine's stats PUSH, not owned, must outlive this). Errors: kUnavailable
  // when the socket cannot connect, kInvalidArgument when something is missing.
  static Result<std::unique_ptr<DpWave>> Connect(const std::string& wave_endpoint,
                                                 AnyBusyFn any_busy, int sync_interval_steps,
                                                 ipc::ZmqSocket* coordinator, int32_t dp_rank);

  ipc::ZmqSocket& socket() { return socket_; }  // to poll beside the request socket
  bool running() const { return running_; }

  // Reads every frame waiting on the socket (load snapshots are skipped); joins a wave another
  // rank started unless this rank is in one or that wave is over. True when it joined.
  Result<bool> DrainStartWaves();
  // A request reached this rank: starts a wave (and tells every rank) unless one runs. True
  // when it started one.
  bool OnRequest();
  // After each step of a wave: every sync interval, asks all ranks whether anyone is busy and
  // leaves the wave when no one is. Errors: the all-reduce failed (the loop must end).
  Status AfterStep(bool has_unfinished_requests);

 private:
  DpWave(AnyBusyFn any_busy, int sync_interval_steps, ipc::ZmqSocket* coordinator, int32_t dp_rank);
  void Begin();

  ipc::ZmqSocket socket_;
  AnyBusyFn any_busy_;
  int sync_interval_steps_;
  ipc::ZmqSocket* coordinator_;
  int32_t dp_rank_;
  int64_t wave_ = 0;  // waves ended so far = the number of the next (or running) one
  bool running_ = false;
  int64_t steps_in_wave_ = 0;
};

}  // namespace tandem::engine
