#include "cluster/manager/rest_api.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "cluster/manager/credentials.h"
#include "cluster/manager/list_query.h"
#include "cluster/manager/resources.h"
#include "cluster/manager/rest_util.h"
#include "cluster/manager/watch_stream.h"
#include "http/client.h"

namespace tandem::cluster::manager {

using nlohmann::json;
using store::Record;
using store::Table;

int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

struct Resource {
  const char* path;
  Table table;
  const char* search_field;
};

const Resource kResources[] = {
    {"workers", Table::kWorkers, "name"},
    {"gpu-devices", Table::kGpuDevices, "name"},
    {"inference-backends", Table::kInferenceBackends, "backend_name"},
    {"models", Table::kModels, "name"},
    {"model-instances", Table::kModelInstances, "name"},
    {"api-keys", Table::kApiKeys, "name"},
    {"users", Table::kUsers, "username"},
};

const Resource* FindResource(const std::string& path) {
  for (const Resource& r : kResources) {
    if (path == r.path) return &r;
  }
  return nullptr;
}

const std::set<std::string> kInstanceStates = {"PENDING",  "SCHEDULED", "INITIALIZING",
                                               "STARTING", "RUNNING",   "ERROR"};

Status Forbidden(const std::string& what) {
  return PermissionDenied("not allowed: " + what);
}

}  // namespace

json RestApi::PublicView(Table table, const Record& record) {
  json out = record.ToJson();
  if (table == Table::kWorkers) {
    out.erase("log_secret");
  } else if (table == Table::kUsers) {
    out.erase("password_hash");
  } else if (table == Table::kApiKeys) {
    out.erase("salt");
    out.erase("hashed_secret");
    out["masked_value"] = "tandem_" + record.name + "_********";
  }
  return out;
}

Result<json> RestApi::GetOne(Table table, int64_t id, const Principal& who) {
  auto record = store_.Get(table, id);
  if (!record.ok()) return record.status();
  if (table == Table::kApiKeys && !who.is_admin &&
      record->data.value("user_id", int64_t{0}) != who.user_id) {
    return NotFound(fmt::format("api_keys {} does not exist", id));
  }
  return PublicView(table, *record);
}

Status RestApi::ListOrWatch(Table table, const http::HttpRequest& request, const Principal& who,
                            const std::shared_ptr<http::ResponseSink>& sink) {
  auto query = ParseListQuery(request.query);
  if (!query.ok()) return query.status();
  const Resource* resource = nullptr;
  for (const Resource& r : kResources) {
    if (r.table == table) resource = &r;
  }
  // Non-admins see their own keys only; worker keys are never listed.
  if (table == Table::kApiKeys) {
    if (!who.is_admin) query->filters.emplace_back("user_id", std::to_string(who.user_id));
    query->filters.emplace_back("worker_id", "0");
  }
  if (query->watch) {
    return WatchStream::Start(
        store_, table, std::move(query).value(), resource->search_field,
        [table](const Record& r) { return PublicView(table, r); }, sink, io_context_,
        config_.watch_heartbeat_s);
  }
  auto rows = store_.List(table);
  if (!rows.ok()) return rows.status();
  std::vector<json> items;
  items.reserve(rows->size());
  for (const Record& r : *rows) items.push_back(PublicView(table, r));
  SendJson(*sink, ApplyListQuery(*query, std::move(items), resource->search_field));
  return Status::Ok();
}

