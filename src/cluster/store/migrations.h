// Versioned schema migrations of the manager's store, compiled into the binary. Each is applied
// once, in its own transaction, in order, and recorded in schema_migrations(version,
// applied_at). One schema for SQLite and PostgreSQL: TEXT and BIGINT columns only; the id
// column is written {{ID}} and expanded per dialect.
#pragma once

#include <string>
#include <vector>

#include "cluster/store/sql_database.h"

namespace tandem::cluster::store {

struct Migration {
  int version;
  const char* description;
  const char* sql;  // statements separated by ';'
};

// Every migration, in order (versions 1, 2, ...).
const std::vector<Migration>& AllMigrations();

// The highest version this binary knows.
int LatestSchemaVersion();

// Applies the missing migrations. Returns the schema version afterwards. Errors: kInternal
// naming the migration whose SQL failed (nothing of it is kept); kInvalidArgument when the
// database is newer than this binary (naming both versions).
Result<int> Migrate(SqlDatabase& db);

}  // namespace tandem::cluster::store
