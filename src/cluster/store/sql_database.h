// SqlDatabase: the few SQL operations the manager's store needs, behind one interface with an
// SQLite backend (embedded default) and a PostgreSQL one (libpq). Statements use `?`
// placeholders in both; the PostgreSQL backend numbers them ($1, $2, ...). Results come back
// as text (NULL as nullopt): the store keeps its rows as TEXT and INTEGER columns only.
// Not thread-safe: the Store serializes access.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/status.h"

namespace tandem::cluster::store {

// A bound parameter: NULL, an integer, or text.
using SqlValue = std::variant<std::monostate, int64_t, std::string>;

struct SqlRow {
  std::vector<std::optional<std::string>> columns;
  // Column `i` as an integer (0 when NULL or not a number).
  int64_t Int(size_t i) const;
  // Column `i` as text ("" when NULL).
  const std::string& Text(size_t i) const;
};

enum class SqlDialect { kSqlite, kPostgres };

class SqlDatabase {
 public:
  virtual ~SqlDatabase() = default;

  virtual SqlDialect dialect() const = 0;

  // Runs one statement (or, without parameters, several separated by ';') and returns the rows
  // it produced (none for DDL/DML without RETURNING). Errors: kConflict for a unique-constraint
  // violation, kUnavailable for a lost connection, kInternal for other database errors; the
  // message carries the database's text.
  virtual Result<std::vector<SqlRow>> Query(const std::string& sql,
                                            const std::vector<SqlValue>& params = {}) = 0;

  // The number of rows the last INSERT/UPDATE/DELETE changed.
  virtual int64_t changed_rows() const = 0;

  // Runs `sql` without parameters, discarding rows.
  Status Exec(const std::string& sql) { return Query(sql).status(); }
};

// Opens `url`:
//   sqlite:///ABSOLUTE/PATH.db, sqlite://RELATIVE/PATH.db, or a plain file path (SQLite, WAL,
//   the file created when missing); postgresql://user:password@host:port/dbname (libpq).
// Errors: kInvalidArgument for another scheme; kUnavailable naming the database (password
// hidden) when it cannot be opened or reached.
Result<std::unique_ptr<SqlDatabase>> OpenSqlDatabase(const std::string& url);

// `url` with the password replaced by "***", for messages and logs.
std::string RedactDatabaseUrl(const std::string& url);

}  // namespace tandem::cluster::store
