// Store: the manager's rows (workers, devices, backends, deployments, instances, API keys,
// users, usage, settings) on an SqlDatabase, with optimistic concurrency and a watch feed.
//
// A resource row is (id, name, created_at, updated_at, resource_version, data): `data` is the
// resource's fields as a JSON object, `name` its unique key in the table. Every committed write
// bumps resource_version and is published to the table's subscribers, in commit order, after
// the commit (a rolled-back write is never seen). Tables hold hundreds of rows, so listing
// reads the whole table; the REST layer filters, sorts and pages.
// Thread-safe: one mutex serializes database access (one connection per Store).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cluster/store/sql_database.h"
#include "core/status.h"

namespace tandem::cluster::store {

enum class Table {
  kWorkers,
  kGpuDevices,
  kInferenceBackends,
  kModels,
  kModelInstances,
  kApiKeys,
  kUsers,
};
constexpr int kNumTables = 7;

// The SQL table name ("model_instances").
const char* TableName(Table table);

struct Record {
  int64_t id = 0;
  std::string name;
  std::string created_at;  // ISO 8601 UTC, millisecond precision ("2026-12-01T22:50:00.123Z")
  std::string updated_at;
  int64_t resource_version = 0;  // 1 on create, +1 on every update
  nlohmann::json data = nlohmann::json::object();

  // `data` plus id, created_at, updated_at and resource_version: what the API returns.
  nlohmann::json ToJson() const;
};

// One change, as GPUStack's watch streams carry it.
struct WatchEvent {
  enum Type { kCreated = 1, kUpdated = 2, kDeleted = 3 };
  Type type;
  Table table;
  Record record;  // the row after the change (before it, for kDeleted)
  // For kUpdated: each top-level field that changed, {"field": {"old": .., "new": ..}}.
  nlohmann::json changed_fields = nlohmann::json::object();
};

struct UsageRow {
  int64_t api_key_id = 0;
  std::string model_name;
  std::string date;  // YYYY-MM-DD (UTC)
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t request_count = 0;
};

class Store {
 public:
  // Opens the database at `url` (see OpenSqlDatabase) and applies the schema migrations.
  // Errors: those of OpenSqlDatabase and Migrate.
  static Result<std::unique_ptr<Store>> Open(const std::string& url);

  // Inserts a row. Errors: kConflict when `name` is taken in the table.
  Result<Record> Create(Table table, const std::string& name, nlohmann::json data);

  // Errors: kNotFound naming the table and id.
  Result<Record> Get(Table table, int64_t id);
  // nullopt when no row has that name.
  Result<std::optional<Record>> FindByName(Table table, const std::string& name);
  // Every row, by id.
  Result<std::vector<Record>> List(Table table);

  // Replaces the row's name and data. `expected_version` >= 0 must equal the stored
  // resource_version (else kConflict, "modified since read"); < 0 skips the check.
  // Errors: kNotFound; kConflict (stale version, or `name` taken by another row).
  Result<Record> Update(Table table, int64_t id, const std::string& name, nlohmann::json data,
                        int64_t expected_version = -1);

  // Read-modify-write under the store's lock: `mutate` edits a copy of the row's data (and
  // may return an error to abort). Saves only if the data changed. Errors: kNotFound, or
  // `mutate`'s error.
  Result<Record> Modify(Table table, int64_t id,
                        const std::function<Status(nlohmann::json&)>& mutate);

  // Errors: kNotFound.
  Status Delete(Table table, int64_t id);

  // Adds to the usage of (api_key_id, model_name, date).
  Status AddUsage(const UsageRow& delta);
  Result<std::vector<UsageRow>> ListUsage();

  // A manager setting ("" when unset).
  Result<std::string> GetSetting(const std::string& key);
  Status SetSetting(const std::string& key, const std::string& value);

  int schema_version() const { return schema_version_; }
  SqlDialect dialect() const;

  using Subscriber = std::function<void(const WatchEvent&)>;
  // Calls `subscriber` for every later committed change of `table`, in commit order, and
  // first (when `replay`) once per existing row as kCreated: no change is missed or seen
  // twice between the replay and the feed. Callbacks run with the store's lock held: they must
  // be quick and must not call the Store. Returns a handle for Unsubscribe.
  Result<int64_t> Subscribe(Table table, Subscriber subscriber, bool replay);
  void Unsubscribe(int64_t handle);

 private:
  explicit Store(std::unique_ptr<SqlDatabase> db) : db_(std::move(db)) {}
  Result<Record> GetLocked(Table table, int64_t id);
  Result<std::vector<Record>> ListLocked(Table table);
  Result<Record> UpdateLocked(Table table, const Record& before, const std::string& name,
                              nlohmann::json data, int64_t expected_version);
  void Publish(WatchEvent event);

  std::mutex mutex_;
  std::unique_ptr<SqlDatabase> db_;
  int schema_version_ = 0;
  int64_t next_handle_ = 1;
  struct Subscription {
    Table table;
    Subscriber subscriber;
  };
  std::map<int64_t, Subscription> subscribers_;
};

// Now as ISO 8601 UTC with milliseconds ("2026-12-01T22:50:00.123Z").
std::string NowIso8601();

}  // namespace tandem::cluster::store
