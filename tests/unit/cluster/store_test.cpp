// The manager's store: one suite, run on SQLite and on a real PostgreSQL server started by the
// test (skipped, saying why, only when Debian's postgresql package is missing).
#include "cluster/store/store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "cluster/manager/list_query.h"
#include "cluster/store/migrations.h"
#include "cluster/store/postgres_database.h"
#include "postgres_server.h"

namespace tandem::cluster::store {
namespace {

using nlohmann::json;

testing::PostgresServer& Postgres() {
  static testing::PostgresServer server;
  return server;
}

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgres") {
      if (!Postgres().Available()) GTEST_SKIP() << Postgres().error();
      url_ = Postgres().CreateDatabase();
    } else {
      char tmpl[] = "/tmp/tandem-store-XXXXXX";
      ASSERT_NE(mkdtemp(tmpl), nullptr);
      dir_ = tmpl;
      url_ = "sqlite://" + dir_ + "/manager.db";
    }
    auto store = Store::Open(url_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string url_;
  std::string dir_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreTest, MigrationsRunFromAnEmptyDatabaseOnceAndRefuseANewerSchema) {
  EXPECT_EQ(store_->schema_version(), LatestSchemaVersion());
  store_.reset();
  auto again = Store::Open(url_);  // nothing left to apply
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->schema_version(), LatestSchemaVersion());
  again->reset();

  auto db = OpenSqlDatabase(url_);
  ASSERT_TRUE(db.ok());
  auto rows = (*db)->Query("SELECT COUNT(*) FROM schema_migrations");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->at(0).Int(0), LatestSchemaVersion());
  ASSERT_TRUE((*db)
                  ->Query("INSERT INTO schema_migrations (version, applied_at) VALUES (?, 'x')",
                          {int64_t{LatestSchemaVersion() + 7}})
                  .ok());
  db->reset();
  auto newer = Store::Open(url_);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(newer.status().message().find(
                "schema is version " + std::to_string(LatestSchemaVersion() + 7) +
                ", newer than this tandem's " + std::to_string(LatestSchemaVersion())),
            std::string::npos)
      << newer.status().message();
}

TEST_P(StoreTest, CreateGetFindListAndUniqueNames) {
  auto a = store_->Create(Table::kModels, "qwen-a", {{"name", "qwen-a"}, {"replicas", 0}});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = store_->Create(Table::kModels, "qwen-b", {{"name", "qwen-b"}, {"replicas", 2}});
  ASSERT_TRUE(b.ok());
  EXPECT_GT(b->id, a->id);
  EXPECT_EQ(a->resource_version, 1);
  EXPECT_EQ(a->created_at.size(), 24u) << a->created_at;  // 2026-12-01T22:50:00.123Z

  auto got = store_->Get(Table::kModels, b->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->data["replicas"], 2);
  EXPECT_EQ(got->ToJson()["id"], b->id);
  EXPECT_EQ(got->ToJson()["resource_version"], 1);

  auto found = store_->FindByName(Table::kModels, "qwen-a");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->id, a->id);
  auto absent = store_->FindByName(Table::kModels, "nope");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());

  auto duplicate = store_->Create(Table::kModels, "qwen-a", json::object());
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.status().code(), StatusCode::kConflict);
  EXPECT_EQ(duplicate.status().message(), "models 'qwen-a' already exists");
  // The same name in another table is fine.
  EXPECT_TRUE(store_->Create(Table::kWorkers, "qwen-a", json::object()).ok());

  auto list = store_->List(Table::kModels);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "qwen-a");
  EXPECT_EQ((*list)[1].name, "qwen-b");

  auto missing = store_->Get(Table::kModels, 999);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "models 999 does not exist");
}

