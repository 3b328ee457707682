#include "cluster/manager/rest_api.h"

#include <fmt/format.h>

#include <chrono>

#include "cluster/manager/list_query.h"
#include "cluster/manager/rest_util.h"
#include "cluster/manager/watch_stream.h"

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
  if (query->watch && request.method == "HEAD") {
    // The watch's headers, no body (RFC 9110 §9.3.2), and no subscription: one would outlive
    // the answer until the connection closed.
    sink->StartStream("application/json");
    sink->EndStream();
    return Status::Ok();
  }
  if (query->watch) {
    return WatchStream::Start(
        store_, table, std::move(query).value(), resource->search_field,
        [table](const Record& r) { return PublicView(table, r); }, sink, io_context_,
        config_.watch_heartbeat_s, open_streams_);
  }
  auto rows = store_.List(table);
  if (!rows.ok()) return rows.status();
  std::vector<json> items;
  items.reserve(rows->size());
  for (const Record& r : *rows) items.push_back(PublicView(table, r));
  SendJson(*sink, ApplyListQuery(*query, std::move(items), resource->search_field));
  return Status::Ok();
}

Result<int64_t> ExpectedVersion(const json& body) {
  auto it = body.find("resource_version");
  if (it == body.end() || it->is_null()) return int64_t{-1};  // no check (as GPUStack)
  if (!it->is_number_integer() || it->get<int64_t>() < 1) {
    return InvalidArgument(fmt::format(
        "field 'resource_version' must be the positive integer read with the object, not {}",
        Shown(*it)));
  }
  return it->get<int64_t>();
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
        return Conflict(
            fmt::format("backend '{}' is used by deployment '{}'; delete or change "
                        "that first",
                        backend->name, m.name));
      }
    }
  }
  if (table == Table::kUsers) {
    auto user = store_.Get(table, id);
    if (!user.ok()) return user.status();
    if (user->data.value("is_admin", false))
      TANDEM_RETURN_IF_ERROR(CheckNotLastAdmin(id, "deleted"));
    auto keys = store_.List(Table::kApiKeys);  // the user's keys go with them
    if (!keys.ok()) return keys.status();
    for (const Record& k : *keys) {
      if (k.data.value("user_id", int64_t{0}) == id && k.data.value("worker_id", int64_t{0}) == 0) {
        (void)store_.Delete(Table::kApiKeys, k.id);
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

Status RestApi::Authorize(const std::string& request_method, const std::string& path,
                          const Principal& who) {
  const Segments seg = PathSegments(path);  // seg[0] == "v2"
  const std::string method = request_method == "HEAD" ? "GET" : request_method;
  if (seg.size() < 2) {
    return Status::Ok();  // no route: Handle's 404
  }
  const std::string& name = seg[1];
  // Registration: the registration token creates a worker, nothing else.
  if (who.kind == Principal::Kind::kRegistration) {
    if (name == "workers" && seg.size() == 2 && method == "POST") {
      return Status::Ok();
    }
    return Forbidden("the registration token only registers workers");
  }
  const bool worker = who.kind == Principal::Kind::kWorker;
  if (!worker && !who.HasScope("management")) {
    return Forbidden("this API key's scope does not include management");
  }
  if (name == "usage") {
    return worker ? Forbidden("workers do not read usage") : Status::Ok();
  }
  if (name == "users" && seg.size() == 3 && seg[2] == "me") {
    return worker ? Forbidden("a worker key belongs to no user") : Status::Ok();
  }
  const Resource* resource = FindResource(name);
  if (!resource || (seg.size() >= 3 && !ParseId(seg[2])) || seg.size() > 4) {
    return Status::Ok();  // Handle's 404
  }
  const Table table = resource->table;
  const std::string sub = seg.size() >= 4 ? seg[3] : "";
  // What each caller may do. Workers: read what they run, report heartbeats and status.
  if (worker) {
    const bool read = method == "GET" && sub.empty() &&
                      (table == Table::kModelInstances || table == Table::kModels ||
                       table == Table::kInferenceBackends || table == Table::kWorkers ||
                       table == Table::kGpuDevices);
    const bool heartbeat = method == "POST" && table == Table::kWorkers && sub == "heartbeat";
    const bool status = method == "POST" && table == Table::kModelInstances && sub == "status";
    if (!read && !heartbeat && !status) {
      return Forbidden(fmt::format("a worker key cannot {} {}", method, path));
    }
  } else if (!who.is_admin) {
    const bool own_keys = table == Table::kApiKeys && sub.empty();
    const bool read_models = table == Table::kModels && method == "GET" && sub.empty();
    if (!own_keys && !read_models) {
      return Forbidden(fmt::format("{} {} needs an admin", method, path));
    }
  }
  return Status::Ok();
}

void RestApi::Handle(const http::HttpRequest& request, const Principal& who,
                     const std::shared_ptr<http::ResponseSink>& sink) {
  const Segments seg = PathSegments(request.path);  // seg[0] == "v2"
  // HEAD reads as GET; the session sends the GET's headers without its body.
  const std::string method = request.method == "HEAD" ? "GET" : request.method;
  const auto reply = [&](const Result<json>& result, int ok_status = 200) {
    if (result.ok()) {
      SendJson(*sink, result.value(), ok_status);
    } else {
      SendError(*sink, result.status());
    }
  };
  const auto body = [&]() { return ParseJsonBody(request.body); };
  const auto method_not_allowed = [&](std::string_view allow) {
    SendMethodNotAllowed(*sink, request.method, request.path, allow);
  };
  if (seg.size() < 2) {
    SendError(*sink, NotFound(fmt::format("no route {}", request.path)));
    return;
  }
  const std::string& name = seg[1];

  if (Status allowed = Authorize(method, request.path, who); !allowed.ok()) {
    SendError(*sink, allowed);
    return;
  }
  const bool worker = who.kind == Principal::Kind::kWorker;
  // Registration: the registration token (Authorize let it through) creates a worker.
  if (who.kind == Principal::Kind::kRegistration) {
    auto parsed = body();
    reply(parsed.ok() ? RegisterWorker(*parsed, who) : Result<json>(parsed.status()), 201);
    return;
  }
  if (name == "usage") {
    if (method != "GET" || seg.size() != 2) {
      return method_not_allowed("GET, HEAD");
    }
    reply(ListUsage(request, who));
    return;
  }
  if (name == "users" && seg.size() == 3 && seg[2] == "me") {
    if (method != "GET") {
      return method_not_allowed("GET, HEAD");
    }
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

  // What the collection and one item take, for a 405's Allow: devices and instances are made
  // by the manager (no POST), devices go with their worker (no DELETE), keys are not edited.
  const bool creatable = table != Table::kGpuDevices && table != Table::kModelInstances;
  const bool updatable = table == Table::kModels || table == Table::kInferenceBackends ||
                         table == Table::kWorkers || table == Table::kUsers;
  const std::string item_allow = std::string("GET, HEAD") +
                                 (table != Table::kGpuDevices ? ", DELETE" : "") +
                                 (updatable ? ", PUT" : "");
  const char* collection_allow = creatable ? "GET, HEAD, POST" : "GET, HEAD";
  if (!id) {  // the collection
    if (method == "GET") {
      Status s = ListOrWatch(table, request, who, sink);
      if (!s.ok()) SendError(*sink, s);
      return;
    }
    if (method != "POST") {
      return method_not_allowed(collection_allow);
    }
    auto parsed = body();
    if (!parsed.ok()) return SendError(*sink, parsed.status());
    switch (table) {
      case Table::kModels:
        return reply(CreateModel(*parsed), 201);
      case Table::kInferenceBackends:
        return reply(CreateBackend(*parsed), 201);
      case Table::kApiKeys:
        return reply(CreateApiKey(*parsed, who), 201);
      case Table::kUsers:
        return reply(CreateUser(*parsed), 201);
      case Table::kWorkers:
        return reply(RegisterWorker(*parsed, who), 201);
      default:
        return method_not_allowed(collection_allow);
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
    if (table == Table::kGpuDevices) {
      return method_not_allowed(item_allow);
    }
    Status s = DeleteOne(table, *id);
    if (!s.ok()) return SendError(*sink, s);
    sink->SendResponse(204, "application/json", "");
    return;
  }
  if (method == "PUT") {
    auto parsed = body();
    if (!parsed.ok()) return SendError(*sink, parsed.status());
    switch (table) {
      case Table::kModels:
        return reply(UpdateModel(*id, *parsed));
      case Table::kInferenceBackends:
        return reply(UpdateBackend(*id, *parsed));
      case Table::kWorkers:
        return reply(UpdateWorker(*id, *parsed));
      case Table::kUsers:
        return reply(UpdateUser(*id, *parsed));
      default:
        return method_not_allowed(item_allow);
    }
  }
  method_not_allowed(item_allow);
}

}  // namespace tandem::cluster::manager
