#include "cluster/store/postgres_database.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <cstring>

namespace tandem::cluster::store {

std::string NumberPlaceholders(const std::string& sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int n = 0;
  char quote = 0;
  for (char c : sql) {
    if (quote) {
      if (c == quote) quote = 0;
      out += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += fmt::format("${}", ++n);
    } else {
      out += c;
    }
  }
  return out;
}

Result<std::unique_ptr<SqlDatabase>> PostgresDatabase::Open(const std::string& uri) {
  pg_conn* conn = PQconnectdb(uri.c_str());
  if (!conn || PQstatus(conn) != CONNECTION_OK) {
    std::string why = conn ? PQerrorMessage(conn) : "out of memory";
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    PQfinish(conn);
    return Unavailable(
        fmt::format("cannot connect to PostgreSQL at '{}': {}", RedactDatabaseUrl(uri), why));
  }
  std::unique_ptr<SqlDatabase> out(new PostgresDatabase(conn));
  // Quiet the NOTICEs of CREATE ... IF NOT EXISTS.
  Status status = out->Exec("SET client_min_messages = WARNING");
  if (!status.ok()) return status;
  return out;
}

PostgresDatabase::~PostgresDatabase() { PQfinish(conn_); }

Result<std::vector<SqlRow>> PostgresDatabase::Query(const std::string& sql,
                                                    const std::vector<SqlValue>& params) {
  std::vector<std::string> texts(params.size());
  std::vector<const char*> values(params.size(), nullptr);
  for (size_t i = 0; i < params.size(); ++i) {
    if (const auto* v = std::get_if<int64_t>(&params[i])) {
      texts[i] = std::to_string(*v);
      values[i] = texts[i].c_str();
    } else if (const auto* t = std::get_if<std::string>(&params[i])) {
      values[i] = t->c_str();
    }
  }
  PGresult* result;
  if (params.empty()) {
    result = PQexec(conn_, sql.c_str());  // may hold several statements
  } else {
    const std::string numbered = NumberPlaceholders(sql);
    result = PQexecParams(conn_, numbered.c_str(), static_cast<int>(params.size()), nullptr,
                          values.data(), nullptr, nullptr, 0);
  }
  const ExecStatusType status = PQresultStatus(result);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    std::string why = PQresultErrorMessage(result);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
    const bool unique = state && std::strcmp(state, "23505") == 0;
    PQclear(result);
    const std::string message = fmt::format("PostgreSQL: {} (in: {})", why, sql.substr(0, 200));
    if (unique) return Conflict(message);
    if (PQstatus(conn_) != CONNECTION_OK) return Unavailable(message);
    return Internal(message);
  }
  const char* affected = PQcmdTuples(result);
  changed_rows_ = affected && *affected ? std::strtoll(affected, nullptr, 10) : 0;
  std::vector<SqlRow> rows;
  const int n_rows = PQntuples(result);
  const int n_cols = PQnfields(result);
  rows.reserve(n_rows);
  for (int r = 0; r < n_rows; ++r) {
    SqlRow row;
    row.columns.reserve(n_cols);
    for (int c = 0; c < n_cols; ++c) {
      if (PQgetisnull(result, r, c)) {
        row.columns.emplace_back(std::nullopt);
      } else {
        row.columns.emplace_back(std::string(PQgetvalue(result, r, c), PQgetlength(result, r, c)));
      }
    }
    rows.push_back(std::move(row));
  }
  PQclear(result);
  return rows;
}

}  // namespace tandem::cluster::store
