#include "cluster/store/sql_database.h"

#include <cstdlib>

#include "cluster/store/postgres_database.h"
#include "cluster/store/sqlite_database.h"

namespace tandem::cluster::store {

int64_t SqlRow::Int(size_t i) const {
  if (i >= columns.size() || !columns[i]) return 0;
  return std::strtoll(columns[i]->c_str(), nullptr, 10);
}

const std::string& SqlRow::Text(size_t i) const {
  static const std::string kEmpty;
  if (i >= columns.size() || !columns[i]) return kEmpty;
  return *columns[i];
}

std::string RedactDatabaseUrl(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const size_t at = url.find('@', scheme + 3);
  if (at == std::string::npos) return url;
  const size_t colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

Result<std::unique_ptr<SqlDatabase>> OpenSqlDatabase(const std::string& url) {
  if (url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0) {
    return PostgresDatabase::Open(url);
  }
  if (url.rfind("sqlite://", 0) == 0) {
    // sqlite:///abs/path (three slashes) or sqlite://relative/path.
    return SqliteDatabase::Open(url.substr(9));
  }
  if (url.find("://") != std::string::npos) {
    return InvalidArgument("--database-url '" + RedactDatabaseUrl(url) +
                           "': expected sqlite:///PATH or postgresql://USER:PASSWORD@HOST:PORT/DB");
  }
  return SqliteDatabase::Open(url);
}

}  // namespace tandem::cluster::store
