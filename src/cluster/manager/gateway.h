// Gateway: the manager's OpenAI endpoints (MANAGER.md §6). /v1/models lists the deployments the
// caller may use; /v1/chat/completions and /v1/completions go to the least-loaded RUNNING
// instance of the deployment the body's `model` names. A failed connection or a 5xx before the
// first byte is retried on another instance; streams are proxied event by event, unbuffered;
// a client that leaves closes the upstream request; a stream whose instance dies, or that the
// manager's shutdown cuts, ends with an error event in OpenAI's shape and no [DONE]. Usage (prompt
// and completion tokens, requests) is recorded per API key and deployment from the responses'
// `usage` (requested with stream_options.include_usage when streaming, and that extra chunk removed
// when the client did not ask for it).
#pragma once

#include <utility>  // before awaitable.hpp, which uses std::exchange without including it

#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/manager/auth_cache.h"
#include "cluster/manager/gateway_routes.h"
#include "cluster/manager/gateway_timeline.h"
#include "cluster/store/store.h"
#include "http/client.h"
#include "http/types.h"

namespace tandem::cluster::manager {

class Gateway {
 public:
  explicit Gateway(store::Store& store);
  ~Gateway();  // waits for the requests in flight to end

  // Subscribes to the routing tables; starts the load poller and the usage flusher.
  Status Start();
  // Refuses new requests and cancels the upstream calls in flight: each proxied response ends
  // with a 503, or, once streaming, with an error event.
  void Stop();

  // Waits until every proxied response is complete (written to its client, or the client gone)
  // or `max_wait_s` has passed; returns whether all were. Call after Stop(), from a thread that
  // is not an I/O thread of the listener (their writes are what it waits for).
  bool WaitForResponses(double max_wait_s);

  // Answers one /v1 request from `who` (authentication checked here: 401, 403, 404 as GPUStack).
  void Handle(const http::HttpRequest& request, const Principal& who,
              std::shared_ptr<http::ResponseSink> sink);

  // Prometheus text: requests by deployment and code, latency and time-to-first-byte histograms.
  std::string MetricsText() const;

  // The last 15 minutes for the console's dashboard (GatewayTimeline::Snapshot).
  nlohmann::json Dashboard(double now_unix) const { return timeline_.Snapshot(now_unix); }

 private:
  struct Usage {
    int64_t prompt_tokens = 0;
    int64_t completion_tokens = 0;
    int64_t requests = 0;
  };
  // One request's upstream attempts and relay, as a coroutine on the client session's strand.
  // `in_flight` (held until the frame goes) releases the request's count in active_.
  // `response_open` (held by the sink, until the response is written or the client gone)
  // releases its count in open_responses_.
  boost::asio::awaitable<void> Proxy(http::HttpRequest request, Principal who, std::string model,
                                     nlohmann::json body, bool stream, bool usage_injected,
                                     std::shared_ptr<http::ResponseSink> sink,
                                     std::shared_ptr<void> in_flight,
                                     std::shared_ptr<void> response_open);
  bool Stopping() const;
  // The error event's message for a stream cut by `result` (the manager stopping, or the
  // instance failing).
  std::string CutMessage(const Status& result) const;
  void RecordUsage(const Principal& who, const std::string& model, const nlohmann::json& usage);
  void Observe(const std::string& model, int code, double seconds, double first_byte_seconds);
  void FlushUsage();
  void BackgroundLoop();

  store::Store& store_;
  GatewayRoutes routes_;
  std::thread background_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  int64_t active_ = 0;  // proxied requests in flight
  // Proxied responses not complete yet: counted by tokens their sinks hold, which may outlive
  // the gateway (a session ends after it), hence shared.
  struct OpenResponses {
    std::mutex mutex;
    std::condition_variable cv;
    int64_t count = 0;
  };
  std::shared_ptr<OpenResponses> open_responses_ = std::make_shared<OpenResponses>();
  std::map<int64_t, std::weak_ptr<http::HttpCall>> calls_;  // upstream calls, cancelled by Stop
  int64_t next_call_ = 0;
  std::map<std::tuple<int64_t, std::string, std::string>, Usage> pending_usage_;  // key, model, day

  // Metrics.
  struct Histogram {
    std::vector<uint64_t> buckets;  // per bound, cumulative at export
    uint64_t count = 0;
    double sum = 0;
  };
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (model, code)
  std::map<std::string, Histogram> latency_;
  std::map<std::string, Histogram> first_byte_;
  GatewayTimeline timeline_;
};

}  // namespace tandem::cluster::manager
