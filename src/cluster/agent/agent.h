// Agent: `tandem agent`, one per machine (MANAGER.md §1, §4). Registers with the manager using
// the registration token, sends a heartbeat with CPU, memory and devices every
// heartbeat_interval_s, watches /v2/model-instances and runs what is placed on this worker as
// host processes: port from --service-port-range, INITIALIZING → STARTING (pid) → RUNNING
// (health probe, or a --headless follower's ranks joining their head), ERROR with the exit
// status or the start-up deadline and the last log lines; liveness after RUNNING (three failed
// probes → ERROR); processes stopped when their instance goes or restarts. Logs of each run in
// DATA_DIR/logs/<instance>.<run>.log, the last two runs kept.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cluster/agent/devices.h"
#include "cluster/agent/launch_plan.h"
#include "cluster/agent/log_server.h"
#include "cluster/agent/process.h"
#include "core/status.h"
#include "http/client.h"

namespace tandem::cluster::agent {

struct AgentConfig {
  std::string server_url;             // --server-url http://MANAGER:PORT
  std::string token;                  // --token: the manager's registration token
  std::string worker_name;            // --worker-name (default: the hostname)
  std::string worker_ip;              // --worker-ip (default: the address that reaches the manager)
  uint16_t worker_port = 10150;       // --worker-port: the logs endpoint the manager proxies
  uint16_t port_range_begin = 40000;  // --service-port-range BEGIN-END (inclusive)
  uint16_t port_range_end = 40063;
  std::string data_dir;  // --data-dir: logs
  std::string devices;   // --devices TYPE:INDEX,... ("" = detect)
  double heartbeat_interval_s = 10;
  double probe_interval_s = 3;
  double probe_timeout_s = 1;
  double stop_grace_s = 10;  // SIGTERM → SIGKILL
  std::string self_exe;      // this binary (the "tandem" entrypoint)
};

class Agent {
 public:
  explicit Agent(AgentConfig config);
  ~Agent();

  // Checks the flags, detects the devices. Errors: kInvalidArgument naming the flag.
  Status Start();
  // Registers (retrying until the manager answers), then heartbeats, watches and supervises
  // until Stop(); stops every instance process before returning.
  void Run();
  void Stop();

 private:
  struct InstanceRun;
  Result<nlohmann::json> Call(const std::string& method, const std::string& target,
                              const nlohmann::json& body = nullptr);
  Status Register();
  void HeartbeatLoop();
  void WatchLoop();
  void SuperviseLoop();
  void Reconcile();
  void StartRun(const nlohmann::json& instance, int subordinate_index);
  void Supervise(InstanceRun& run, const nlohmann::json& instance);
  void Report(int64_t instance_id, int64_t restart_count, nlohmann::json status);
  void FailRun(InstanceRun& run, const std::string& why);
  Result<int64_t> PickPort(int64_t avoid);
  bool Stopping();
  void SleepFor(double seconds);

  AgentConfig config_;
  std::vector<DeviceInfo> devices_;
  HostStatus host_;
  std::string interface_name_;
  std::unique_ptr<LogServer> log_server_;

  std::mutex mutex_;  // guards the fields below
  std::condition_variable cv_;
  bool stopping_ = false;
  bool changed_ = false;  // instances changed since the last reconcile
  int64_t worker_id_ = 0;
  std::string worker_key_;
  std::map<int64_t, nlohmann::json> instances_;  // this cluster's, by id
  std::shared_ptr<http::HttpCall> watch_call_;

  std::map<int64_t, std::unique_ptr<InstanceRun>> runs_;  // by instance id; supervise thread only
  std::thread heartbeat_thread_;
  std::thread watch_thread_;
};

}  // namespace tandem::cluster::agent
