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

#include "cluster/agent/instance_run.h"
#include "core/clock.h"
#include "core/logging.h"
#include "http/sse_splitter.h"

namespace tandem::cluster::agent {

using nlohmann::json;

namespace {

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
  if (config_.token.empty())
    return InvalidArgument("--token is required (the manager's DATA_DIR/token)");
  if (config_.data_dir.empty()) return InvalidArgument("--data-dir is required");
  if (config_.port_range_begin == 0 || config_.port_range_end < config_.port_range_begin) {
    return InvalidArgument(fmt::format("--service-port-range {}-{} is empty",
                                       config_.port_range_begin, config_.port_range_end));
  }
  std::error_code ec;
  std::filesystem::create_directories(config_.data_dir + "/logs", ec);
  if (ec) {
    return InvalidArgument(
        fmt::format("--data-dir '{}': cannot create it: {}", config_.data_dir, ec.message()));
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
    return InvalidArgument(
        "--worker-ip: cannot tell which local address reaches the manager; give it");
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
    const std::string message =
        parsed.is_object() ? parsed.value("message", response->body) : response->body;
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
  std::filesystem::permissions(
      key_path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
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
    http::SseSplitter splitter;  // the watch stream: one JSON object per event
    const auto apply = [&](const json& event) {
      if (!event.is_object() || !event.contains("id")) return;
      const int64_t id = event["id"];
      std::lock_guard lock(mutex_);
      if (event.value("type", 0) == 3) {
        instances_.erase(id);
      } else {
        const json& data = event["data"];
        auto it = instances_.find(id);
        if (it != instances_.end() && it->second.value("resource_version", int64_t{0}) >
                                          data.value("resource_version", int64_t{0})) {
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
          splitter.Feed(bytes, [&](std::string_view event) {
            const size_t first = event.find_first_not_of(" \r\n");
            if (first == std::string_view::npos) return;
            apply(json::parse(event.substr(first), nullptr, false));
          });
          return true;
        });
    if (Stopping()) break;
    if (!status.ok()) TLOG_WARN("agent: instance watch ended: {}", status.message());
    SleepFor(1);
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
    const json subs =
        i.value("distributed_servers", json::object()).value("subordinate_workers", json::array());
    for (size_t k = 0; k < subs.size(); ++k) {
      if (subs[k].value("worker_id", int64_t{0}) == me) return static_cast<int>(k);
    }
    return -2;
  };
  // Runs whose instance went, restarted, or moved.
  for (auto it = runs_.begin(); it != runs_.end();) {
    auto inst = instances.find(it->first);
    const bool keep =
        inst != instances.end() &&
        inst->second.value("restart_count", int64_t{0}) == it->second->restart_count &&
        role(inst->second) == it->second->subordinate_index;
    if (keep) {
      ++it;
      continue;
    }
    if (it->second->process) {
      TLOG_INFO("agent: stopping instance '{}' run {}", it->second->name,
                it->second->restart_count);
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
    const int64_t rpc_port =
        instance["distributed_servers"].value("data_parallel_rpc_port", int64_t{0});
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
