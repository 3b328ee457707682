#include "cluster/store/store.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

#include "cluster/store/migrations.h"

namespace tandem::cluster::store {

using nlohmann::json;

namespace {

constexpr const char* kColumns = "id, name, created_at, updated_at, resource_version, data";

Result<Record> RecordFromRow(Table table, const SqlRow& row) {
  Record r;
  r.id = row.Int(0);
  r.name = row.Text(1);
  r.created_at = row.Text(2);
  r.updated_at = row.Text(3);
  r.resource_version = row.Int(4);
  r.data = json::parse(row.Text(5), nullptr, /*allow_exceptions=*/false);
  if (!r.data.is_object()) {
    return DataLoss(
        fmt::format("{} row {} holds data that is not a JSON object", TableName(table), r.id));
  }
  return r;
}

json ChangedFields(const json& before, const json& after) {
  json changed = json::object();
  for (const auto& [key, value] : after.items()) {
    auto old = before.find(key);
    if (old == before.end() || *old != value) {
      changed[key] = {{"old", old == before.end() ? json(nullptr) : *old}, {"new", value}};
    }
  }
  for (const auto& [key, value] : before.items()) {
    if (!after.contains(key)) changed[key] = {{"old", value}, {"new", nullptr}};
  }
  return changed;
}

}  // namespace

const char* TableName(Table table) {
  switch (table) {
    case Table::kWorkers:
      return "workers";
    case Table::kGpuDevices:
      return "gpu_devices";
    case Table::kInferenceBackends:
      return "inference_backends";
    case Table::kModels:
      return "models";
    case Table::kModelInstances:
      return "model_instances";
    case Table::kApiKeys:
      return "api_keys";
    case Table::kUsers:
      return "users";
  }
  return "?";
}

std::string NowIso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
}

json Record::ToJson() const {
  json out = data;
  out["id"] = id;
  out["created_at"] = created_at;
  out["updated_at"] = updated_at;
  out["resource_version"] = resource_version;
  return out;
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& url) {
  auto db = OpenSqlDatabase(url);
  if (!db.ok()) return db.status();
  auto version = Migrate(**db);
  if (!version.ok()) return version.status();
  std::unique_ptr<Store> store(new Store(std::move(db).value()));
  store->schema_version_ = *version;
  return store;
}

SqlDialect Store::dialect() const { return db_->dialect(); }

Result<Record> Store::Create(Table table, const std::string& name, json data) {
  std::lock_guard lock(mutex_);
  const std::string now = NowIso8601();
  auto rows = db_->Query(fmt::format("INSERT INTO {} (name, created_at, updated_at, "
                                     "resource_version, data) VALUES (?, ?, ?, 1, ?) "
                                     "RETURNING id",
                                     TableName(table)),
                         {name, now, now, data.dump()});
  if (!rows.ok()) {
    if (rows.status().code() == StatusCode::kConflict) {
      return Conflict(fmt::format("{} '{}' already exists", TableName(table), name));
    }
    return rows.status();
  }
  Record r;
  r.id = rows->at(0).Int(0);
  r.name = name;
  r.created_at = r.updated_at = now;
  r.resource_version = 1;
  r.data = std::move(data);
  Publish({WatchEvent::kCreated, table, r, json::object()});
  return r;
}

