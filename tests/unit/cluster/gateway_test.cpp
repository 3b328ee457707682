// The gateway against fake instances (http::HttpListener servers whose behaviour each test
// sets): retry on another instance before the first byte, a stream whose instance dies ends
// with an error event, 503 with no running instance.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>

#include "http/listener.h"
#include "manager_test_util.h"

namespace tandem::cluster::manager {
namespace {

using nlohmann::json;
using testing::JsonReply;
using testing::ManagerHarness;

// A fake instance: answers with `behaviour` and counts its requests.
class FakeInstance {
 public:
  using Behaviour =
      std::function<void(const http::HttpRequest&, std::shared_ptr<http::ResponseSink>)>;
  explicit FakeInstance(Behaviour behaviour) : behaviour_(std::move(behaviour)) {
    listener_ = std::make_unique<http::HttpListener>(
        http::SessionOptions{},
        [this](http::HttpRequest request, std::shared_ptr<http::ResponseSink> sink) {
          ++requests;
          behaviour_(request, std::move(sink));
        });
    EXPECT_TRUE(listener_->Open("127.0.0.1", 0).ok());
    port_ = listener_->port();
    thread_ = std::thread([this] { listener_->Run(1); });
  }
  ~FakeInstance() { Stop(); }
  // Stops serving and drops every connection (a dead instance, as its clients see it).
  void Stop() {
    if (listener_) listener_->Stop();
    if (thread_.joinable()) thread_.join();
    listener_.reset();
  }
  uint16_t port() const { return port_; }
  std::atomic<int> requests{0};

 private:
  Behaviour behaviour_;
  uint16_t port_ = 0;
  std::unique_ptr<http::HttpListener> listener_;
  std::thread thread_;
};

// Registers a worker, deploys `replicas` of "m" on it and reports each instance RUNNING on the
// given ports; returns the admin session.
std::string DeployOnFakes(ManagerHarness& h, const std::vector<uint16_t>& ports) {
  const std::string admin = h.AdminSession();
  JsonReply w =
      h.Json("POST", "/v2/workers", {{"name", "node-a"}, {"ip", "127.0.0.1"}, {"port", 1}},
             "Bearer registration-token");
  const std::string key = "Bearer " + w.body["api_key"].get<std::string>();
  json devices = json::array();
  for (size_t i = 0; i < ports.size(); ++i) devices.push_back({{"index", i}, {"type", "cpu"}});
  EXPECT_EQ(
      h.Json("POST", "/v2/workers/" + std::to_string(w.body["id"].get<int64_t>()) + "/heartbeat",
             {{"status", {{"gpu_devices", devices}}}}, key)
          .status,
      200);
  EXPECT_EQ(h.Json("POST", "/v2/models",
                   {{"name", "m"},
                    {"local_path", "/m"},
                    {"replicas", ports.size()},
                    {"gpu_selector", {{"gpus_per_replica", 1}}}},
                   admin)
                .status,
            201);
  std::vector<int64_t> ids;
  EXPECT_TRUE(h.WaitFor("the instances scheduled", [&] {
    JsonReply r = h.Call("GET", "/v2/model-instances?state=SCHEDULED", "", admin);
    if (r.body["items"].size() != ports.size()) return false;
    ids.clear();
    for (const json& i : r.body["items"]) ids.push_back(i["id"]);
    return true;
  }));
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(h.Json("POST", "/v2/model-instances/" + std::to_string(ids[i]) + "/status",
                     {{"state", "RUNNING"}, {"restart_count", 0}, {"port", ports[i]}}, key)
                  .status,
              200);
  }
  return admin;
}

const char kCompletion[] =
    R"({"id":"c","object":"text_completion","choices":[{"index":0,"text":"hi","finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}})";

