#include "cluster/agent/agent.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include "cluster/agent/command_line.h"
#include "core/clock.h"
#include "core/logging.h"

extern char** environ;

namespace tandem::cluster::agent {

using nlohmann::json;

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

namespace {

constexpr int kLivenessFailures = 3;
constexpr int kLogLinesInMessage = 12;

// The local address the kernel would use to reach `host` (no packet is sent).
std::string LocalAddressTowards(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* result = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &result) != 0) return "";
  std::string out;
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd >= 0 && connect(fd, result->ai_addr, result->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t len = sizeof(local);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      char text[INET_ADDRSTRLEN];
      inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text));
      out = text;
    }
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(result);
  return out;
}

// The network interface holding `ip` ("" when none does).
std::string InterfaceOf(const std::string& ip) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string out;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof(text));
    if (ip == text) {
      out = a->ifa_name;
      break;
    }
  }
  freeifaddrs(list);
  return out;
}

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

Agent::Agent(AgentConfig config) : config_(std::move(config)) {}

Agent::~Agent() {
  Stop();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  if (watch_thread_.joinable()) watch_thread_.join();
}

Status Agent::Start() {
  auto url = http::ParseHttpUrl(config_.server_url);
  if (!url.ok()) return InvalidArgument("--server-url: " + url.status().message());
  if (config_.token.empty()) return InvalidArgument("--token is required (the manager's DATA_DIR/token)");
  if (config_.data_dir.empty()) return InvalidArgument("--data-dir is required");
  if (config_.port_range_begin == 0 || config_.port_range_end < config_.port_range_begin) {
    return InvalidArgument(fmt::format("--service-port-range {}-{} is empty",
                                       config_.port_range_begin, config_.port_range_end));
  }
  std::error_code ec;
  std::filesystem::create_directories(config_.data_dir + "/logs", ec);
  if (ec) {
    return InvalidArgument(fmt::format("--data-dir '{}': cannot create it: {}", config_.data_dir,
                                       ec.message()));
  }
  if (config_.worker_name.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    config_.worker_name = host;
  }
  if (config_.worker_name.find(':') != std::string::npos) {
    return InvalidArgument("--worker-name must not contain ':' (device ids are NAME:TYPE:INDEX)");
  }
  if (config_.worker_ip.empty()) config_.worker_ip = LocalAddressTowards(url->host, url->port);
  if (config_.worker_ip.empty()) {
    return InvalidArgument("--worker-ip: cannot tell which local address reaches the manager; give it");
  }
  interface_name_ = InterfaceOf(config_.worker_ip);
  if (!config_.devices.empty()) {
    auto devices = ParseDeviceSpec(config_.devices);
    if (!devices.ok()) return devices.status();
    devices_ = std::move(devices).value();
  } else {
    devices_ = DetectDevices();
  }
  if (config_.self_exe.empty()) {
    std::error_code ignored;
    config_.self_exe = std::filesystem::read_symlink("/proc/self/exe", ignored).string();
  }
  log_server_ = std::make_unique<LogServer>(config_.data_dir + "/logs");
  Status logs = log_server_->Start(config_.worker_ip, config_.worker_port);
  if (!logs.ok()) return InvalidArgument("--worker-port: " + logs.message());
  TLOG_INFO("agent '{}' at {} ({}), {} device(s), manager {}", config_.worker_name,
            config_.worker_ip, interface_name_.empty() ? "interface unknown" : interface_name_,
            devices_.size(), config_.server_url);
  return Status::Ok();
}

bool Agent::Stopping() {
  std::lock_guard lock(mutex_);
  return stopping_;
}

void Agent::SleepFor(double seconds) {
  std::unique_lock lock(mutex_);
  cv_.wait_for(lock, std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)),
               [this] { return stopping_; });
}

void Agent::Stop() {
  std::shared_ptr<http::HttpCall> watch;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    watch = watch_call_;
  }
  cv_.notify_all();
  if (watch) watch->Cancel();
}

