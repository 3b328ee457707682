// Controller: the manager's periodic reconciliation (MANAGER.md §3–§5), one pass per call:
//  - worker liveness: no heartbeat for worker_not_ready_after_s → not_ready, for
//    worker_unreachable_after_s → unreachable, and its running instances ERROR (their
//    processes end with their agent);
//  - replicas: a deployment has exactly `replicas` instances (new ones PENDING; surplus ones,
//    not-RUNNING and newest first, deleted: their agents stop the processes);
//  - placement: PENDING → SCHEDULED on devices: manual (`gpu_selector.gpu_ids`: one worker's
//    selected devices per replica, or for `distributed_inference_across_workers` all of them,
//    the first device's worker as the main one and the others as subordinates) or automatic
//    (`placement_strategy` spread: the ready worker with the fewest instances; binpack: the
//    most; `gpus_per_replica` devices each, default 1); a replica that cannot be placed stays
//    PENDING with the reason in state_message;
//  - restarts: an ERROR instance of a deployment with restart_on_error goes back to
//    SCHEDULED after 0 s, then min(10·2^(n−1), 300) s for its n-th restart;
//  - ready_replicas of each deployment = its RUNNING instances.
#pragma once

#include <cstdint>

#include "cluster/manager/manager_config.h"
#include "cluster/store/store.h"

namespace tandem::cluster::manager {

class Controller {
 public:
  Controller(store::Store& store, const ManagerConfig& config) : store_(store), config_(config) {}

  // One pass at wall-clock `now_unix`. Store errors are logged; the next pass retries.
  void RunOnce(int64_t now_unix);

  // The delay before restart number `restart_count` + 1, in seconds.
  static int64_t RestartDelayS(int64_t restart_count);

 private:
  Status UpdateWorkerStates(int64_t now_unix);
  // Marks the instances running on `worker` (main or subordinate) ERROR naming it.
  Status FailInstancesOn(const store::Record& worker, const std::string& why, int64_t now_unix);
  Status ReconcileReplicas();
  Status PlacePending();
  Status RestartFailed(int64_t now_unix);
  Status UpdateReadyReplicas();

  store::Store& store_;
  const ManagerConfig& config_;
};

}  // namespace tandem::cluster::manager
