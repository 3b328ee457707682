#include "apps/manager_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "apps/signal_thread.h"
#include "apps/version.h"
#include "cluster/manager/manager.h"
#include "core/logging.h"

namespace tandem::apps {

int RunManagerCommand(int argc, char** argv) {
  const sigset_t signals = ShutdownSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts
  cluster::manager::ManagerConfig c;
  c.version = kVersion;
  CLI::App app(
      "tandem manager: the cluster manager. Keeps workers, devices, backends, deployments "
      "(models), instances, users and API keys in SQLite or PostgreSQL; serves GPUStack's /v2 "
      "management API, /auth/login, an OpenAI /v1 gateway and the web console (at /, built into "
      "this binary) on one port; `tandem agent` on "
      "each machine runs the instances. Every flag also reads TANDEM_MANAGER_<FLAG>",
      "tandem manager");
  const auto env = [](const char* name) { return std::string("TANDEM_MANAGER_") + name; };
  app.add_option("--host", c.host, "address to listen on")
      ->capture_default_str()
      ->envname(env("HOST"));
  app.add_option("--port", c.port,
                 "port for the API, the gateway, the web console and /metrics (0 = any free)")
      ->capture_default_str()
      ->envname(env("PORT"));
  app.add_option("--data-dir", c.data_dir,
                 "folder for manager.db, the registration token (token) and the first admin "
                 "password (initial_admin_password); created when missing")
      ->required()
      ->envname(env("DATA_DIR"));
  app.add_option("--database-url", c.database_url,
                 "sqlite:///PATH (default: DATA_DIR/manager.db) or "
                 "postgresql://USER:PASSWORD@HOST:PORT/DB")
      ->envname(env("DATABASE_URL"));
  app.add_option("--bootstrap-password", c.bootstrap_password,
                 "password of the 'admin' user made on the first start (default: random, "
                 "written to DATA_DIR/initial_admin_password)")
      ->envname(env("BOOTSTRAP_PASSWORD"));
  app.add_option("--token", c.token,
                 "registration token agents present (default: random on the first start, kept "
                 "in the database and written to DATA_DIR/token)")
      ->envname(env("TOKEN"));
  app.add_option("--num-io-threads", c.num_io_threads, "HTTP I/O threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 64))
      ->envname(env("NUM_IO_THREADS"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  cluster::manager::Manager manager(c);
  Status status = manager.Start();
  if (!status.ok()) {
    std::fprintf(stderr, "tandem manager: %s\n", status.message().c_str());
    return 1;
  }
  SignalThread signal_thread([&](int sig) {
    TLOG_INFO("signal {}: stopping the manager", sig);
    manager.Stop();
  });
  TLOG_INFO("tandem manager {} ready on port {}", kVersion, manager.port());
  manager.Run();
  return 0;
}

}  // namespace tandem::apps