TEST(GatewayTest, A5xxBeforeTheFirstByteIsRetriedOnAnotherInstance) {
  FakeInstance failing([](const http::HttpRequest&, std::shared_ptr<http::ResponseSink> sink) {
    sink->SendResponse(500, "application/json", R"({"error": "boom"})");
  });
  FakeInstance healthy([](const http::HttpRequest&, std::shared_ptr<http::ResponseSink> sink) {
    sink->SendResponse(200, "application/json", kCompletion);
  });
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = DeployOnFakes(h, {failing.port(), healthy.port()});
  for (int i = 0; i < 6; ++i) {
    JsonReply r = h.Json("POST", "/v1/completions", {{"model", "m"}, {"prompt", "x"}}, admin);
    ASSERT_EQ(r.status, 200) << r.raw;
    EXPECT_EQ(r.body["choices"][0]["text"], "hi");
  }
  EXPECT_GT(failing.requests.load(), 0);  // it was tried, and every request still succeeded
  EXPECT_EQ(healthy.requests.load(), 6);
}

TEST(GatewayTest, AStreamWhoseInstanceDiesEndsWithAnErrorEvent) {
  std::mutex mutex;
  std::shared_ptr<http::ResponseSink> open_stream;
  FakeInstance dying([&](const http::HttpRequest&, std::shared_ptr<http::ResponseSink> sink) {
    sink->StartStream("text/event-stream");
    sink->SendStreamData("data: {\"choices\":[{\"index\":0,\"text\":\"first\"}]}\n\n");
    std::lock_guard lock(mutex);
    open_stream = sink;  // never ended: the instance "dies" below
  });
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = DeployOnFakes(h, {dying.port()});
  http::ClientRequest request;
  request.method = "POST";
  request.url = h.Url("/v1/completions");
  request.body = json({{"model", "m"}, {"prompt", "x"}, {"stream", true}}).dump();
  request.headers = {
      {"Content-Type", "application/json"}, {"Cookie", admin.substr(7)}, {"Origin", h.Url("")}};
  std::string received;
  std::thread stopper;
  http::HttpCall call(request);
  Status status =
      call.Run([](int code, const http::HeaderList&) { return code == 200; },
               [&](std::string_view bytes) {
                 received.append(bytes);
                 if (!stopper.joinable() && received.find("first") != std::string::npos) {
                   stopper = std::thread([&] { dying.Stop(); });
                 }
                 return true;
               });
  if (stopper.joinable()) stopper.join();
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_NE(received.find("\"text\":\"first\""), std::string::npos) << received;
  EXPECT_NE(received.find("data: {\"error\":"), std::string::npos) << received;
  EXPECT_NE(received.find("the instance serving this stream failed"), std::string::npos)
      << received;
}

TEST(GatewayTest, StoppingTheManagerWithAStreamInFlightEnds) {
  std::mutex mutex;
  std::vector<std::shared_ptr<http::ResponseSink>> open_streams;
  FakeInstance endless([&](const http::HttpRequest&, std::shared_ptr<http::ResponseSink> sink) {
    sink->StartStream("text/event-stream");
    sink->SendStreamData("data: {\"choices\":[{\"index\":0,\"text\":\"first\"}]}\n\n");
    std::lock_guard lock(mutex);
    open_streams.push_back(sink);  // never ended
  });
  auto h = std::make_unique<ManagerHarness>();
  ASSERT_TRUE(h->start_status().ok());
  const std::string admin = DeployOnFakes(*h, {endless.port()});
  http::ClientRequest request;
  request.method = "POST";
  request.url = h->Url("/v1/completions");
  request.body = json({{"model", "m"}, {"prompt", "x"}, {"stream", true}}).dump();
  request.headers = {
      {"Content-Type", "application/json"}, {"Cookie", admin.substr(7)}, {"Origin", h->Url("")}};
  std::promise<void> first_event;
  std::thread client([&] {
    bool told = false;
    http::HttpCall call(request);
    (void)call.Run([](int, const http::HeaderList&) { return true; },
                   [&](std::string_view bytes) {
                     if (!told && bytes.find("first") != std::string_view::npos) {
                       told = true;
                       first_event.set_value();
                     }
                     return true;
                   });
    if (!told) first_event.set_value();
  });
  first_event.get_future().wait();
  // The manager stops with the proxy mid-stream: its destructor (which waits for the requests
  // in flight) must return. A hang guard, not a timing assertion: 60 s is far beyond need.
  auto stopped = std::async(std::launch::async, [&] { h.reset(); });
  if (stopped.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << "the manager did not stop with a proxied stream in flight";
    std::fflush(nullptr);
    std::_Exit(1);
  }
  client.join();
}