Status RestApi::DeleteOne(Table table, int64_t id) {
  if (table == Table::kModels) {
    // Its instances go with it (their agents stop the processes when the rows disappear).
    auto instances = store_.List(Table::kModelInstances);
    if (!instances.ok()) return instances.status();
    TANDEM_RETURN_IF_ERROR(store_.Get(table, id).status());
    for (const Record& i : *instances) {
      if (i.data.value("model_id", int64_t{0}) == id) {
        Status s = store_.Delete(Table::kModelInstances, i.id);
        if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
      }
    }
  }
  if (table == Table::kInferenceBackends) {
    auto backend = store_.Get(table, id);
    if (!backend.ok()) return backend.status();
    if (backend->data.value("is_built_in", false)) {
      return InvalidArgument("the built-in backend 'tandem' cannot be deleted");
    }
    auto models = store_.List(Table::kModels);
    if (!models.ok()) return models.status();
    for (const Record& m : *models) {
      if (m.data.value("backend", "") == backend->name) {
        return Conflict(fmt::format("backend '{}' is used by deployment '{}'; delete or change "
                                    "that first",
                                    backend->name, m.name));
      }
    }
  }
  if (table == Table::kWorkers) {
    // The worker's devices and keys go with it.
    for (Table t : {Table::kGpuDevices, Table::kApiKeys}) {
      auto rows = store_.List(t);
      if (!rows.ok()) return rows.status();
      for (const Record& r : *rows) {
        if (r.data.value("worker_id", int64_t{0}) == id) (void)store_.Delete(t, r.id);
      }
    }
  }
  return store_.Delete(table, id);
}

Status RestApi::CheckModelReferences(const json& model) {
  const std::string backend_name = model["backend"];
  auto backend = store_.FindByName(Table::kInferenceBackends, backend_name);
  if (!backend.ok()) return backend.status();
  if (!backend->has_value()) {
    return InvalidArgument(fmt::format(
        "model: backend '{}' does not exist (register it at /v2/inference-backends)",
        backend_name));
  }
  const json& b = (*backend)->data;
  const std::string version = model["backend_version"];
  if (!version.empty() && !b["version_configs"].contains(version)) {
    std::string known;
    for (const auto& [v, c] : b["version_configs"].items()) known += (known.empty() ? "" : ", ") + v;
    return InvalidArgument(fmt::format("model: backend '{}' has no version '{}' (it has: {})",
                                       backend_name, version, known.empty() ? "none" : known));
  }
  const json& ids = model["gpu_selector"]["gpu_ids"];
  if (ids.empty()) return Status::Ok();
  auto devices = store_.List(Table::kGpuDevices);
  if (!devices.ok()) return devices.status();
  std::set<std::string> known;
  for (const Record& d : *devices) known.insert(d.name);
  for (const json& id : ids) {
    const std::string s = id;
    if (known.count(s)) continue;
    const std::string worker = s.substr(0, s.find(':'));
    std::string of_worker;
    for (const std::string& k : known) {
      if (k.rfind(worker + ":", 0) == 0) of_worker += (of_worker.empty() ? "" : ", ") + k;
    }
    return InvalidArgument(
        of_worker.empty()
            ? fmt::format("model: gpu_selector.gpu_ids: no worker '{}' has registered (in '{}')",
                          worker, s)
            : fmt::format("model: gpu_selector.gpu_ids: no device '{}'; worker '{}' has {}", s,
                          worker, of_worker));
  }
  return Status::Ok();
}

Result<json> RestApi::CreateModel(const json& body) {
  auto model = ValidateModel(body);
  if (!model.ok()) return model.status();
  TANDEM_RETURN_IF_ERROR(CheckModelReferences(*model));
  (*model)["ready_replicas"] = 0;
  const std::string name = (*model)["name"];  // before the move below
  auto record = store_.Create(Table::kModels, name, std::move(model).value());
  if (!record.ok()) return record.status();
  return PublicView(Table::kModels, *record);
}

