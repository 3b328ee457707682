// Agent::InstanceRun: one run of one instance on this worker (private to the agent's files).
#pragma once

#include <memory>
#include <string>

#include "cluster/agent/agent.h"

namespace tandem::cluster::agent {

struct Agent::InstanceRun {
  int64_t instance_id = 0;
  int64_t restart_count = 0;
  int subordinate_index = -1;  // >= 0: this worker runs a subordinate of the instance
  std::string name;
  LaunchPlan plan;
  std::unique_ptr<ChildProcess> process;
  std::string log_path;
  int64_t port = 0;
  std::string state;  // last state reported
  double started_at = 0;
  double next_probe = 0;
  int probe_failures = 0;
  bool done = false;  // failed or ended: waits for the manager to restart or remove it
};

}  // namespace tandem::cluster::agent
