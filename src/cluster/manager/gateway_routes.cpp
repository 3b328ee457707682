#include "cluster/manager/gateway_routes.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "http/client.h"

namespace tandem::cluster::manager {

using nlohmann::json;
using store::Table;
using store::WatchEvent;

int64_t ParseQueuedRequests(const std::string& text) {
  int64_t total = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("vllm:num_requests_running", 0) != 0 &&
        line.rfind("vllm:num_requests_waiting", 0) != 0) {
      continue;
    }
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    total += static_cast<int64_t>(std::strtod(line.c_str() + space + 1, nullptr));
  }
  return total;
}

GatewayRoutes::~GatewayRoutes() {
  for (int64_t handle : subscriptions_) store_.Unsubscribe(handle);
}

Status GatewayRoutes::Start() {
  auto models = store_.Subscribe(
      Table::kModels, [this](const WatchEvent& e) { OnModel(e); }, true);
  if (!models.ok()) return models.status();
  subscriptions_.push_back(*models);
  auto instances = store_.Subscribe(
      Table::kModelInstances, [this](const WatchEvent& e) { OnInstance(e); }, true);
  if (!instances.ok()) return instances.status();
  subscriptions_.push_back(*instances);
  return Status::Ok();
}

void GatewayRoutes::OnModel(const WatchEvent& event) {
  std::lock_guard lock(mutex_);
  for (auto it = model_ids_.begin(); it != model_ids_.end();) {
    it = it->second == event.record.id ? model_ids_.erase(it) : std::next(it);
  }
  if (event.type != WatchEvent::kDeleted) model_ids_[event.record.name] = event.record.id;
}

void GatewayRoutes::OnInstance(const WatchEvent& event) {
  std::lock_guard lock(mutex_);
  if (event.type == WatchEvent::kDeleted) {
    instances_.erase(event.record.id);
    return;
  }
  const json& d = event.record.data;
  Instance& i = instances_[event.record.id];
  i.id = event.record.id;
  i.model_id = d.value("model_id", int64_t{0});
  i.running = d.value("state", "") == "RUNNING";
  i.base_url = fmt::format("http://{}:{}", d.value("worker_ip", ""), d.value("port", int64_t{0}));
}

bool GatewayRoutes::HasModel(const std::string& model) const {
  std::lock_guard lock(mutex_);
  return model_ids_.count(model) > 0;
}

std::vector<std::string> GatewayRoutes::ModelNames() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [name, id] : model_ids_) out.push_back(name);
  return out;
}

std::optional<Upstream> GatewayRoutes::Pick(const std::string& model,
                                            const std::vector<int64_t>& exclude) {
  std::lock_guard lock(mutex_);
  auto model_it = model_ids_.find(model);
  if (model_it == model_ids_.end()) return std::nullopt;
  Instance* best = nullptr;
  int64_t best_load = 0;
  for (auto& [id, i] : instances_) {
    if (i.model_id != model_it->second || !i.running) continue;
    if (std::find(exclude.begin(), exclude.end(), id) != exclude.end()) continue;
    const int64_t load = i.in_flight->load() + i.external;
    if (!best || load < best_load || (load == best_load && i.last_picked < best->last_picked)) {
      best = &i;
      best_load = load;
    }
  }
  if (!best) return std::nullopt;
  best->last_picked = ++pick_counter_;
  best->in_flight->fetch_add(1);
  return Upstream{best->id, best->base_url, best->in_flight};
}

void GatewayRoutes::PollLoads() {
  std::vector<std::pair<int64_t, std::string>> targets;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, i] : instances_) {
      if (i.running) targets.emplace_back(id, i.base_url);
    }
  }
  for (const auto& [id, url] : targets) {
    http::ClientRequest request;
    request.url = url + "/metrics";
    request.connect_timeout_s = request.idle_timeout_s = 0.5;
    auto reply = http::Fetch(request, 8 << 20);
    if (!reply.ok() || reply->status != 200) continue;
    const int64_t queued = ParseQueuedRequests(reply->body);
    std::lock_guard lock(mutex_);
    auto it = instances_.find(id);
    if (it != instances_.end())
      it->second.external = std::max<int64_t>(0, queued - it->second.in_flight->load());
  }
}

}  // namespace tandem::cluster::manager

namespace tandem::cluster::manager {

std::vector<std::tuple<std::string, int64_t, int64_t>> GatewayRoutes::Loads() const {
  std::lock_guard lock(mutex_);
  std::vector<std::tuple<std::string, int64_t, int64_t>> out;
  for (const auto& [name, model_id] : model_ids_) {
    for (const auto& [id, i] : instances_) {
      if (i.model_id == model_id && i.running)
        out.emplace_back(name, id, i.in_flight->load() + i.external);
    }
  }
  return out;
}

}  // namespace tandem::cluster::manager
