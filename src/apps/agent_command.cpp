#include "apps/agent_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "apps/signal_thread.h"
#include "cluster/agent/agent.h"
#include "core/logging.h"

namespace tandem::apps {

int RunAgentCommand(int argc, char** argv) {
  const sigset_t signals = ShutdownSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts
  cluster::agent::AgentConfig c;
  CLI::App app(
      "tandem agent: registers this machine with `tandem manager`, reports its CPU, memory and "
      "devices every --heartbeat-interval seconds, and runs the model instances the manager "
      "places here as host processes (no containers). Every flag also reads "
      "TANDEM_AGENT_<FLAG>; TANDEM_AGENT_* variables are not passed to the instances",
      "tandem agent");
  const auto env = [](const char* name) { return std::string("TANDEM_AGENT_") + name; };
  std::string port_range = "40000-40063";
  app.add_option("--server-url", c.server_url, "the manager, http://HOST:PORT")
      ->required()
      ->envname(env("SERVER_URL"));
  app.add_option("--token", c.token, "the manager's registration token (its DATA_DIR/token)")
      ->required()
      ->envname(env("TOKEN"));
  app.add_option("--worker-name", c.worker_name, "this worker's name (default: the hostname)")
      ->envname(env("WORKER_NAME"));
  app.add_option("--worker-ip", c.worker_ip,
                 "this worker's IP: instances listen on it, followers dial heads on it "
                 "(default: the local address that reaches the manager)")
      ->envname(env("WORKER_IP"));
  app.add_option("--worker-port", c.worker_port,
                 "port on --worker-ip for the instances' logs, which the manager proxies")
      ->capture_default_str()
      ->envname(env("WORKER_PORT"));
  app.add_option("--service-port-range", port_range,
                 "ports for instances (and DP RPC ports), BEGIN-END inclusive")
      ->capture_default_str()
      ->envname(env("SERVICE_PORT_RANGE"));
  app.add_option("--data-dir", c.data_dir, "folder for the instances' logs (DATA_DIR/logs)")
      ->required()
      ->envname(env("DATA_DIR"));
  app.add_option("--devices", c.devices,
                 "devices to offer, TYPE:INDEX,... with TYPE cpu, cuda or cann (default: "
                 "nvidia-smi's GPUs, else npu-smi's NPUs, else one per CPU socket)")
      ->envname(env("DEVICES"));
  app.add_option("--heartbeat-interval", c.heartbeat_interval_s, "seconds between heartbeats")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 300.0))
      ->envname(env("HEARTBEAT_INTERVAL"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  unsigned begin = 0, end = 0;
  char dash = 0;
  if (std::sscanf(port_range.c_str(), "%u%c%u", &begin, &dash, &end) != 3 || dash != '-' ||
      begin < 1 || end > 65535 || end < begin) {
    std::fprintf(stderr,
                 "tandem agent: --service-port-range '%s' is not BEGIN-END with 1 <= BEGIN <= "
                 "END <= 65535\n",
                 port_range.c_str());
    return 2;
  }
  c.port_range_begin = static_cast<uint16_t>(begin);
  c.port_range_end = static_cast<uint16_t>(end);
  cluster::agent::Agent agent(c);
  Status status = agent.Start();
  if (!status.ok()) {
    std::fprintf(stderr, "tandem agent: %s\n", status.message().c_str());
    return 1;
  }
  SignalThread signal_thread([&](int sig) {
    TLOG_INFO("signal {}: stopping the agent and its instances", sig);
    agent.Stop();
  });
  agent.Run();
  return 0;
}

}  // namespace tandem::apps