Result<json> Agent::Call(const std::string& method, const std::string& target, const json& body) {
  http::ClientRequest request;
  request.method = method;
  request.url = config_.server_url + target;
  request.idle_timeout_s = 10;
  std::string key;
  {
    std::lock_guard lock(mutex_);
    key = worker_key_;
  }
  request.headers.emplace_back("Authorization",
                               "Bearer " + (target == "/v2/workers" ? config_.token : key));
  if (!body.is_null()) {
    request.body = body.dump();
    request.headers.emplace_back("Content-Type", "application/json");
  }
  auto response = http::Fetch(request);
  if (!response.ok()) return response.status();
  json parsed = json::parse(response->body, nullptr, false);
  if (response->status >= 400) {
    const std::string message = parsed.is_object() ? parsed.value("message", response->body)
                                                   : response->body;
    const StatusCode code = response->status == 401   ? StatusCode::kUnauthenticated
                            : response->status == 403 ? StatusCode::kPermissionDenied
                            : response->status == 404 ? StatusCode::kNotFound
                            : response->status == 409 ? StatusCode::kConflict
                            : response->status == 400 ? StatusCode::kInvalidArgument
                                                      : StatusCode::kUnavailable;
    return Status(code, fmt::format("{} {}: {} {}", method, target, response->status, message));
  }
  if (parsed.is_discarded()) return Unavailable(fmt::format("{} {}: not JSON", method, target));
  return parsed;
}

Status Agent::Register() {
  // The key of the previous registration (kept in DATA_DIR/worker_key) proves to the manager
  // that this agent is that worker, so a restart takes the row back at once.
  const std::string key_path = config_.data_dir + "/worker_key";
  std::string previous;
  {
    std::lock_guard lock(mutex_);
    previous = worker_key_;
  }
  if (previous.empty()) {
    std::ifstream in(key_path);
    std::getline(in, previous);
  }
  json body = {{"name", config_.worker_name},
               {"ip", config_.worker_ip},
               {"port", config_.worker_port},
               {"hostname", config_.worker_name}};
  if (!previous.empty()) body["previous_api_key"] = previous;
  auto reply = Call("POST", "/v2/workers", body);
  if (!reply.ok()) return reply.status();
  const std::string key = reply->value("api_key", "");
  {
    std::ofstream out(key_path, std::ios::trunc);
    out << key << "\n";
  }
  std::filesystem::permissions(key_path, std::filesystem::perms::owner_read |
                                             std::filesystem::perms::owner_write);
  std::lock_guard lock(mutex_);
  worker_id_ = reply->value("id", int64_t{0});
  worker_key_ = key;
  log_server_->SetSecret(reply->value("log_secret", ""));
  TLOG_INFO("agent: registered as worker {} ('{}')", worker_id_, config_.worker_name);
  return Status::Ok();
}

void Agent::HeartbeatLoop() {
  while (!Stopping()) {
    json devices = json::array();
    for (const DeviceInfo& d : devices_) devices.push_back(d.ToJson());
    json status = host_.Sample();
    status["gpu_devices"] = devices;
    int64_t id;
    {
      std::lock_guard lock(mutex_);
      id = worker_id_;
    }
    auto reply = Call("POST", fmt::format("/v2/workers/{}/heartbeat", id), {{"status", status}});
    if (!reply.ok()) {
      TLOG_WARN("agent: heartbeat failed: {}", reply.status().message());
      const StatusCode code = reply.status().code();
      if (code == StatusCode::kUnauthenticated || code == StatusCode::kNotFound ||
          code == StatusCode::kPermissionDenied) {
        Status again = Register();  // the manager lost or replaced this worker
        if (again.ok()) continue;
      }
    }
    SleepFor(config_.heartbeat_interval_s);
  }
}

void Agent::WatchLoop() {
  while (!Stopping()) {
    std::string key;
    {
      std::lock_guard lock(mutex_);
      key = worker_key_;
    }
    http::ClientRequest request;
    request.url = config_.server_url + "/v2/model-instances?watch=true";
    request.headers.emplace_back("Authorization", "Bearer " + key);
    request.idle_timeout_s = 60;  // the manager writes a blank line every 15 s
    auto call = std::make_shared<http::HttpCall>(request);
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
      watch_call_ = call;
    }
    std::string buffer;
    const auto apply = [&](const json& event) {
      if (!event.is_object() || !event.contains("id")) return;
      const int64_t id = event["id"];
      std::lock_guard lock(mutex_);
      if (event.value("type", 0) == 3) {
        instances_.erase(id);
      } else {
        const json& data = event["data"];
        auto it = instances_.find(id);
        if (it != instances_.end() &&
            it->second.value("resource_version", int64_t{0}) > data.value("resource_version", int64_t{0})) {
          return;  // older than what the list gave
        }
        instances_[id] = data;
      }
      changed_ = true;
      cv_.notify_all();
    };
    Status status = call->Run(
        [&](int code, const http::HeaderList&) {
          if (code != 200) {
            TLOG_WARN("agent: watching instances got HTTP {}", code);
            return false;
          }
          // The full list: deletions missed while disconnected.
          auto list = Call("GET", "/v2/model-instances?page=-1");
          if (list.ok()) {
            std::map<int64_t, json> fresh;
            for (const json& item : (*list)["items"]) fresh[item.value("id", int64_t{0})] = item;
            std::lock_guard lock(mutex_);
            instances_ = std::move(fresh);
            changed_ = true;
            cv_.notify_all();
          }
          return true;
        },
        [&](std::string_view bytes) {
          buffer.append(bytes);
          size_t end;
          while ((end = buffer.find("\n\n")) != std::string::npos) {
            std::string chunk = buffer.substr(0, end);
            buffer.erase(0, end + 2);
            const size_t first = chunk.find_first_not_of(" \r\n");
            if (first == std::string::npos) continue;
            apply(json::parse(chunk.substr(first), nullptr, false));
          }
          return true;
        });
    if (Stopping()) break;
    if (!status.ok()) TLOG_WARN("agent: instance watch ended: {}", status.message());
    SleepFor(1);
  }
}

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
  if (message.size() > 4000) message = message.substr(0, 1000) + "\n…\n" + message.substr(message.size() - 2900);
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
        if (d.type == "cpu" && d.index == index) spec.cpus.insert(spec.cpus.end(), d.cpus.begin(), d.cpus.end());
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

