// The SQLite backend of SqlDatabase (Debian's libsqlite3): one connection, WAL journal,
// foreign keys on, a busy timeout so a second process waits instead of failing at once.
#pragma once

#include <memory>
#include <string>

#include "cluster/store/sql_database.h"

struct sqlite3;

namespace tandem::cluster::store {

class SqliteDatabase : public SqlDatabase {
 public:
  // Opens (creating) the database file at `path` (":memory:" for an in-memory one).
  // Errors: kUnavailable naming the path.
  static Result<std::unique_ptr<SqlDatabase>> Open(const std::string& path);
  ~SqliteDatabase() override;

  SqlDialect dialect() const override { return SqlDialect::kSqlite; }
  Result<std::vector<SqlRow>> Query(const std::string& sql,
                                    const std::vector<SqlValue>& params) override;
  int64_t changed_rows() const override;

 private:
  explicit SqliteDatabase(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace tandem::cluster::store