TEST(GatewayTest, StoppingTheManagerEndsAStreamWithAnErrorEventAndNoDone) {
  std::mutex mutex;
  std::vector<std::shared_ptr<http::ResponseSink>> open_streams;
  FakeInstance endless([&](const http::HttpRequest&, std::shared_ptr<http::ResponseSink> sink) {
    sink->StartStream("text/event-stream");
    sink->SendStreamData("data: {\"choices\":[{\"index\":0,\"text\":\"first\"}]}\n\n");
    sink->SendStreamData("data: {\"cut");  // an event cut by the stop: dropped
    std::lock_guard lock(mutex);
    open_streams.push_back(sink);  // never ended
  });
  auto h = std::make_unique<ManagerHarness>();
  ASSERT_TRUE(h->start_status().ok());
  const std::string admin = DeployOnFakes(*h, {endless.port()});
  http::ClientRequest request;
  request.method = "POST";
  request.url = h->Url("/v1/completions");
  request.body = json({{"model", "m"}, {"prompt", "x"}, {"stream", true}}).dump();
  request.headers = {
      {"Content-Type", "application/json"}, {"Cookie", admin.substr(7)}, {"Origin", h->Url("")}};
  std::promise<void> first_event;
  std::string received;
  Status status;
  std::thread client([&] {
    bool told = false;
    http::HttpCall call(request);
    status = call.Run([](int, const http::HeaderList&) { return true; },
                      [&](std::string_view bytes) {
                        received.append(bytes);
                        if (!told && received.find("first") != std::string::npos) {
                          told = true;
                          first_event.set_value();
                        }
                        return true;
                      });
    if (!told) first_event.set_value();
  });
  first_event.get_future().wait();
  auto stopped = std::async(std::launch::async, [&] { h.reset(); });
  if (stopped.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << "the manager did not stop with a proxied stream in flight";
    std::fflush(nullptr);
    std::_Exit(1);
  }
  client.join();
  EXPECT_TRUE(status.ok()) << "the chunked body ends with its last chunk: " << status.ToString();
  const std::string error_event =
      "data: {\"error\":{\"code\":503,\"message\":\"the manager is shutting down: this stream "
      "ends before its answer is complete; retry the request\",\"param\":null,\"type\":"
      "\"ServiceUnavailableError\"}}\n\n";
  ASSERT_GE(received.size(), error_event.size()) << received;
  EXPECT_EQ(received.substr(received.size() - error_event.size()), error_event) << received;
  EXPECT_EQ(received.find("{\"cut"), std::string::npos) << "no partial event: " << received;
  EXPECT_EQ(received.find("[DONE]"), std::string::npos) << received;
}

TEST(GatewayTest, NoRunningInstanceIs503) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = h.AdminSession();
  ASSERT_EQ(
      h.Json("POST", "/v2/models", {{"name", "idle"}, {"local_path", "/m"}, {"replicas", 0}}, admin)
          .status,
      201);
  JsonReply r =
      h.Json("POST", "/v1/chat/completions",
             {{"model", "idle"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}}, admin);
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body["error"]["message"], "No running instances available");
  // The 503 is counted, and /metrics still answers (it once exported an empty histogram).
  JsonReply metrics = h.Call("GET", "/metrics", "", "");
  ASSERT_EQ(metrics.status, 200) << metrics.raw;
  EXPECT_NE(
      metrics.raw.find("tandem_manager_gateway_requests_total{model_name=\"idle\",code=\"503\"} 1"),
      std::string::npos)
      << metrics.raw;
  // The dashboard shows every deployment's traffic: not to an inference key.
  JsonReply key = h.Json("POST", "/v2/api-keys", {{"name", "k"}, {"scope", {"inference"}}}, admin);
  ASSERT_EQ(key.status, 201) << key.raw;
  EXPECT_EQ(
      h.Call("GET", "/v2/dashboard", "", "Bearer " + key.body["value"].get<std::string>()).status,
      403);
  JsonReply dashboard = h.Call("GET", "/v2/dashboard", "", admin);
  ASSERT_EQ(dashboard.status, 200) << dashboard.raw;
  EXPECT_EQ(dashboard.body["busiest"][0]["model_name"], "idle");
}

}  // namespace
}  // namespace tandem::cluster::manager