void Agent::Reconcile() {
  std::map<int64_t, json> instances;
  int64_t me;
  {
    std::lock_guard lock(mutex_);
    instances = instances_;
    me = worker_id_;
    changed_ = false;
  }
  const auto role = [&](const json& i) -> int {  // -1 main, >= 0 subordinate, -2 none
    if (i.value("worker_id", int64_t{0}) == me) return -1;
    const json subs = i.value("distributed_servers", json::object())
                          .value("subordinate_workers", json::array());
    for (size_t k = 0; k < subs.size(); ++k) {
      if (subs[k].value("worker_id", int64_t{0}) == me) return static_cast<int>(k);
    }
    return -2;
  };
  // Runs whose instance went, restarted, or moved.
  for (auto it = runs_.begin(); it != runs_.end();) {
    auto inst = instances.find(it->first);
    const bool keep = inst != instances.end() &&
                      inst->second.value("restart_count", int64_t{0}) == it->second->restart_count &&
                      role(inst->second) == it->second->subordinate_index;
    if (keep) {
      ++it;
      continue;
    }
    if (it->second->process) {
      TLOG_INFO("agent: stopping instance '{}' run {}", it->second->name, it->second->restart_count);
      it->second->process->Stop(config_.stop_grace_s);
    }
    it = runs_.erase(it);
  }
  for (const auto& [id, instance] : instances) {
    const int r = role(instance);
    if (r == -2) continue;
    auto run = runs_.find(id);
    if (run != runs_.end()) {
      Supervise(*run->second, instance);
      continue;
    }
    const std::string state = instance.value("state", "");
    if (r == -1) {
      if (state == "SCHEDULED") {
        StartRun(instance, -1);
      } else if (state == "INITIALIZING" || state == "STARTING" || state == "RUNNING") {
        // Placed here and running, but not by this agent (it restarted): restart it.
        Report(id, instance.value("restart_count", int64_t{0}),
               {{"state", "ERROR"},
                {"state_message", fmt::format("the agent on '{}' restarted; its process was lost",
                                              config_.worker_name)}});
      }
      continue;
    }
    const json sub = instance["distributed_servers"]["subordinate_workers"][r];
    const std::string sub_state = sub.value("state", "");
    const int64_t rpc_port = instance["distributed_servers"].value("data_parallel_rpc_port", int64_t{0});
    const bool head_up = state == "INITIALIZING" || state == "STARTING" || state == "RUNNING";
    if (sub_state == "SCHEDULED" && head_up && rpc_port > 0) StartRun(instance, r);
  }
}

void Agent::SuperviseLoop() {
  while (true) {
    {
      std::unique_lock lock(mutex_);
      cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stopping_ || changed_; });
      if (stopping_) break;
    }
    Reconcile();
  }
  for (auto& [id, run] : runs_) {
    if (run->process) run->process->Stop(config_.stop_grace_s);
  }
  runs_.clear();
}

void Agent::Run() {
  while (!Stopping()) {
    Status status = Register();
    if (status.ok()) break;
    TLOG_WARN("agent: registration failed ({}); retrying in 2 s", status.message());
    SleepFor(2);
  }
  if (Stopping()) return;
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
  watch_thread_ = std::thread([this] { WatchLoop(); });
  SuperviseLoop();
  Stop();
  heartbeat_thread_.join();
  watch_thread_.join();
  log_server_->Stop();
}

}  // namespace tandem::cluster::agent
