// GET /v2/model-instances/{id}/logs: relayed from the agent that runs the instance (HEAD:
// checked, answered with the headers alone).
#include "cluster/manager/rest_api.h"

#include <fmt/format.h>

#include <memory>
#include <thread>

#include "cluster/manager/list_query.h"
#include "cluster/manager/rest_util.h"
#include "http/client.h"

namespace tandem::cluster::manager {

using nlohmann::json;
using store::Record;
using store::Table;

Status RestApi::ProxyLogs(int64_t id, const http::HttpRequest& request,
                          const std::shared_ptr<http::ResponseSink>& sink) {
  auto instance = store_.Get(Table::kModelInstances, id);
  if (!instance.ok()) return instance.status();
  auto query = ParseQueryString(request.query);
  if (!query.ok()) return query.status();
  int64_t worker_id = instance->data.value("worker_id", int64_t{0});
  std::string tail;
  bool follow = false;
  for (const auto& [k, v] : *query) {
    if (k == "worker_id") {
      auto w = ParseId(v);
      if (!w) return InvalidArgument("query parameter 'worker_id' must be a worker's id");
      worker_id = *w;
    } else if (k == "tail") {
      auto n = ParseId(v);
      if (!n && v != "0")
        return InvalidArgument("query parameter 'tail' must be a number of lines");
      tail = v;
    } else if (k == "follow") {
      follow = v == "true" || v == "1";
    } else {
      return InvalidArgument(
          fmt::format("unknown query parameter '{}' (tail, follow, worker_id)", k));
    }
  }
  if (worker_id == 0) {
    return InvalidArgument(fmt::format("instance {} is not placed on a worker yet ({})", id,
                                       instance->data.value("state", "")));
  }
  bool placed = instance->data.value("worker_id", int64_t{0}) == worker_id;
  for (const json& s :
       instance->data["distributed_servers"].value("subordinate_workers", json::array())) {
    placed |= s.value("worker_id", int64_t{0}) == worker_id;
  }
  if (!placed) return NotFound(fmt::format("instance {} does not run on worker {}", id, worker_id));
  auto worker = store_.Get(Table::kWorkers, worker_id);
  if (!worker.ok()) return worker.status();
  if (request.method == "HEAD") {
    // The logs' headers, no body (RFC 9110 §9.3.2): the agent is not asked (with follow, its
    // stream would run on unread until the connection closed).
    sink->StartStream("text/plain; charset=utf-8");
    sink->EndStream();
    return Status::Ok();
  }
  http::ClientRequest up;
  up.url = fmt::format("http://{}:{}/instances/{}/logs?run={}{}{}", worker->data.value("ip", ""),
                       worker->data.value("port", 0), instance->name,
                       instance->data.value("restart_count", int64_t{0}),
                       tail.empty() ? "" : "&tail=" + tail, follow ? "&follow=true" : "");
  up.headers = {{"Authorization", "Bearer " + worker->data.value("log_secret", "")}};
  up.connect_timeout_s = 3;
  up.idle_timeout_s = follow ? 24 * 3600 : 30;
  // The agent may take its time (follow): relay on a thread of its own. A manager shutdown
  // cancels the call, which ends a started relay with its last chunk.
  auto call = std::make_shared<http::HttpCall>(up);
  std::shared_ptr<void> open = open_streams_.Add([call] { call->Cancel(); });
  std::thread([call, open, sink, where = worker->name]() {
    sink->SetOnDisconnect([call] { call->Cancel(); });
    bool started = false;
    std::string body;
    int status = 0;
    Status result = call->Run(
        [&](int code, const http::HeaderList&) {
          status = code;
          if (code == 200) {
            sink->StartStream("text/plain; charset=utf-8");
            started = true;
          }
          return true;
        },
        [&](std::string_view bytes) {
          if (started) {
            sink->SendStreamData(std::string(bytes));
          } else {
            body.append(bytes);
          }
          return true;
        });
    if (started) {
      sink->EndStream();
    } else if (!result.ok()) {
      SendError(*sink, Unavailable(fmt::format("cannot reach worker '{}' for the logs: {}", where,
                                               result.message())));
    } else {
      json parsed = json::parse(body, nullptr, false);
      SendError(*sink, Status(status == 404 ? StatusCode::kNotFound : StatusCode::kUnavailable,
                              parsed.is_object() ? parsed.value("message", body) : body));
    }
  }).detach();
  return Status::Ok();
}

}  // namespace tandem::cluster::manager
