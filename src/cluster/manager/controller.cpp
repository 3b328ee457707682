#include "cluster/manager/controller.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "cluster/manager/credentials.h"
#include "core/logging.h"

namespace tandem::cluster::manager {

using nlohmann::json;
using store::Record;
using store::Table;

namespace {

struct Device {
  std::string id;  // WORKER:TYPE:INDEX
  int64_t worker_id = 0;
  std::string type;
  int64_t index = 0;
};

// Every device id an instance holds (main and subordinates).
std::vector<std::string> HeldDevices(const json& instance) {
  std::vector<std::string> out = instance.value("gpu_ids", std::vector<std::string>{});
  const json& subs = instance.value("distributed_servers", json::object())
                         .value("subordinate_workers", json::array());
  for (const json& s : subs) {
    for (const std::string& id : s.value("gpu_ids", std::vector<std::string>{})) out.push_back(id);
  }
  return out;
}

bool LabelsMatch(const json& selector, const json& labels) {
  for (const auto& [k, v] : selector.items()) {
    if (!labels.contains(k) || labels[k] != v) return false;
  }
  return true;
}

}  // namespace

int64_t Controller::RestartDelayS(int64_t restart_count) {
  if (restart_count <= 0) return 0;
  if (restart_count >= 6) return 300;
  return std::min<int64_t>(10LL << (restart_count - 1), 300);
}

void Controller::RunOnce(int64_t now_unix) {
  for (Status s : {UpdateWorkerStates(now_unix), ReconcileReplicas(), PlacePending(),
                   RestartFailed(now_unix), UpdateReadyReplicas()}) {
    if (!s.ok()) TLOG_WARN("manager controller: {}", s.ToString());
  }
}

Status Controller::UpdateWorkerStates(int64_t now_unix) {
  auto workers = store_.List(Table::kWorkers);
  if (!workers.ok()) return workers.status();
  for (const Record& w : *workers) {
    const int64_t last = w.data.value("heartbeat_unix", int64_t{0});
    const std::string state = w.data.value("state", "");
    if (last == 0 || state == "maintenance") continue;
    const double age = static_cast<double>(now_unix - last);
    std::string next = state;
    std::string message;
    if (age >= config_.worker_unreachable_after_s) {
      next = "unreachable";
      message = fmt::format("no heartbeat for {} s", now_unix - last);
    } else if (age >= config_.worker_not_ready_after_s) {
      next = "not_ready";
      message = fmt::format("no heartbeat for {} s", now_unix - last);
    }
    if (next != state) {
      TANDEM_RETURN_IF_ERROR(store_
                                 .Modify(Table::kWorkers, w.id,
                                         [&](json& d) {
                                           d["state"] = next;
                                           d["state_message"] = message;
                                           return Status::Ok();
                                         })
                                 .status());
      if (next == "unreachable") TANDEM_RETURN_IF_ERROR(FailInstancesOn(w, message, now_unix));
    }
  }
  return Status::Ok();
}

Status Controller::FailInstancesOn(const Record& worker, const std::string& why, int64_t now_unix) {
  // Its agent is gone, and its processes with it (they end with their agent): the instances
  // it ran are not running, whatever they last reported.
  auto instances = store_.List(Table::kModelInstances);
  if (!instances.ok()) return instances.status();
  for (const Record& i : *instances) {
    bool on_worker = i.data.value("worker_id", int64_t{0}) == worker.id;
    for (const json& s : i.data.value("distributed_servers", json::object())
                             .value("subordinate_workers", json::array())) {
      on_worker |= s.value("worker_id", int64_t{0}) == worker.id;
    }
    const std::string state = i.data.value("state", "");
    if (!on_worker || (state != "INITIALIZING" && state != "STARTING" && state != "RUNNING")) {
      continue;
    }
    TANDEM_RETURN_IF_ERROR(store_
                               .Modify(Table::kModelInstances, i.id,
                                       [&](json& d) {
                                         d["state"] = "ERROR";
                                         d["state_message"] = fmt::format(
                                             "worker '{}' is unreachable ({})", worker.name, why);
                                         d["error_unix"] = now_unix;
                                         return Status::Ok();
                                       })
                               .status());
  }
  return Status::Ok();
}

Status Controller::ReconcileReplicas() {
  auto models = store_.List(Table::kModels);
  if (!models.ok()) return models.status();
  auto instances = store_.List(Table::kModelInstances);
  if (!instances.ok()) return instances.status();
  auto workers = store_.List(Table::kWorkers);
  if (!workers.ok()) return workers.status();
  std::set<int64_t> worker_ids;
  for (const Record& w : *workers) worker_ids.insert(w.id);
  std::map<int64_t, std::vector<Record>> by_model;
  std::set<int64_t> model_ids;
  for (const Record& m : *models) model_ids.insert(m.id);
  for (Record& i : *instances) {
    const int64_t model_id = i.data.value("model_id", int64_t{0});
    const int64_t worker_id = i.data.value("worker_id", int64_t{0});
    if (!model_ids.count(model_id) || (worker_id != 0 && !worker_ids.count(worker_id))) {
      // Its deployment or its worker is gone.
      Status s = store_.Delete(Table::kModelInstances, i.id);
      if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
      continue;
    }
    by_model[model_id].push_back(std::move(i));
  }
  for (const Record& m : *models) {
    const int64_t replicas = m.data.value("replicas", int64_t{0});
    std::vector<Record>& mine = by_model[m.id];
    while (static_cast<int64_t>(mine.size()) < replicas) {
      json data = {{"name", fmt::format("{}-{}", m.name, RandomHex(3))},
                   {"model_id", m.id},
                   {"model_name", m.name},
                   {"worker_id", 0},
                   {"worker_name", ""},
                   {"worker_ip", ""},
                   {"gpu_ids", json::array()},
                   {"gpu_indexes", json::array()},
                   {"gpu_type", ""},
                   {"port", 0},
                   {"pid", 0},
                   {"state", "PENDING"},
                   {"state_message", ""},
                   {"restart_count", 0},
                   {"error_unix", 0},
                   {"distributed_servers", {{"subordinate_workers", json::array()}}}};
      const std::string name = data["name"];  // before the move below
      auto created = store_.Create(Table::kModelInstances, name, std::move(data));
      if (!created.ok()) return created.status();
      mine.push_back(std::move(created).value());
    }
    if (static_cast<int64_t>(mine.size()) > replicas) {
      // Keep RUNNING ones, then the oldest.
      std::stable_sort(mine.begin(), mine.end(), [](const Record& a, const Record& b) {
        const bool ra = a.data.value("state", "") == "RUNNING";
        const bool rb = b.data.value("state", "") == "RUNNING";
        if (ra != rb) return ra;
        return a.id < b.id;
      });
      for (size_t k = static_cast<size_t>(replicas); k < mine.size(); ++k) {
        Status s = store_.Delete(Table::kModelInstances, mine[k].id);
        if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
      }
    }
  }
  return Status::Ok();
}

Status Controller::PlacePending() {
  auto instances = store_.List(Table::kModelInstances);
  if (!instances.ok()) return instances.status();
  bool any_pending = false;
  for (const Record& i : *instances) any_pending |= i.data.value("state", "") == "PENDING";
  if (!any_pending) return Status::Ok();
  auto workers = store_.List(Table::kWorkers);
  if (!workers.ok()) return workers.status();
  auto device_rows = store_.List(Table::kGpuDevices);
  if (!device_rows.ok()) return device_rows.status();
  auto models = store_.List(Table::kModels);
  if (!models.ok()) return models.status();

  std::map<int64_t, const Record*> worker_by_id;
  for (const Record& w : *workers) worker_by_id[w.id] = &w;
  std::map<std::string, Device> devices;
  std::map<int64_t, std::vector<std::string>> devices_of_worker;  // in index order
  for (const Record& d : *device_rows) {
    Device dev{d.name, d.data.value("worker_id", int64_t{0}), d.data.value("type", ""),
               d.data.value("index", int64_t{0})};
    devices[d.name] = dev;
    devices_of_worker[dev.worker_id].push_back(d.name);
  }
  for (auto& [w, ids] : devices_of_worker) {
    std::sort(ids.begin(), ids.end(), [&](const std::string& a, const std::string& b) {
      return devices[a].index < devices[b].index;
    });
  }
  std::set<std::string> used;
  std::map<int64_t, int> instances_on_worker;
  for (const Record& i : *instances) {
    for (const std::string& id : HeldDevices(i.data)) used.insert(id);
    if (const int64_t w = i.data.value("worker_id", int64_t{0})) ++instances_on_worker[w];
  }
  std::map<int64_t, const Record*> model_by_id;
  for (const Record& m : *models) model_by_id[m.id] = &m;
  const auto ready = [&](int64_t worker_id) {
    auto it = worker_by_id.find(worker_id);
    return it != worker_by_id.end() && it->second->data.value("state", "") == "ready";
  };
  const auto worker_name = [&](int64_t worker_id) {
    auto it = worker_by_id.find(worker_id);
    return it == worker_by_id.end() ? std::string("?") : it->second->name;
  };

  for (const Record& instance : *instances) {
    if (instance.data.value("state", "") != "PENDING") continue;
    auto model_it = model_by_id.find(instance.data.value("model_id", int64_t{0}));
    if (model_it == model_by_id.end()) continue;
    const json& m = model_it->second->data;
    const json& selector = m.value("gpu_selector", json::object());
    const std::vector<std::string> selected = selector.value("gpu_ids", std::vector<std::string>{});
    const int64_t per_replica = selector.value("gpus_per_replica", int64_t{0});
    const bool distributed = m.value("distributed_inference_across_workers", false);

    // The chosen devices grouped by worker, the main worker first.
    std::vector<std::pair<int64_t, std::vector<std::string>>> placement;
    std::string why;
    if (!selected.empty()) {
      std::vector<std::pair<int64_t, std::vector<std::string>>> groups;
      for (const std::string& id : selected) {
        auto dev = devices.find(id);
        if (dev == devices.end()) {
          why = fmt::format("device '{}' is not registered (is its worker's agent running?)", id);
          break;
        }
        auto g = std::find_if(groups.begin(), groups.end(),
                              [&](const auto& p) { return p.first == dev->second.worker_id; });
        if (g == groups.end()) {
          groups.push_back({dev->second.worker_id, {}});
          g = groups.end() - 1;
        }
        g->second.push_back(id);
      }
      if (why.empty() && distributed) {
        for (const auto& [w, ids] : groups) {
          if (!ready(w)) why = fmt::format("worker '{}' is not ready", worker_name(w));
          for (const std::string& id : ids) {
            if (used.count(id)) why = fmt::format("device '{}' is in use", id);
          }
        }
        if (why.empty()) placement = groups;
      } else if (why.empty()) {
        for (const auto& [w, ids] : groups) {
          if (!ready(w)) {
            why = fmt::format("worker '{}' is not ready", worker_name(w));
            continue;
          }
          std::vector<std::string> free;
          for (const std::string& id : ids) {
            if (!used.count(id)) free.push_back(id);
          }
          const size_t need = per_replica > 0 ? static_cast<size_t>(per_replica) : ids.size();
          if (free.size() >= need) {
            free.resize(need);
            placement = {{w, free}};
            break;
          }
          why = fmt::format("worker '{}' has {} of the {} selected devices free", worker_name(w),
                            free.size(), need);
        }
      }
    } else {
      const size_t need = per_replica > 0 ? static_cast<size_t>(per_replica) : 1;
      const bool spread = m.value("placement_strategy", "spread") != "binpack";
      const json selector_labels = m.value("worker_selector", json::object());
      int64_t best = 0;
      for (const Record& w : *workers) {
        if (!ready(w.id) || !LabelsMatch(selector_labels, w.data.value("labels", json::object()))) {
          continue;
        }
        size_t free = 0;
        for (const std::string& id : devices_of_worker[w.id]) free += used.count(id) ? 0 : 1;
        if (free < need) continue;
        if (best == 0 || (spread ? instances_on_worker[w.id] < instances_on_worker[best]
                                 : instances_on_worker[w.id] > instances_on_worker[best])) {
          best = w.id;
        }
      }
      if (best == 0) {
        why = fmt::format("no ready worker{} has {} free device{}",
                          selector_labels.empty() ? "" : " matching worker_selector", need,
                          need == 1 ? "" : "s");
      } else {
        std::vector<std::string> chosen;
        for (const std::string& id : devices_of_worker[best]) {
          if (!used.count(id) && chosen.size() < need) chosen.push_back(id);
        }
        placement = {{best, chosen}};
      }
    }

    if (placement.empty()) {
      const std::string message = "waiting for devices: " + why;
      if (instance.data.value("state_message", "") != message) {
        TANDEM_RETURN_IF_ERROR(store_
                                   .Modify(Table::kModelInstances, instance.id,
                                           [&](json& d) {
                                             if (d.value("state", "") == "PENDING")
                                               d["state_message"] = message;
                                             return Status::Ok();
                                           })
                                   .status());
      }
      continue;
    }
    const auto describe = [&](int64_t w, const std::vector<std::string>& ids) {
      json indexes = json::array();
      for (const std::string& id : ids) indexes.push_back(devices[id].index);
      const Record* worker = worker_by_id[w];
      return json{{"worker_id", w},
                  {"worker_name", worker->name},
                  {"worker_ip", worker->data.value("ip", "")},
                  {"gpu_ids", ids},
                  {"gpu_indexes", indexes},
                  {"gpu_type", devices[ids.front()].type}};
    };
    auto placed = store_.Modify(Table::kModelInstances, instance.id, [&](json& d) -> Status {
      if (d.value("state", "") != "PENDING") return Status::Ok();  // changed meanwhile
      const json main = describe(placement[0].first, placement[0].second);
      for (const auto& [k, v] : main.items()) d[k] = v;
      json subordinates = json::array();
      for (size_t k = 1; k < placement.size(); ++k) {
        json sub = describe(placement[k].first, placement[k].second);
        sub["state"] = "SCHEDULED";
        sub["state_message"] = "";
        sub["pid"] = 0;
        subordinates.push_back(std::move(sub));
      }
      d["distributed_servers"]["subordinate_workers"] = std::move(subordinates);
      d["state"] = "SCHEDULED";
      d["state_message"] = "";
      return Status::Ok();
    });
    if (!placed.ok()) return placed.status();
    for (const auto& [w, ids] : placement) {
      for (const std::string& id : ids) used.insert(id);
      ++instances_on_worker[w];
    }
  }
  return Status::Ok();
}

Status Controller::RestartFailed(int64_t now_unix) {
  auto instances = store_.List(Table::kModelInstances);
  if (!instances.ok()) return instances.status();
  for (const Record& i : *instances) {
    if (i.data.value("state", "") != "ERROR") continue;
    auto model = store_.Get(Table::kModels, i.data.value("model_id", int64_t{0}));
    if (!model.ok() || !model->data.value("restart_on_error", true)) continue;
    const int64_t restarts = i.data.value("restart_count", int64_t{0});
    if (now_unix < i.data.value("error_unix", int64_t{0}) + RestartDelayS(restarts)) continue;
    TANDEM_RETURN_IF_ERROR(store_
                               .Modify(Table::kModelInstances, i.id,
                                       [&](json& d) {
                                         if (d.value("state", "") != "ERROR") return Status::Ok();
                                         d["state"] = "SCHEDULED";
                                         d["restart_count"] = restarts + 1;
                                         d["state_message"] =
                                             fmt::format("restart {} after: {}", restarts + 1,
                                                         d.value("state_message", ""));
                                         d["pid"] = 0;
                                         json& subs =
                                             d["distributed_servers"]["subordinate_workers"];
                                         for (json& s : subs) {
                                           s["state"] = "SCHEDULED";
                                           s["state_message"] = "";
                                           s["pid"] = 0;
                                         }
                                         return Status::Ok();
                                       })
                               .status());
  }
  return Status::Ok();
}

Status Controller::UpdateReadyReplicas() {
  auto models = store_.List(Table::kModels);
  if (!models.ok()) return models.status();
  auto instances = store_.List(Table::kModelInstances);
  if (!instances.ok()) return instances.status();
  std::map<int64_t, int64_t> running;
  for (const Record& i : *instances) {
    if (i.data.value("state", "") == "RUNNING") ++running[i.data.value("model_id", int64_t{0})];
  }
  for (const Record& m : *models) {
    if (m.data.value("ready_replicas", int64_t{0}) == running[m.id]) continue;
    TANDEM_RETURN_IF_ERROR(store_
                               .Modify(Table::kModels, m.id,
                                       [&](json& d) {
                                         d["ready_replicas"] = running[m.id];
                                         return Status::Ok();
                                       })
                               .status());
  }
  return Status::Ok();
}

}  // namespace tandem::cluster::manager
