// RestApi: the /v2 management API of the manager (MANAGER.md §2–§3): list (filter, sort, page),
// watch, get, create, update (409 on a stale resource_version), delete for workers, gpu-devices,
// inference-backends, models, model-instances, api-keys, users and usage; worker registration
// and heartbeats; instance status reports from agents.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cluster/manager/auth_cache.h"
#include "cluster/manager/manager_config.h"
#include "cluster/manager/open_streams.h"
#include "cluster/store/store.h"
#include "http/types.h"

namespace boost::asio {
class io_context;
}

namespace tandem::cluster::manager {

class RestApi {
 public:
  // `open_streams` registers the watches and followed logs this starts (a shutdown ends them).
  RestApi(store::Store& store, const ManagerConfig& config, boost::asio::io_context& io_context,
          OpenStreams& open_streams)
      : store_(store), config_(config), io_context_(io_context), open_streams_(open_streams) {}

  // Answers one /v2 request from `who` (already authenticated).
  void Handle(const http::HttpRequest& request, const Principal& who,
              const std::shared_ptr<http::ResponseSink>& sink);

  // Whether `who` may send `method` (HEAD as GET) to /v2 `path`, from the request head alone:
  // kPermissionDenied (403) naming why (a worker key's routes, the registration token's, admin
  // only, an API key without scope management), else Ok — also for paths that do not exist,
  // which Handle answers 404. The manager asks before reading a body (an Expect: 100-continue
  // refused at once); Handle asks first.
  static Status Authorize(const std::string& method, const std::string& path, const Principal& who);

  // The API's view of a row of `table` (password hashes and key secrets removed).
  static nlohmann::json PublicView(store::Table table, const store::Record& record);

 private:
  using Segments = std::vector<std::string>;
  Status ListOrWatch(store::Table table, const http::HttpRequest& request, const Principal& who,
                     const std::shared_ptr<http::ResponseSink>& sink);
  Result<nlohmann::json> GetOne(store::Table table, int64_t id, const Principal& who);
  Status DeleteOne(store::Table table, int64_t id);

  Result<nlohmann::json> CreateModel(const nlohmann::json& body);
  Result<nlohmann::json> UpdateModel(int64_t id, const nlohmann::json& body);
  Status CheckModelReferences(const nlohmann::json& model);
  Result<nlohmann::json> CreateBackend(const nlohmann::json& body);
  Result<nlohmann::json> UpdateBackend(int64_t id, const nlohmann::json& body);
  Result<nlohmann::json> RegisterWorker(const nlohmann::json& body, const Principal& who);
  Result<nlohmann::json> Heartbeat(int64_t worker_id, const nlohmann::json& body,
                                   const Principal& who);
  Result<nlohmann::json> UpdateWorker(int64_t id, const nlohmann::json& body);
  Result<nlohmann::json> ReportInstanceStatus(int64_t id, const nlohmann::json& body,
                                              const Principal& who);
  // GET /v2/model-instances/{id}/logs?tail=N&follow=true&worker_id=W: relayed from the agent.
  Status ProxyLogs(int64_t id, const http::HttpRequest& request,
                   const std::shared_ptr<http::ResponseSink>& sink);
  Result<nlohmann::json> CreateApiKey(const nlohmann::json& body, const Principal& who);
  Result<nlohmann::json> CreateUser(const nlohmann::json& body);
  Result<nlohmann::json> UpdateUser(int64_t id, const nlohmann::json& body);
  // kConflict when user `id` is the only admin (`what`: "demoted", "deleted").
  Status CheckNotLastAdmin(int64_t id, const char* what);
  Result<nlohmann::json> ListUsage(const http::HttpRequest& request, const Principal& who);

  store::Store& store_;
  const ManagerConfig& config_;
  boost::asio::io_context& io_context_;
  OpenStreams& open_streams_;
};

// Seconds since the Unix epoch.
int64_t NowUnix();

// A PUT body's resource_version: -1 when absent (no check), else the positive integer given.
// Errors: kInvalidArgument for another value.
Result<int64_t> ExpectedVersion(const nlohmann::json& body);

}  // namespace tandem::cluster::manager