TEST_P(StoreTest, UpdateChecksTheResourceVersionAndAStaleOneChangesNothing) {
  auto a = store_->Create(Table::kModels, "m", {{"replicas", 0}});
  ASSERT_TRUE(a.ok());
  auto updated = store_->Update(Table::kModels, a->id, "m", {{"replicas", 1}}, 1);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->resource_version, 2);

  auto stale = store_->Update(Table::kModels, a->id, "m", {{"replicas", 5}}, 1);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), StatusCode::kConflict);
  EXPECT_NE(stale.status().message().find("resource_version 1 given, 2 stored"), std::string::npos);
  auto now = store_->Get(Table::kModels, a->id);
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->data["replicas"], 1);
  EXPECT_EQ(now->resource_version, 2);

  // Unconditional, a rename, and a rename onto a taken name.
  ASSERT_TRUE(store_->Update(Table::kModels, a->id, "m2", {{"replicas", 3}}).ok());
  ASSERT_TRUE(store_->Create(Table::kModels, "other", json::object()).ok());
  auto taken = store_->Update(Table::kModels, a->id, "other", {{"replicas", 3}});
  EXPECT_EQ(taken.status().code(), StatusCode::kConflict);
  EXPECT_EQ(store_->Update(Table::kModels, 999, "x", json::object()).status().code(),
            StatusCode::kNotFound);

  auto modified = store_->Modify(Table::kModels, a->id, [](json& data) {
    data["replicas"] = data["replicas"].get<int>() + 1;
    return Status::Ok();
  });
  ASSERT_TRUE(modified.ok());
  EXPECT_EQ(modified->data["replicas"], 4);
  EXPECT_EQ(modified->resource_version, 4);
  auto refused = store_->Modify(Table::kModels, a->id, [](json&) { return InvalidArgument("no"); });
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, DeleteRemovesTheRowAndIdsAreNeverReused) {
  auto a = store_->Create(Table::kModelInstances, "i-1", json::object());
  auto b = store_->Create(Table::kModelInstances, "i-2", json::object());
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(store_->Delete(Table::kModelInstances, b->id).ok());
  EXPECT_EQ(store_->Get(Table::kModelInstances, b->id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Delete(Table::kModelInstances, b->id).code(), StatusCode::kNotFound);
  auto c = store_->Create(Table::kModelInstances, "i-3", json::object());
  ASSERT_TRUE(c.ok());
  EXPECT_GT(c->id, b->id);  // a watcher never confuses a new row with a deleted one
}

TEST_P(StoreTest, WatchReplaysThenFeedsEveryCommittedChangeInOrder) {
  ASSERT_TRUE(store_->Create(Table::kWorkers, "w1", {{"state", "ready"}}).ok());
  ASSERT_TRUE(store_->Create(Table::kModels, "not-watched", json::object()).ok());
  std::vector<WatchEvent> events;
  auto handle = store_->Subscribe(
      Table::kWorkers, [&](const WatchEvent& e) { events.push_back(e); }, true);
  ASSERT_TRUE(handle.ok());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, WatchEvent::kCreated);
  EXPECT_EQ(events[0].record.name, "w1");

  auto w2 = store_->Create(Table::kWorkers, "w2", {{"state", "not_ready"}, {"ip", "10.0.0.2"}});
  ASSERT_TRUE(w2.ok());
  ASSERT_TRUE(
      store_->Update(Table::kWorkers, w2->id, "w2", {{"state", "ready"}, {"ip", "10.0.0.2"}}).ok());
  // A failed write publishes nothing.
  EXPECT_FALSE(store_->Update(Table::kWorkers, w2->id, "w2", json::object(), 1).ok());
  ASSERT_TRUE(store_->Create(Table::kModels, "still-not-watched", json::object()).ok());
  ASSERT_TRUE(store_->Delete(Table::kWorkers, w2->id).ok());

  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[1].type, WatchEvent::kCreated);
  EXPECT_EQ(events[1].record.id, w2->id);
  EXPECT_EQ(events[2].type, WatchEvent::kUpdated);
  EXPECT_EQ(events[2].record.resource_version, 2);
  EXPECT_EQ(events[2].changed_fields, json({{"state", {{"old", "not_ready"}, {"new", "ready"}}}}));
  EXPECT_EQ(events[3].type, WatchEvent::kDeleted);
  EXPECT_EQ(events[3].record.id, w2->id);

  store_->Unsubscribe(*handle);
  ASSERT_TRUE(store_->Create(Table::kWorkers, "w3", json::object()).ok());
  EXPECT_EQ(events.size(), 4u);
}

