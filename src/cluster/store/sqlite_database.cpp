#include "cluster/store/sqlite_database.h"

#include <fmt/format.h>
#include <sqlite3.h>

namespace tandem::cluster::store {

namespace {

Status SqliteError(sqlite3* db, int rc, const std::string& sql) {
  const std::string message =
      fmt::format("SQLite: {} (in: {})", sqlite3_errmsg(db), sql.substr(0, 200));
  if ((rc & 0xff) == SQLITE_CONSTRAINT) return Conflict(message);
  if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) return Unavailable(message);
  return Internal(message);
}

}  // namespace

Result<std::unique_ptr<SqlDatabase>> SqliteDatabase::Open(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Unavailable(fmt::format("cannot open the SQLite database '{}': {}", path, why));
  }
  sqlite3_busy_timeout(db, 5000);
  std::unique_ptr<SqlDatabase> out(new SqliteDatabase(db));
  for (const char* pragma :
       {"PRAGMA journal_mode=WAL", "PRAGMA foreign_keys=ON", "PRAGMA synchronous=NORMAL"}) {
    Status status = out->Exec(pragma);
    if (!status.ok()) {
      return Unavailable(
          fmt::format("cannot use the SQLite database '{}': {}", path, status.message()));
    }
  }
  return out;
}

SqliteDatabase::~SqliteDatabase() { sqlite3_close(db_); }

int64_t SqliteDatabase::changed_rows() const { return sqlite3_changes(db_); }

Result<std::vector<SqlRow>> SqliteDatabase::Query(const std::string& sql,
                                                  const std::vector<SqlValue>& params) {
  std::vector<SqlRow> rows;
  const char* tail = sql.c_str();
  const char* end = sql.c_str() + sql.size();
  bool first = true;
  while (tail < end) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, tail, static_cast<int>(end - tail), &stmt, &tail);
    if (rc != SQLITE_OK) return SqliteError(db_, rc, sql);
    if (!stmt) continue;  // whitespace or a comment
    if (!first && !params.empty()) {
      sqlite3_finalize(stmt);
      return Internal("a statement list cannot take parameters: " + sql.substr(0, 200));
    }
    first = false;
    for (size_t i = 0; i < params.size(); ++i) {
      const int index = static_cast<int>(i) + 1;
      if (const auto* v = std::get_if<int64_t>(&params[i])) {
        rc = sqlite3_bind_int64(stmt, index, *v);
      } else if (const auto* t = std::get_if<std::string>(&params[i])) {
        rc = sqlite3_bind_text(stmt, index, t->data(), static_cast<int>(t->size()),
                               SQLITE_TRANSIENT);
      } else {
        rc = sqlite3_bind_null(stmt, index);
      }
      if (rc != SQLITE_OK) {
        sqlite3_finalize(stmt);
        return SqliteError(db_, rc, sql);
      }
    }
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      SqlRow row;
      const int n = sqlite3_column_count(stmt);
      row.columns.reserve(n);
      for (int c = 0; c < n; ++c) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) {
          row.columns.emplace_back(std::nullopt);
        } else {
          const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
          row.columns.emplace_back(std::string(text, sqlite3_column_bytes(stmt, c)));
        }
      }
      rows.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) {
      Status error = SqliteError(db_, rc, sql);
      sqlite3_finalize(stmt);
      return error;
    }
    sqlite3_finalize(stmt);
  }
  return rows;
}

}  // namespace tandem::cluster::store
