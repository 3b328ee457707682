// A real PostgreSQL server for tests: Debian's `postgresql` binaries (initdb, pg_ctl under
// /usr/lib/postgresql/*/bin) run in a temporary data directory on a loopback port, trust
// authentication, stopped and removed by the destructor. As root they run as the package's
// `postgres` user (the server refuses root). Available() is false, with the reason, when the
// package is missing; the tests then skip saying so.
#pragma once

#include <string>

namespace tandem::testing {

class PostgresServer {
 public:
  PostgresServer();  // starts the server (blocking until it accepts connections)
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  bool Available() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  // A new, empty database on the server, as a libpq URI.
  std::string CreateDatabase();

 private:
  std::string Run(const std::string& command, int* rc);  // as the server's user; stdout+stderr
  std::string bin_;
  std::string dir_;
  std::string as_user_;  // "runuser -u postgres -- " when root
  int port_ = 0;
  int databases_ = 0;
  bool started_ = false;
  std::string error_;
};

}  // namespace tandem::testing
