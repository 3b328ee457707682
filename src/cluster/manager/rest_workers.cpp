// /v2/workers (registration, heartbeats, edits) and the agents' instance status reports.
#include "cluster/manager/rest_api.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "cluster/manager/credentials.h"
#include "cluster/manager/resources.h"
#include "cluster/manager/rest_util.h"

namespace tandem::cluster::manager {

using nlohmann::json;
using store::Record;
using store::Table;

namespace {

const std::set<std::string> kInstanceStates = {"PENDING",  "SCHEDULED", "INITIALIZING",
                                               "STARTING", "RUNNING",   "ERROR"};

}  // namespace

Result<json> RestApi::RegisterWorker(const json& body, const Principal& who) {
  auto name_field = StringField(body, "name");
  if (!name_field.ok()) return name_field.status();
  const std::string name = *name_field;
  TANDEM_RETURN_IF_ERROR(ValidateName("name", name));
  if (name.find(':') != std::string::npos) {
    return InvalidArgument("worker: 'name' must not contain ':'");
  }
  if (!body.contains("ip") || !body["ip"].is_string() || body["ip"].get<std::string>().empty()) {
    return InvalidArgument("worker: field 'ip' (a string) is required");
  }
  if (!body.contains("port") || !body["port"].is_number_integer() || body["port"] < 1 ||
      body["port"] > 65535) {
    return InvalidArgument("worker: field 'port' must be 1..65535");
  }
  json labels = body.value("labels", json::object());
  if (!labels.is_object()) return InvalidArgument("worker: 'labels' must be an object of strings");
  for (const auto& [k, v] : labels.items()) {
    if (!v.is_string()) return InvalidArgument("worker: 'labels' must be an object of strings");
  }
  auto hostname = StringField(body, "hostname", name);
  if (!hostname.ok()) return hostname.status();
  auto previous_key = StringField(body, "previous_api_key");
  if (!previous_key.ok()) return previous_key.status();
  json data = {{"name", name},
               {"ip", body["ip"]},
               {"port", body["port"]},
               {"hostname", *hostname},
               {"labels", labels},
               {"state", "not_ready"},
               {"state_message", "registered; waiting for the first heartbeat"},
               {"heartbeat_time", nullptr},
               {"heartbeat_unix", 0},
               {"maintenance", false},
               {"status", json::object()},
               {"log_secret", RandomHex(16)}};
  auto existing = store_.FindByName(Table::kWorkers, name);
  if (!existing.ok()) return existing.status();
  Result<Record> record = Status::Ok();
  if (existing->has_value()) {
    // A restarted agent registers again: same row, new key. It proves it is that worker with
    // its previous key; without one, only once the worker has gone quiet (or for an admin), so
    // that the registration token alone cannot take over a live worker's identity.
    const Record& current = **existing;
    bool proven = who.is_admin;
    if (auto parts = ParseApiKey(*previous_key)) {
      auto key = store_.FindByName(Table::kApiKeys, parts->access);
      if (!key.ok()) return key.status();
      proven |= key->has_value() && (*key)->data.value("worker_id", int64_t{0}) == current.id &&
                DigestsEqual(HashSecret((*key)->data.value("salt", ""), parts->secret),
                             (*key)->data.value("hashed_secret", ""));
    }
    const int64_t quiet_s = NowUnix() - current.data.value("heartbeat_unix", int64_t{0});
    if (!proven && quiet_s < static_cast<int64_t>(config_.worker_not_ready_after_s)) {
      return Conflict(fmt::format(
          "worker '{}' is registered and sent a heartbeat {} s ago: a restarting agent presents "
          "its previous key (previous_api_key); otherwise register after {:.0f} s without "
          "heartbeats, or under another name",
          name, quiet_s, config_.worker_not_ready_after_s));
    }
    data["labels"] = labels.empty() ? current.data.value("labels", json::object()) : labels;
    data["maintenance"] = current.data.value("maintenance", false);
    record = store_.Update(Table::kWorkers, current.id, name, data);
    auto keys = store_.List(Table::kApiKeys);
    if (!keys.ok()) return keys.status();
    for (const Record& k : *keys) {
      if (k.data.value("worker_id", int64_t{0}) == current.id) {
        (void)store_.Delete(Table::kApiKeys, k.id);
      }
    }
  } else {
    record = store_.Create(Table::kWorkers, name, data);
  }
  if (!record.ok()) return record.status();
  const ApiKeyParts key = NewApiKey();
  const std::string salt = RandomHex(16);
  json key_data = {{"name", "worker " + name},
                   {"description", "issued at the worker's registration"},
                   {"salt", salt},
                   {"hashed_secret", HashSecret(salt, key.secret)},
                   {"scope", json::array({"worker"})},
                   {"allowed_model_names", json::array()},
                   {"expires_in", 0},
                   {"expires_at", nullptr},
                   {"expires_at_unix", 0},
                   {"user_id", who.user_id},
                   {"worker_id", record->id}};
  auto key_record = store_.Create(Table::kApiKeys, key.access, std::move(key_data));
  if (!key_record.ok()) return key_record.status();
  json out = PublicView(Table::kWorkers, *record);
  out["api_key"] = ApiKeyValue(key);
  out["log_secret"] =
      record->data["log_secret"];  // the agent's logs endpoint trusts the manager by it
  return out;
}

Result<json> RestApi::Heartbeat(int64_t worker_id, const json& body, const Principal& who) {
  if (who.worker_id != worker_id) return Forbidden("a worker reports only for itself");
  const json status = body.value("status", json::object());
  if (!status.is_object()) return InvalidArgument("heartbeat: 'status' must be an object");
  const json devices = status.value("gpu_devices", json::array());
  if (!devices.is_array())
    return InvalidArgument("heartbeat: 'status.gpu_devices' must be an array");
  auto worker = store_.Modify(Table::kWorkers, worker_id, [&](json& w) {
    w["status"] = status;
    w["heartbeat_time"] = store::NowIso8601();
    w["heartbeat_unix"] = NowUnix();
    if (w.value("maintenance", false)) {
      w["state"] = "maintenance";
      w["state_message"] = "maintenance mode: no new instances are placed here";
    } else {
      w["state"] = "ready";
      w["state_message"] = "";
    }
    return Status::Ok();
  });
  if (!worker.ok()) return worker.status();
  // Devices: one row each, named WORKER:TYPE:INDEX.
  auto rows = store_.List(Table::kGpuDevices);
  if (!rows.ok()) return rows.status();
  std::map<std::string, Record> mine;
  for (Record& r : *rows) {
    if (r.data.value("worker_id", int64_t{0}) == worker_id) mine.emplace(r.name, std::move(r));
  }
  std::set<std::string> reported;
  for (const json& d : devices) {
    if (!d.is_object() || !d.contains("index") || !d["index"].is_number_integer() ||
        d["index"].get<int64_t>() < 0 || d["index"].get<int64_t>() > 65535 || !d.contains("type") ||
        !d["type"].is_string() ||
        (d["type"] != "cpu" && d["type"] != "cuda" && d["type"] != "cann")) {
      return InvalidArgument(
          "heartbeat: each gpu_devices entry needs an 'index' 0..65535 and a "
          "'type' cpu, cuda or cann");
    }
    const std::string name = fmt::format("{}:{}:{}", worker->name, d["type"].get<std::string>(),
                                         d["index"].get<int64_t>());
    reported.insert(name);
    json data = d;
    data["name"] = name;
    data["worker_id"] = worker_id;
    data["worker_name"] = worker->name;
    data["worker_ip"] = worker->data.value("ip", "");
    auto it = mine.find(name);
    if (it == mine.end()) {
      Status s = store_.Create(Table::kGpuDevices, name, std::move(data)).status();
      if (!s.ok() && s.code() != StatusCode::kConflict) return s;
    } else if (it->second.data != data) {
      TANDEM_RETURN_IF_ERROR(store_.Update(Table::kGpuDevices, it->second.id, name, data).status());
    }
  }
  for (const auto& [name, r] : mine) {
    if (!reported.count(name)) (void)store_.Delete(Table::kGpuDevices, r.id);
  }
  return PublicView(Table::kWorkers, *worker);
}

Result<json> RestApi::UpdateWorker(int64_t id, const json& body) {
  auto current = store_.Get(Table::kWorkers, id);
  if (!current.ok()) return current.status();
  auto merged = ValidateWorkerUpdate(body, current->data);
  if (!merged.ok()) return merged.status();
  if ((*merged)["maintenance"].get<bool>()) {
    (*merged)["state"] = "maintenance";
  } else if (current->data.value("state", "") == "maintenance") {
    (*merged)["state"] = "ready";  // the next missed heartbeat corrects this
  }
  auto expected_version = ExpectedVersion(body);
  if (!expected_version.ok()) return expected_version.status();
  const int64_t expected = *expected_version;
  auto record =
      store_.Update(Table::kWorkers, id, current->name, std::move(merged).value(), expected);
  if (!record.ok()) return record.status();
  return PublicView(Table::kWorkers, *record);
}

Result<json> RestApi::ReportInstanceStatus(int64_t id, const json& body, const Principal& who) {
  auto state_field = StringField(body, "state");
  if (!state_field.ok()) return state_field.status();
  const std::string state = *state_field;
  auto message_field = StringField(body, "state_message");
  if (!message_field.ok()) return message_field.status();
  if (!kInstanceStates.count(state) || state == "PENDING" || state == "SCHEDULED") {
    return InvalidArgument(fmt::format(
        "instance status: 'state' must be INITIALIZING, STARTING, RUNNING or ERROR, not '{}'",
        state));
  }
  if (!body.contains("restart_count") || !body["restart_count"].is_number_integer()) {
    return InvalidArgument("instance status: 'restart_count' (the run reported on) is required");
  }
  const int64_t run = body["restart_count"];
  auto record = store_.Modify(Table::kModelInstances, id, [&](json& i) -> Status {
    if (i.value("restart_count", int64_t{0}) != run) {
      return Conflict(fmt::format("instance {} is at run {}, the report is for run {}", id,
                                  i.value("restart_count", int64_t{0}), run));
    }
    const bool main = i.value("worker_id", int64_t{0}) == who.worker_id;
    if (main && !(body.contains("subordinate") && body["subordinate"] == true)) {
      if (state == "ERROR" && i.value("state", "") == "ERROR") {
        // A second failure of the same run (the head exits once its subordinate's ranks are
        // lost): the first one is the cause; keep it first.
        i["state_message"] = i.value("state_message", "") + "; then: " + *message_field;
      } else {
        i["state_message"] = *message_field;
      }
      i["state"] = state;
      for (const char* field : {"port", "pid"}) {
        if (body.contains(field) && body[field].is_number_integer()) i[field] = body[field];
      }
      if (body.contains("data_parallel_rpc_port") &&
          body["data_parallel_rpc_port"].is_number_integer()) {
        i["distributed_servers"]["data_parallel_rpc_port"] = body["data_parallel_rpc_port"];
      }
      if (state == "ERROR") i["error_unix"] = NowUnix();
      return Status::Ok();
    }
    json& subordinates = i["distributed_servers"]["subordinate_workers"];
    if (subordinates.is_array()) {
      for (json& s : subordinates) {
        if (s.value("worker_id", int64_t{0}) != who.worker_id) continue;
        s["state"] = state;
        s["state_message"] = *message_field;
        if (body.contains("pid") && body["pid"].is_number_integer()) s["pid"] = body["pid"];
        if (state == "ERROR") {
          // A follower that fails fails the instance: the head cannot serve without its ranks.
          i["state"] = "ERROR";
          i["state_message"] =
              fmt::format("subordinate worker {}: {}", s.value("worker_name", ""), *message_field);
          i["error_unix"] = NowUnix();
        }
        return Status::Ok();
      }
    }
    return Forbidden(fmt::format("instance {} does not run on worker {}", id, who.worker_id));
  });
  if (!record.ok()) return record.status();
  return PublicView(Table::kModelInstances, *record);
}

}  // namespace tandem::cluster::manager
