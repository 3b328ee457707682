#include "postgres_server.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace tandem::testing {

namespace {

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

std::string PostgresServer::Run(const std::string& command, int* rc) {
  std::string out;
  FILE* pipe = popen((as_user_ + command + " 2>&1").c_str(), "r");
  if (!pipe) {
    *rc = -1;
    return "popen failed";
  }
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  *rc = pclose(pipe);
  return out;
}

PostgresServer::PostgresServer() {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    if (fs::exists(entry.path() / "bin" / "initdb")) bin_ = (entry.path() / "bin").string();
  }
  if (bin_.empty()) {
    error_ =
        "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb; "
        "scripts/setup.sh installs Debian's postgresql package)";
    return;
  }
  char tmpl[] = "/tmp/tandem-pg-XXXXXX";
  if (!mkdtemp(tmpl)) {
    error_ = "mkdtemp failed";
    return;
  }
  dir_ = tmpl;
  if (geteuid() == 0) {
    as_user_ = "runuser -u postgres -- ";
    int rc = std::system(fmt::format("chown postgres: '{}'", dir_).c_str());
    if (rc != 0) {
      error_ = "cannot chown the data directory to the postgres user (no such user?)";
      return;
    }
  }
  int rc = 0;
  std::string out = Run(fmt::format("{}/initdb -D '{}/data' --auth=trust -U postgres "
                                    "--no-sync -E UTF8",
                                    bin_, dir_),
                        &rc);
  if (rc != 0) {
    error_ = "initdb failed: " + out;
    return;
  }
  port_ = FreeLoopbackPort();
  out = Run(fmt::format("{}/pg_ctl -D '{}/data' -l '{}/log' -w -t 60 -o \"-p {} -k '{}' "
                        "-c listen_addresses=127.0.0.1 -c fsync=off\" start",
                        bin_, dir_, dir_, port_, dir_),
            &rc);
  if (rc != 0) {
    error_ = "pg_ctl start failed: " + out;
    return;
  }
  started_ = true;
}

PostgresServer::~PostgresServer() {
  int rc = 0;
  if (started_) Run(fmt::format("{}/pg_ctl -D '{}/data' -m immediate -w stop", bin_, dir_), &rc);
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string PostgresServer::CreateDatabase() {
  const std::string name = fmt::format("tandem_test_{}", ++databases_);
  int rc = 0;
  std::string out =
      Run(fmt::format("{}/psql -h 127.0.0.1 -p {} -U postgres -d postgres -qc 'CREATE DATABASE {}'",
                      bin_, port_, name),
          &rc);
  if (rc != 0) return "create-database-failed: " + out;
  return fmt::format("postgresql://postgres@127.0.0.1:{}/{}", port_, name);
}

}  // namespace tandem::testing
