// GatewayRoutes: which instances serve each deployment, and how loaded each is, for the /v1
// gateway (MANAGER.md §6). Kept current from the store's watch feeds (models, instances), so
// routing reads no database. Load of an instance = requests in flight through this gateway +
// what its own /metrics showed beyond those at the last poll (vllm:num_requests_running +
// vllm:num_requests_waiting, polled every second by PollLoads).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cluster/store/store.h"

namespace tandem::cluster::manager {

struct Upstream {
  int64_t instance_id = 0;
  std::string base_url;                             // http://IP:PORT
  std::shared_ptr<std::atomic<int64_t>> in_flight;  // through this gateway
};

class GatewayRoutes {
 public:
  explicit GatewayRoutes(store::Store& store) : store_(store) {}
  ~GatewayRoutes();

  // Subscribes to the models and model-instances tables (replaying them).
  Status Start();

  // Whether a deployment named `model` exists.
  bool HasModel(const std::string& model) const;
  // Every deployment name, sorted.
  std::vector<std::string> ModelNames() const;

  // The least-loaded RUNNING instance of `model` not in `exclude`, with its in-flight count
  // already incremented (the caller decrements it when done); nullopt when none. Ties go to
  // the instance picked least recently.
  std::optional<Upstream> Pick(const std::string& model, const std::vector<int64_t>& exclude);

  // Polls every RUNNING instance's /metrics once (0.5 s timeout each).
  void PollLoads();

  // The load routing sees now, per RUNNING instance: (deployment, instance id, load).
  std::vector<std::tuple<std::string, int64_t, int64_t>> Loads() const;

 private:
  struct Instance {
    int64_t id = 0;
    int64_t model_id = 0;
    bool running = false;
    std::string base_url;
    std::shared_ptr<std::atomic<int64_t>> in_flight = std::make_shared<std::atomic<int64_t>>(0);
    int64_t external = 0;  // polled load beyond our in-flight requests
    uint64_t last_picked = 0;
  };
  void OnModel(const store::WatchEvent& event);
  void OnInstance(const store::WatchEvent& event);

  store::Store& store_;
  mutable std::mutex mutex_;
  std::map<std::string, int64_t> model_ids_;  // name → id
  std::map<int64_t, Instance> instances_;
  uint64_t pick_counter_ = 0;
  std::vector<int64_t> subscriptions_;
};

// The sum of vllm:num_requests_running and vllm:num_requests_waiting over all label sets of a
// Prometheus text page; 0 when absent.
int64_t ParseQueuedRequests(const std::string& metrics_text);

}  // namespace tandem::cluster::manager
