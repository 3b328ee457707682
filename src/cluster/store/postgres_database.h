// The PostgreSQL backend of SqlDatabase (libpq): one connection, text-format parameters,
// `?` placeholders renumbered to $1, $2, ... (a `?` inside a quoted literal is left alone).
#pragma once

#include <memory>
#include <string>

#include "cluster/store/sql_database.h"

struct pg_conn;

namespace tandem::cluster::store {

class PostgresDatabase : public SqlDatabase {
 public:
  // Connects with a libpq connection URI (postgresql://user:pw@host:port/db).
  // Errors: kUnavailable with libpq's reason and the URI with its password hidden.
  static Result<std::unique_ptr<SqlDatabase>> Open(const std::string& uri);
  ~PostgresDatabase() override;

  SqlDialect dialect() const override { return SqlDialect::kPostgres; }
  Result<std::vector<SqlRow>> Query(const std::string& sql,
                                    const std::vector<SqlValue>& params) override;
  int64_t changed_rows() const override { return changed_rows_; }

 private:
  explicit PostgresDatabase(pg_conn* conn) : conn_(conn) {}
  pg_conn* conn_;
  int64_t changed_rows_ = 0;
};

// `sql` with each `?` outside quotes replaced by $1, $2, ... (exposed for tests).
std::string NumberPlaceholders(const std::string& sql);

}  // namespace tandem::cluster::store