Result<Record> Store::GetLocked(Table table, int64_t id) {
  auto rows =
      db_->Query(fmt::format("SELECT {} FROM {} WHERE id = ?", kColumns, TableName(table)), {id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return NotFound(fmt::format("{} {} does not exist", TableName(table), id));
  return RecordFromRow(table, rows->front());
}

Result<Record> Store::Get(Table table, int64_t id) {
  std::lock_guard lock(mutex_);
  return GetLocked(table, id);
}

Result<std::optional<Record>> Store::FindByName(Table table, const std::string& name) {
  std::lock_guard lock(mutex_);
  auto rows = db_->Query(
      fmt::format("SELECT {} FROM {} WHERE name = ?", kColumns, TableName(table)), {name});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<Record>();
  auto record = RecordFromRow(table, rows->front());
  if (!record.ok()) return record.status();
  return std::optional<Record>(std::move(record).value());
}

Result<std::vector<Record>> Store::ListLocked(Table table) {
  auto rows = db_->Query(fmt::format("SELECT {} FROM {} ORDER BY id", kColumns, TableName(table)));
  if (!rows.ok()) return rows.status();
  std::vector<Record> out;
  out.reserve(rows->size());
  for (const SqlRow& row : *rows) {
    auto record = RecordFromRow(table, row);
    if (!record.ok()) return record.status();
    out.push_back(std::move(record).value());
  }
  return out;
}

Result<std::vector<Record>> Store::List(Table table) {
  std::lock_guard lock(mutex_);
  return ListLocked(table);
}

Result<Record> Store::UpdateLocked(Table table, const Record& before, const std::string& name,
                                   json data, int64_t expected_version) {
  if (expected_version >= 0 && expected_version != before.resource_version) {
    return Conflict(fmt::format(
        "{} {} was modified since it was read (resource_version {} given, {} stored): read it "
        "again and retry",
        TableName(table), before.id, expected_version, before.resource_version));
  }
  const std::string now = NowIso8601();
  auto rows = db_->Query(fmt::format("UPDATE {} SET name = ?, updated_at = ?, data = ?, "
                                     "resource_version = resource_version + 1 "
                                     "WHERE id = ? AND resource_version = ?",
                                     TableName(table)),
                         {name, now, data.dump(), before.id, before.resource_version});
  if (!rows.ok()) {
    if (rows.status().code() == StatusCode::kConflict) {
      return Conflict(fmt::format("{} '{}' already exists", TableName(table), name));
    }
    return rows.status();
  }
  if (db_->changed_rows() == 0) {  // another process wrote in between
    return Conflict(fmt::format("{} {} was modified concurrently: read it again and retry",
                                TableName(table), before.id));
  }
  Record after = before;
  after.name = name;
  after.updated_at = now;
  after.resource_version = before.resource_version + 1;
  after.data = std::move(data);
  Publish({WatchEvent::kUpdated, table, after, ChangedFields(before.data, after.data)});
  return after;
}

Result<Record> Store::Update(Table table, int64_t id, const std::string& name, json data,
                             int64_t expected_version) {
  std::lock_guard lock(mutex_);
  auto before = GetLocked(table, id);
  if (!before.ok()) return before.status();
  return UpdateLocked(table, *before, name, std::move(data), expected_version);
}

Result<Record> Store::Modify(Table table, int64_t id, const std::function<Status(json&)>& mutate) {
  std::lock_guard lock(mutex_);
  auto before = GetLocked(table, id);
  if (!before.ok()) return before.status();
  json data = before->data;
  TANDEM_RETURN_IF_ERROR(mutate(data));
  if (data == before->data) return before;
  return UpdateLocked(table, *before, before->name, std::move(data), -1);
}

Status Store::Delete(Table table, int64_t id) {
  std::lock_guard lock(mutex_);
  auto before = GetLocked(table, id);
  if (!before.ok()) return before.status();
  auto rows = db_->Query(fmt::format("DELETE FROM {} WHERE id = ?", TableName(table)), {id});
  if (!rows.ok()) return rows.status();
  if (db_->changed_rows() == 0) {
    return NotFound(fmt::format("{} {} does not exist", TableName(table), id));
  }
  Publish({WatchEvent::kDeleted, table, std::move(before).value(), json::object()});
  return Status::Ok();
}

Status Store::AddUsage(const UsageRow& delta) {
  std::lock_guard lock(mutex_);
  return db_
      ->Query(
          "INSERT INTO usage (api_key_id, model_name, date, prompt_tokens, "
          "completion_tokens, request_count) VALUES (?, ?, ?, ?, ?, ?) "
          "ON CONFLICT (api_key_id, model_name, date) DO UPDATE SET "
          "prompt_tokens = usage.prompt_tokens + excluded.prompt_tokens, "
          "completion_tokens = usage.completion_tokens + excluded.completion_tokens, "
          "request_count = usage.request_count + excluded.request_count",
          {delta.api_key_id, delta.model_name, delta.date, delta.prompt_tokens,
           delta.completion_tokens, delta.request_count})
      .status();
}

Result<std::vector<UsageRow>> Store::ListUsage() {
  std::lock_guard lock(mutex_);
  auto rows = db_->Query(
      "SELECT api_key_id, model_name, date, prompt_tokens, completion_tokens, request_count "
      "FROM usage ORDER BY date, model_name, api_key_id");
  if (!rows.ok()) return rows.status();
  std::vector<UsageRow> out;
  for (const SqlRow& row : *rows) {
    out.push_back({row.Int(0), row.Text(1), row.Text(2), row.Int(3), row.Int(4), row.Int(5)});
  }
  return out;
}

Result<std::string> Store::GetSetting(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto rows = db_->Query("SELECT value FROM settings WHERE key = ?", {key});
  if (!rows.ok()) return rows.status();
  return rows->empty() ? std::string() : rows->front().Text(0);
}

Status Store::SetSetting(const std::string& key, const std::string& value) {
  std::lock_guard lock(mutex_);
  return db_
      ->Query(
          "INSERT INTO settings (key, value) VALUES (?, ?) "
          "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
          {key, value})
      .status();
}

Result<int64_t> Store::Subscribe(Table table, Subscriber subscriber, bool replay) {
  std::lock_guard lock(mutex_);
  if (replay) {
    auto rows = ListLocked(table);
    if (!rows.ok()) return rows.status();
    for (Record& r : *rows) subscriber({WatchEvent::kCreated, table, std::move(r), json::object()});
  }
  const int64_t handle = next_handle_++;
  subscribers_.emplace(handle, Subscription{table, std::move(subscriber)});
  return handle;
}

void Store::Unsubscribe(int64_t handle) {
  std::lock_guard lock(mutex_);
  subscribers_.erase(handle);
}

void Store::Publish(WatchEvent event) {
  for (auto& [handle, s] : subscribers_) {
    if (s.table == event.table) s.subscriber(event);
  }
}

}  // namespace tandem::cluster::store