TEST_P(StoreTest, UsageAddsUpPerKeyModelAndDay) {
  ASSERT_TRUE(store_->AddUsage({7, "qwen", "2026-12-01", 10, 5, 1}).ok());
  ASSERT_TRUE(store_->AddUsage({7, "qwen", "2026-12-01", 3, 2, 1}).ok());
  ASSERT_TRUE(store_->AddUsage({8, "qwen", "2026-12-01", 1, 1, 1}).ok());
  auto usage = store_->ListUsage();
  ASSERT_TRUE(usage.ok()) << usage.status().ToString();
  ASSERT_EQ(usage->size(), 2u);
  EXPECT_EQ((*usage)[0].api_key_id, 7);
  EXPECT_EQ((*usage)[0].prompt_tokens, 13);
  EXPECT_EQ((*usage)[0].completion_tokens, 7);
  EXPECT_EQ((*usage)[0].request_count, 2);
  EXPECT_EQ((*usage)[1].api_key_id, 8);
}

TEST_P(StoreTest, SettingsRoundTrip) {
  EXPECT_EQ(store_->GetSetting("token_hash").value(), "");
  ASSERT_TRUE(store_->SetSetting("token_hash", "abc").ok());
  ASSERT_TRUE(store_->SetSetting("token_hash", "def").ok());
  EXPECT_EQ(store_->GetSetting("token_hash").value(), "def");
}

TEST_P(StoreTest, ListQueryFiltersSortsAndPagesStoredRows) {
  for (int i = 0; i < 5; ++i) {
    const std::string name = "model-" + std::to_string(i);
    ASSERT_TRUE(store_
                    ->Create(Table::kModels, name,
                             {{"name", name}, {"replicas", i % 2}, {"backend", "tandem"}})
                    .ok());
  }
  auto rows = store_->List(Table::kModels);
  ASSERT_TRUE(rows.ok());
  std::vector<json> items;
  for (const Record& r : *rows) items.push_back(r.ToJson());

  auto query = manager::ParseListQuery("replicas=1&sort_by=-name&perPage=1&page=2");
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  json page = manager::ApplyListQuery(*query, items, "name");
  ASSERT_EQ(page["items"].size(), 1u);
  EXPECT_EQ(page["items"][0]["name"], "model-1");  // model-3, then model-1
  EXPECT_EQ(page["pagination"],
            json({{"page", 2}, {"perPage", 1}, {"total", 2}, {"totalPage", 2}}));

  auto all = manager::ParseListQuery("page=-1&search=MODEL-4");
  ASSERT_TRUE(all.ok());
  page = manager::ApplyListQuery(*all, items, "name");
  ASSERT_EQ(page["items"].size(), 1u);
  EXPECT_EQ(page["items"][0]["name"], "model-4");
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

TEST(ListQueryTest, BadParametersAreRefusedByName) {
  for (const char* bad : {"page=0", "page=x", "perPage=0", "perPage=1001", "sort_by=a,,b",
                          "name=%zz", "watch=maybe", "page=-2"}) {
    auto query = manager::ParseListQuery(bad);
    EXPECT_FALSE(query.ok()) << bad;
    EXPECT_EQ(query.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  auto query = manager::ParseListQuery("name=a%20b+c&watch=true");
  ASSERT_TRUE(query.ok());
  EXPECT_TRUE(query->watch);
  ASSERT_EQ(query->filters.size(), 1u);
  EXPECT_EQ(query->filters[0].second, "a b c");
}

TEST(PostgresPlaceholdersTest, QuestionMarksOutsideQuotesAreNumbered) {
  EXPECT_EQ(NumberPlaceholders("SELECT a FROM t WHERE b = ? AND c = '?' AND d = ?"),
            "SELECT a FROM t WHERE b = $1 AND c = '?' AND d = $2");
}

TEST(DatabaseUrlTest, PasswordsAreHiddenAndUnknownSchemesRefused) {
  EXPECT_EQ(RedactDatabaseUrl("postgresql://user:secret@db:5432/tandem"),
            "postgresql://user:***@db:5432/tandem");
  EXPECT_EQ(RedactDatabaseUrl("postgresql://user@db/tandem"), "postgresql://user@db/tandem");
  auto db = OpenSqlDatabase("mysql://u:p@h/db");
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db.status().message().find("p@h"), std::string::npos);
  auto unreachable = OpenSqlDatabase("postgresql://u:hunter2@127.0.0.1:1/db?connect_timeout=2");
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(unreachable.status().message().find("hunter2"), std::string::npos)
      << unreachable.status().message();
}

}  // namespace
}  // namespace tandem::cluster::store