Result<json> RestApi::UpdateModel(int64_t id, const json& body) {
  auto current = store_.Get(Table::kModels, id);
  if (!current.ok()) return current.status();
  auto model = ValidateModel(body);
  if (!model.ok()) return model.status();
  TANDEM_RETURN_IF_ERROR(CheckModelReferences(*model));
  (*model)["ready_replicas"] = current->data.value("ready_replicas", 0);
  const int64_t expected = body.is_object() && body.contains("resource_version") &&
                                   body["resource_version"].is_number_integer()
                               ? body["resource_version"].get<int64_t>()
                               : -1;
  // A change to what an instance runs replaces the deployment's instances (the controller
  // makes new ones); replicas, name and description changes do not.
  bool relaunch = false;
  for (const char* field : {"local_path", "backend", "backend_version", "backend_parameters", "env",
                            "placement_strategy", "worker_selector", "gpu_selector",
                            "distributed_inference_across_workers"}) {
    relaunch |= current->data.value(field, json()) != (*model)[field];
  }
  const std::string name = (*model)["name"];  // before the move below
  auto record = store_.Update(Table::kModels, id, name, std::move(model).value(), expected);
  if (!record.ok()) return record.status();
  if (relaunch) {
    auto instances = store_.List(Table::kModelInstances);
    if (!instances.ok()) return instances.status();
    for (const Record& i : *instances) {
      if (i.data.value("model_id", int64_t{0}) == id) (void)store_.Delete(Table::kModelInstances, i.id);
    }
  }
  return PublicView(Table::kModels, *record);
}

Result<json> RestApi::CreateBackend(const json& body) {
  auto backend = ValidateBackend(body);
  if (!backend.ok()) return backend.status();
  const std::string name = (*backend)["backend_name"];  // before the move below
  auto record = store_.Create(Table::kInferenceBackends, name, std::move(backend).value());
  if (!record.ok()) return record.status();
  return PublicView(Table::kInferenceBackends, *record);
}

Result<json> RestApi::UpdateBackend(int64_t id, const json& body) {
  auto current = store_.Get(Table::kInferenceBackends, id);
  if (!current.ok()) return current.status();
  if (current->data.value("is_built_in", false)) {
    return InvalidArgument("the built-in backend 'tandem' cannot be changed; register a custom "
                           "one ('<name>-custom')");
  }
  auto backend = ValidateBackend(body);
  if (!backend.ok()) return backend.status();
  const int64_t expected = body.contains("resource_version") &&
                                   body["resource_version"].is_number_integer()
                               ? body["resource_version"].get<int64_t>()
                               : -1;
  const std::string name = (*backend)["backend_name"];  // before the move below
  auto record =
      store_.Update(Table::kInferenceBackends, id, name, std::move(backend).value(), expected);
  if (!record.ok()) return record.status();
  return PublicView(Table::kInferenceBackends, *record);
}

