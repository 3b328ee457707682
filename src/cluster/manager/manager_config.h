// ManagerConfig: everything `tandem manager` needs, filled by apps/ from its flags.
#pragma once

#include <cstdint>
#include <string>

namespace tandem::cluster::manager {

struct ManagerConfig {
  std::string host = "0.0.0.0";    // --host
  uint16_t port = 8080;            // --port; 0 = pick a free port (tests)
  std::string data_dir;            // --data-dir: database, token, initial password, logs
  std::string database_url;        // --database-url; "" = sqlite://DATA_DIR/manager.db
  std::string bootstrap_password;  // --bootstrap-password; "" = random, written to DATA_DIR
  std::string token;               // --token: the registration token; "" = random, in DATA_DIR
  int32_t num_io_threads = 4;      // HTTP I/O threads
  double worker_not_ready_after_s = 30;    // no heartbeat for this long → not_ready
  double worker_unreachable_after_s = 90;  // ... and this long → unreachable
  double controller_interval_s = 1;        // scheduler / reconciler / liveness period
  double watch_heartbeat_s = 15;           // a blank line on a quiet watch stream
  std::string version = "0.1.0";
};

}  // namespace tandem::cluster::manager
