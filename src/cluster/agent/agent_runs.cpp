// The agent's runs of instances: ports, start (plan, report, spawn), supervision (exit,
// readiness probe or follower log lines, start-up deadline, liveness), failure reports.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "cluster/agent/agent.h"
#include "cluster/agent/command_line.h"
#include "cluster/agent/instance_run.h"
#include "core/clock.h"
#include "core/logging.h"

extern char** environ;

namespace tandem::cluster::agent {

using nlohmann::json;

namespace {

constexpr int kLivenessFailures = 3;
constexpr int kLogLinesInMessage = 12;

bool PortFree(int64_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

int CountLines(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find(needle) != std::string::npos ? 1 : 0;
  return n;
}

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) out[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return out;
}

}  // namespace

Result<int64_t> Agent::PickPort(int64_t avoid) {
  std::set<int64_t> taken = {avoid};
  for (const auto& [id, run] : runs_) taken.insert(run->port);
  for (int64_t port = config_.port_range_begin; port <= config_.port_range_end; ++port) {
    if (!taken.count(port) && PortFree(port)) return port;
  }
  return Unavailable(fmt::format("no free port in --service-port-range {}-{}",
                                 config_.port_range_begin, config_.port_range_end));
}

void Agent::Report(int64_t instance_id, int64_t restart_count, json status) {
  status["restart_count"] = restart_count;
  auto reply = Call("POST", fmt::format("/v2/model-instances/{}/status", instance_id), status);
  if (!reply.ok() && reply.status().code() != StatusCode::kConflict &&
      reply.status().code() != StatusCode::kNotFound) {
    TLOG_WARN("agent: reporting instance {}: {}", instance_id, reply.status().message());
  }
}

void Agent::FailRun(InstanceRun& run, const std::string& why) {
  run.done = true;
  if (run.process) run.process->Stop(config_.stop_grace_s);
  std::string message = why;
  const std::string tail = run.log_path.empty() ? "" : TailOfFile(run.log_path, kLogLinesInMessage);
  if (!tail.empty()) message += "; last log lines:\n" + tail;
  if (message.size() > 4000)
    message = message.substr(0, 1000) + "\n…\n" + message.substr(message.size() - 2900);
  TLOG_WARN("agent: instance '{}' run {}: {}", run.name, run.restart_count, why);
  json status = {{"state", "ERROR"}, {"state_message", message}};
  if (run.subordinate_index >= 0) status["subordinate"] = true;
  Report(run.instance_id, run.restart_count, status);
  run.state = "ERROR";
}

void Agent::StartRun(const json& instance, int subordinate_index) {
  auto run = std::make_unique<InstanceRun>();
  run->instance_id = instance.value("id", int64_t{0});
  run->restart_count = instance.value("restart_count", int64_t{0});
  run->subordinate_index = subordinate_index;
  run->name = instance.value("name", "instance");
  run->started_at = MonotonicSeconds();
  InstanceRun& r = *run;
  runs_[r.instance_id] = std::move(run);
  const bool main = subordinate_index < 0;

  auto model = Call("GET", fmt::format("/v2/models/{}", instance.value("model_id", int64_t{0})));
  if (!model.ok()) return FailRun(r, "cannot read the deployment: " + model.status().message());
  const std::string backend_name = model->value("backend", "tandem");
  auto backends = Call("GET", "/v2/inference-backends?page=-1&backend_name=" + backend_name);
  if (!backends.ok() || (*backends)["items"].empty()) {
    return FailRun(r, fmt::format("backend '{}' not found", backend_name));
  }
  const json backend = (*backends)["items"][0];
  const bool distributed = model->value("distributed_inference_across_workers", false);
  int64_t rpc_port = instance.value("distributed_servers", json::object())
                         .value("data_parallel_rpc_port", int64_t{0});
  // A subordinate serves no HTTP, but its command line's {{port}} must still be a real port.
  auto port = PickPort(0);
  if (!port.ok()) return FailRun(r, port.status().message());
  r.port = *port;
  if (main) {
    if (distributed) {
      auto rpc = PickPort(r.port);
      if (!rpc.ok()) return FailRun(r, rpc.status().message());
      rpc_port = *rpc;
    }
  }
  WorkerFacts facts{worker_id_, config_.worker_ip, interface_name_, config_.self_exe};
  auto plan = PlanLaunch(instance, *model, backend, facts, r.port, rpc_port, subordinate_index);
  if (!plan.ok()) return FailRun(r, plan.status().message());
  r.plan = std::move(plan).value();
  std::error_code ec;
  if (r.plan.local_path.empty() || !std::filesystem::exists(r.plan.local_path, ec)) {
    return FailRun(r, fmt::format("local_path '{}' does not exist on worker '{}'",
                                  r.plan.local_path, config_.worker_name));
  }
  if (main) {
    json init = {{"state", "INITIALIZING"}, {"state_message", ""}, {"port", r.port}};
    if (distributed) init["data_parallel_rpc_port"] = rpc_port;
    Report(r.instance_id, r.restart_count, init);
  }
  const std::string logs = config_.data_dir + "/logs/";
  r.log_path = fmt::format("{}{}.{}.log", logs, r.name, r.restart_count);
  if (r.restart_count >= 2) {
    std::filesystem::remove(fmt::format("{}{}.{}.log", logs, r.name, r.restart_count - 2), ec);
  }
  LaunchSpec spec;
  spec.argv = r.plan.argv;
  spec.env = BuildEnvironment(CurrentEnvironment(), r.plan.env_layers, r.plan.env_extra);
  spec.log_path = r.log_path;
  if (r.plan.gpu_type == "cpu") {
    for (int64_t index : r.plan.gpu_indexes) {
      for (const DeviceInfo& d : devices_) {
        if (d.type == "cpu" && d.index == index)
          spec.cpus.insert(spec.cpus.end(), d.cpus.begin(), d.cpus.end());
      }
    }
  }
  std::string shown;
  for (const std::string& a : spec.argv) shown += (shown.empty() ? "" : " ") + a;
  TLOG_INFO("agent: starting instance '{}' run {}{}: {}", r.name, r.restart_count,
            main ? "" : " (subordinate)", shown);
  auto process = ChildProcess::Spawn(spec);
  if (!process.ok()) return FailRun(r, process.status().message());
  r.process = std::move(process).value();
  json starting = {{"state", "STARTING"},
                   {"state_message", r.plan.follower ? "loading; joining the head at " + r.plan.head
                                                     : "loading the model"},
                   {"pid", r.process->pid()}};
  if (!main) starting["subordinate"] = true;
  Report(r.instance_id, r.restart_count, starting);
  r.state = "STARTING";
}

void Agent::Supervise(InstanceRun& run, const json& instance) {
  if (run.done || !run.process) return;
  if (auto exit = run.process->Poll()) return FailRun(run, "the process " + *exit);
  const double now = MonotonicSeconds();
  const bool main = run.subordinate_index < 0;
  if (run.state != "RUNNING") {
    if (now - run.started_at > run.plan.startup_timeout_s) {
      return FailRun(run, fmt::format("not ready within the start-up deadline of {:.0f} s "
                                      "(TANDEM_STARTUP_TIMEOUT_S)",
                                      run.plan.startup_timeout_s));
    }
    bool ready = false;
    std::string message;
    if (run.plan.follower) {
      const int joined = CountLines(run.log_path, "joined the head at");
      ready = joined >= run.plan.follower_ranks;
      message = fmt::format("a --headless follower: {} DP rank(s) joined the head at {}", joined,
                            run.plan.head);
    } else if (now >= run.next_probe) {
      run.next_probe = now + config_.probe_interval_s;
      http::ClientRequest probe;
      probe.url = fmt::format("http://{}:{}{}", config_.worker_ip, run.port, run.plan.health_path);
      probe.connect_timeout_s = probe.idle_timeout_s = config_.probe_timeout_s;
      auto reply = http::Fetch(probe, 1 << 20);
      ready = reply.ok() && reply->status == 200;
    }
    if (ready) {
      json status = {{"state", "RUNNING"}, {"state_message", message}};
      if (!main) status["subordinate"] = true;
      Report(run.instance_id, run.restart_count, status);
      run.state = "RUNNING";
      run.next_probe = now + config_.probe_interval_s;
    }
    return;
  }
  // Liveness: the head's HTTP probe (a follower's liveness is its process).
  if (run.plan.follower || now < run.next_probe) return;
  run.next_probe = now + config_.probe_interval_s;
  http::ClientRequest probe;
  probe.url = fmt::format("http://{}:{}{}", config_.worker_ip, run.port, run.plan.health_path);
  probe.connect_timeout_s = probe.idle_timeout_s = config_.probe_timeout_s;
  auto reply = http::Fetch(probe, 1 << 20);
  if (reply.ok() && reply->status == 200) {
    run.probe_failures = 0;
    return;
  }
  if (++run.probe_failures >= kLivenessFailures) {
    FailRun(run, fmt::format("{} liveness probes of {} failed in a row (last: {})",
                             kLivenessFailures, run.plan.health_path,
                             reply.ok() ? fmt::format("HTTP {}", reply->status)
                                        : reply.status().message()));
  }
}

}  // namespace tandem::cluster::agent