Result<json> RestApi::RegisterWorker(const json& body, const Principal& who) {
  const std::string name = body.value("name", "");
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
  for (const auto& [k, v] : labels.items()) {
    if (!v.is_string()) return InvalidArgument("worker: 'labels' must be an object of strings");
  }
  json data = {{"name", name},
               {"ip", body["ip"]},
               {"port", body["port"]},
               {"hostname", body.value("hostname", name)},
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
    // A restarted agent registers again: same row, new key.
    data["labels"] = labels.empty() ? (*existing)->data.value("labels", json::object()) : labels;
    data["maintenance"] = (*existing)->data.value("maintenance", false);
    record = store_.Update(Table::kWorkers, (*existing)->id, name, data);
    auto keys = store_.List(Table::kApiKeys);
    if (!keys.ok()) return keys.status();
    for (const Record& k : *keys) {
      if (k.data.value("worker_id", int64_t{0}) == (*existing)->id) {
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
  out["log_secret"] = record->data["log_secret"];  // the agent's logs endpoint trusts the manager by it
  return out;
}

Result<json> RestApi::Heartbeat(int64_t worker_id, const json& body, const Principal& who) {
  if (who.worker_id != worker_id) return Forbidden("a worker reports only for itself");
  const json status = body.value("status", json::object());
  if (!status.is_object()) return InvalidArgument("heartbeat: 'status' must be an object");
  const json devices = status.value("gpu_devices", json::array());
  if (!devices.is_array()) return InvalidArgument("heartbeat: 'status.gpu_devices' must be an array");
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
        !d.contains("type") || !d["type"].is_string()) {
      return InvalidArgument("heartbeat: each gpu_devices entry needs an integer 'index' and a "
                             "string 'type'");
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
  const int64_t expected = body.contains("resource_version") &&
                                   body["resource_version"].is_number_integer()
                               ? body["resource_version"].get<int64_t>()
                               : -1;
  auto record = store_.Update(Table::kWorkers, id, current->name, std::move(merged).value(), expected);
  if (!record.ok()) return record.status();
  return PublicView(Table::kWorkers, *record);
}

Result<json> RestApi::ReportInstanceStatus(int64_t id, const json& body, const Principal& who) {
  const std::string state = body.value("state", "");
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
    if (main && !body.value("subordinate", false)) {
      i["state"] = state;
      i["state_message"] = body.value("state_message", "");
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
        s["state_message"] = body.value("state_message", "");
        if (body.contains("pid") && body["pid"].is_number_integer()) s["pid"] = body["pid"];
        if (state == "ERROR") {
          // A follower that fails fails the instance: the head cannot serve without its ranks.
          i["state"] = "ERROR";
          i["state_message"] = fmt::format("subordinate worker {}: {}",
                                           s.value("worker_name", ""),
                                           body.value("state_message", ""));
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

Status RestApi::ProxyLogs(int64_t id, const http::HttpRequest& request,
                          const std::shared_ptr<http::ResponseSink>& sink) {
  auto instance = store_.Get(Table::kModelInstances, id);
  if (!instance.ok()) return instance.status();
  auto query = ParseQueryString(request.query);
  if (!query.ok()) return query.status();
  int64_t worker_id = instance->data.value("worker_id", int64_t{0});
  std::string tail;
  bool follow = false;
  for (const auto& [k, v] : *query) {
    if (k == "worker_id") {
      auto w = ParseId(v);
      if (!w) return InvalidArgument("query parameter 'worker_id' must be a worker's id");
      worker_id = *w;
    } else if (k == "tail") {
      auto n = ParseId(v);
      if (!n && v != "0") return InvalidArgument("query parameter 'tail' must be a number of lines");
      tail = v;
    } else if (k == "follow") {
      follow = v == "true" || v == "1";
    } else {
      return InvalidArgument(fmt::format("unknown query parameter '{}' (tail, follow, worker_id)", k));
    }
  }
  if (worker_id == 0) {
    return InvalidArgument(fmt::format("instance {} is not placed on a worker yet ({})", id,
                                       instance->data.value("state", "")));
  }
  bool placed = instance->data.value("worker_id", int64_t{0}) == worker_id;
  for (const json& s : instance->data["distributed_servers"].value("subordinate_workers", json::array())) {
    placed |= s.value("worker_id", int64_t{0}) == worker_id;
  }
  if (!placed) return NotFound(fmt::format("instance {} does not run on worker {}", id, worker_id));
  auto worker = store_.Get(Table::kWorkers, worker_id);
  if (!worker.ok()) return worker.status();
  http::ClientRequest up;
  up.url = fmt::format("http://{}:{}/instances/{}/logs?run={}{}{}", worker->data.value("ip", ""),
                       worker->data.value("port", 0), instance->name,
                       instance->data.value("restart_count", int64_t{0}),
                       tail.empty() ? "" : "&tail=" + tail, follow ? "&follow=true" : "");
  up.headers = {{"Authorization", "Bearer " + worker->data.value("log_secret", "")}};
  up.connect_timeout_s = 3;
  up.idle_timeout_s = follow ? 24 * 3600 : 30;
  // The agent may take its time (follow): relay on a thread of its own.
  std::thread([up, sink, where = worker->name]() {
    auto call = std::make_shared<http::HttpCall>(up);
    sink->SetOnDisconnect([call] { call->Cancel(); });
    bool started = false;
    std::string body;
    int status = 0;
    Status result = call->Run(
        [&](int code, const http::HeaderList&) {
          status = code;
          if (code == 200) {
            sink->StartStream("text/plain; charset=utf-8");
            started = true;
          }
          return true;
        },
        [&](std::string_view bytes) {
          if (started) {
            sink->SendStreamData(std::string(bytes));
          } else {
            body.append(bytes);
          }
          return true;
        });
    if (started) {
      sink->EndStream();
    } else if (!result.ok()) {
      SendError(*sink, Unavailable(fmt::format("cannot reach worker '{}' for the logs: {}", where,
                                               result.message())));
    } else {
      json parsed = json::parse(body, nullptr, false);
      SendError(*sink, Status(status == 404 ? StatusCode::kNotFound : StatusCode::kUnavailable,
                              parsed.is_object() ? parsed.value("message", body) : body));
    }
  }).detach();
  return Status::Ok();
}

Result<json> RestApi::CreateApiKey(const json& body, const Principal& who) {
  auto request = ValidateApiKeyRequest(body);
  if (!request.ok()) return request.status();
  json& k = *request;
  auto keys = store_.List(Table::kApiKeys);
  if (!keys.ok()) return keys.status();
  for (const Record& r : *keys) {
    if (r.data.value("user_id", int64_t{0}) == who.user_id && r.data.value("name", "") == k["name"] &&
        r.data.value("worker_id", int64_t{0}) == 0) {
      return Conflict(fmt::format("you already have an API key named '{}'",
                                  k["name"].get<std::string>()));
    }
  }
  const ApiKeyParts key = NewApiKey();
  const std::string salt = RandomHex(16);
  const int64_t expires_in = k["expires_in"];
  k["salt"] = salt;
  k["hashed_secret"] = HashSecret(salt, key.secret);
  k["user_id"] = who.user_id;
  k["worker_id"] = 0;
  k["access_key"] = key.access;
  k["expires_at_unix"] = expires_in > 0 ? NowUnix() + expires_in : 0;
  k["expires_at"] = nullptr;
  if (expires_in > 0) {
    const std::time_t at = NowUnix() + expires_in;
    std::tm utc{};
    gmtime_r(&at, &utc);
    k["expires_at"] = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900,
                                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
  }
  auto record = store_.Create(Table::kApiKeys, key.access, std::move(k));
  if (!record.ok()) return record.status();
  json out = PublicView(Table::kApiKeys, *record);
  out["value"] = ApiKeyValue(key);  // shown once
  return out;
}

Result<json> RestApi::CreateUser(const json& body) {
  auto user = ValidateUserRequest(body, /*create=*/true);
  if (!user.ok()) return user.status();
  json data = {{"username", (*user)["username"]},
               {"full_name", (*user)["full_name"]},
               {"is_admin", (*user)["is_admin"]},
               {"password_hash", HashPassword((*user)["password"].get<std::string>())}};
  auto record = store_.Create(Table::kUsers, (*user)["username"], std::move(data));
  if (!record.ok()) return record.status();
  return PublicView(Table::kUsers, *record);
}

Result<json> RestApi::UpdateUser(int64_t id, const json& body) {
  auto current = store_.Get(Table::kUsers, id);
  if (!current.ok()) return current.status();
  auto user = ValidateUserRequest(body, /*create=*/false);
  if (!user.ok()) return user.status();
  json data = current->data;
  data["username"] = (*user)["username"];
  data["full_name"] = (*user)["full_name"];
  data["is_admin"] = (*user)["is_admin"];
  if (!(*user)["password"].get<std::string>().empty()) {
    data["password_hash"] = HashPassword((*user)["password"].get<std::string>());
  }
  auto record = store_.Update(Table::kUsers, id, (*user)["username"], std::move(data));
  if (!record.ok()) return record.status();
  return PublicView(Table::kUsers, *record);
}

Result<json> RestApi::ListUsage(const http::HttpRequest& request, const Principal& who) {
  auto query = ParseListQuery(request.query);
  if (!query.ok()) return query.status();
  auto usage = store_.ListUsage();
  if (!usage.ok()) return usage.status();
  std::set<int64_t> own_keys;
  if (!who.is_admin) {
    auto keys = store_.List(Table::kApiKeys);
    if (!keys.ok()) return keys.status();
    for (const Record& k : *keys) {
      if (k.data.value("user_id", int64_t{0}) == who.user_id) own_keys.insert(k.id);
    }
  }
  std::vector<json> items;
  for (const store::UsageRow& u : *usage) {
    if (!who.is_admin && !own_keys.count(u.api_key_id)) continue;
    items.push_back({{"id", static_cast<int64_t>(items.size()) + 1},
                     {"api_key_id", u.api_key_id},
                     {"model_name", u.model_name},
                     {"date", u.date},
                     {"prompt_tokens", u.prompt_tokens},
                     {"completion_tokens", u.completion_tokens},
                     {"total_tokens", u.prompt_tokens + u.completion_tokens},
                     {"request_count", u.request_count}});
  }
  return ApplyListQuery(*query, std::move(items), "model_name");
}

void RestApi::Handle(const http::HttpRequest& request, const Principal& who,
                     const std::shared_ptr<http::ResponseSink>& sink) {
  const Segments seg = PathSegments(request.path);  // seg[0] == "v2"
  const std::string& method = request.method;
  const auto reply = [&](const Result<json>& result, int ok_status = 200) {
    if (result.ok()) {
      SendJson(*sink, result.value(), ok_status);
    } else {
      SendError(*sink, result.status());
    }
  };
  const auto body = [&]() { return ParseJsonBody(request.body); };
  const auto method_not_allowed = [&] {
    SendError(*sink, Status(StatusCode::kMethodNotAllowed,
                            fmt::format("{} is not allowed on {}", method, request.path)));
  };
  if (seg.size() < 2) {
    SendError(*sink, NotFound(fmt::format("no route {}", request.path)));
    return;
  }
  const std::string& name = seg[1];

  // Registration: the registration token (or an admin) creates a worker.
  if (who.kind == Principal::Kind::kRegistration) {
    if (name == "workers" && seg.size() == 2 && method == "POST") {
      auto parsed = body();
      reply(parsed.ok() ? RegisterWorker(*parsed, who) : Result<json>(parsed.status()), 201);
    } else {
      SendError(*sink, Forbidden("the registration token only registers workers"));
    }
    return;
  }
  const bool worker = who.kind == Principal::Kind::kWorker;
  if (!worker && !who.HasScope("management")) {
    SendError(*sink, Forbidden("this API key's scope does not include management"));
    return;
  }
  if (name == "usage") {
    if (worker) return SendError(*sink, Forbidden("workers do not read usage"));
    if (method != "GET" || seg.size() != 2) return method_not_allowed();
    reply(ListUsage(request, who));
    return;
  }
  if (name == "users" && seg.size() == 3 && seg[2] == "me" && !worker) {
    if (method != "GET") return method_not_allowed();
    reply(GetOne(Table::kUsers, who.user_id, who));
    return;
  }
  const Resource* resource = FindResource(name);
  if (!resource) {
    SendError(*sink, NotFound(fmt::format("no resource '{}' under /v2", name)));
    return;
  }
  const Table table = resource->table;
  std::optional<int64_t> id;
  if (seg.size() >= 3) {
    id = ParseId(seg[2]);
    if (!id) {
      SendError(*sink, NotFound(fmt::format("'{}' is not an id of {}", seg[2], name)));
      return;
    }
  }
  const std::string sub = seg.size() >= 4 ? seg[3] : "";
  if (seg.size() > 4) {
    SendError(*sink, NotFound(fmt::format("no route {}", request.path)));
    return;
  }

  // What each caller may do. Workers: read what they run, report heartbeats and status.
  if (worker) {
    const bool read = method == "GET" && sub.empty() &&
                      (table == Table::kModelInstances || table == Table::kModels ||
                       table == Table::kInferenceBackends || table == Table::kWorkers ||
                       table == Table::kGpuDevices);
    const bool heartbeat = method == "POST" && table == Table::kWorkers && sub == "heartbeat";
    const bool status = method == "POST" && table == Table::kModelInstances && sub == "status";
    if (!read && !heartbeat && !status) {
      SendError(*sink, Forbidden(fmt::format("a worker key cannot {} {}", method, request.path)));
      return;
    }
  } else if (!who.is_admin) {
    const bool own_keys = table == Table::kApiKeys && sub.empty();
    const bool read_models = table == Table::kModels && method == "GET" && sub.empty();
    if (!own_keys && !read_models) {
      SendError(*sink, Forbidden(fmt::format("{} {} needs an admin", method, request.path)));
      return;
    }
  }

  if (!id) {  // the collection
    if (method == "GET") {
      Status s = ListOrWatch(table, request, who, sink);
      if (!s.ok()) SendError(*sink, s);
      return;
    }
    if (method != "POST") return method_not_allowed();
    auto parsed = body();
    if (!parsed.ok()) return SendError(*sink, parsed.status());
    switch (table) {
      case Table::kModels: return reply(CreateModel(*parsed), 201);
      case Table::kInferenceBackends: return reply(CreateBackend(*parsed), 201);
      case Table::kApiKeys: return reply(CreateApiKey(*parsed, who), 201);
      case Table::kUsers: return reply(CreateUser(*parsed), 201);
      case Table::kWorkers: return reply(RegisterWorker(*parsed, who), 201);
      default: return method_not_allowed();  // devices and instances are made by the manager
    }
  }
  if (!sub.empty()) {
    if (table == Table::kWorkers && sub == "heartbeat" && method == "POST") {
      auto parsed = body();
      return reply(parsed.ok() ? Heartbeat(*id, *parsed, who) : Result<json>(parsed.status()));
    }
    if (table == Table::kModelInstances && sub == "logs" && method == "GET" && !worker) {
      Status s = ProxyLogs(*id, request, sink);
      if (!s.ok()) SendError(*sink, s);
      return;
    }
    if (table == Table::kModelInstances && sub == "status" && method == "POST") {
      auto parsed = body();
      return reply(parsed.ok() ? ReportInstanceStatus(*id, *parsed, who)
                               : Result<json>(parsed.status()));
    }
    SendError(*sink, NotFound(fmt::format("no route {}", request.path)));
    return;
  }
  if (method == "GET") return reply(GetOne(table, *id, who));
  if (method == "DELETE") {
    if (table == Table::kApiKeys) {
      auto key = GetOne(table, *id, who);  // 404 for another user's key
      if (!key.ok()) return SendError(*sink, key.status());
      if (key->value("worker_id", int64_t{0}) != 0) {
        return SendError(*sink, InvalidArgument("a worker's key goes with its worker"));
      }
    }
    if (table == Table::kUsers && *id == who.user_id) {
      return SendError(*sink, InvalidArgument("you cannot delete yourself"));
    }
    if (table == Table::kGpuDevices) return method_not_allowed();
    Status s = DeleteOne(table, *id);
    if (!s.ok()) return SendError(*sink, s);
    sink->SendResponse(204, "application/json", "");
    return;
  }
  if (method == "PUT") {
    auto parsed = body();
    if (!parsed.ok()) return SendError(*sink, parsed.status());
    switch (table) {
      case Table::kModels: return reply(UpdateModel(*id, *parsed));
      case Table::kInferenceBackends: return reply(UpdateBackend(*id, *parsed));
      case Table::kWorkers: return reply(UpdateWorker(*id, *parsed));
      case Table::kUsers: return reply(UpdateUser(*id, *parsed));
      default: return method_not_allowed();
    }
  }
  method_not_allowed();
}

}  // namespace tandem::cluster::manager
