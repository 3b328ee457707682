// LaunchPlan: what the agent runs for one instance on this worker (MANAGER.md §4–§5), from the
// instance, its deployment and its backend, as a pure function (table-tested):
//  - argv: the backend version's entrypoint ("tandem" means this agent's own binary), the
//    run_command split into words and then each word's placeholders filled (a value with
//    spaces stays one argument), then the backend parameters likewise, in the backend's format;
//  - for a deployment across workers (`distributed_inference_across_workers`), the DP flags the
//    manager owns, replacing the user's: the main worker runs the head with
//    --data-parallel-size-local, --data-parallel-address (its IP) and --data-parallel-rpc-port;
//    each subordinate runs `--headless` with its --data-parallel-start-rank; --data-parallel-size
//    is split evenly over the workers;
//  - env layers and device visibility; for a deployment across workers the NIC variables
//    (GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME, HCCL_SOCKET_IFNAME, NCCL_SOCKET_IFNAME, HCCL_IF_IP)
//    of this worker;
//  - how readiness is judged: an HTTP probe of health_check_path, or for a --headless follower
//    its ranks' "joined the head" log lines.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace tandem::cluster::agent {

// Facts of this worker the plan needs.
struct WorkerFacts {
  int64_t worker_id = 0;
  std::string worker_ip;
  std::string interface_name;  // the NIC that holds worker_ip ("" when unknown)
  std::string self_exe;        // this binary, for the "tandem" entrypoint
};

struct LaunchPlan {
  std::vector<std::string> argv;
  std::vector<std::map<std::string, std::string>> env_layers;  // backend, version, deployment
  std::map<std::string, std::string> env_extra;                // devices, NICs
  std::vector<int64_t> gpu_indexes;
  std::string gpu_type;
  bool follower = false;       // --headless: no HTTP port to probe
  int64_t follower_ranks = 0;  // ranks whose "joined the head" lines make it RUNNING
  std::string head;            // "ADDRESS:RPC_PORT" a follower serves
  std::string health_path;     // for the main process
  double startup_timeout_s = 1800;
  std::string local_path;
};

// The plan for `instance` on this worker: as its main process with `port` (and `rpc_port` for
// a deployment across workers), or as the subordinate `subordinate_index` (>= 0).
// Errors (kInvalidArgument, the message goes to state_message): an unknown placeholder or an
// unbalanced quote, a backend version that does not exist, a deployment across workers
// without --data-parallel-size or with one not divisible by the number of workers, a bad
// TANDEM_STARTUP_TIMEOUT_S.
Result<LaunchPlan> PlanLaunch(const nlohmann::json& instance, const nlohmann::json& model,
                              const nlohmann::json& backend, const WorkerFacts& worker,
                              int64_t port, int64_t rpc_port, int subordinate_index);

}  // namespace tandem::cluster::agent
