// http/: the listener and the client against each other over loopback: headers and query reach
// the handler, whole and streamed bodies, piecewise delivery, cancel, refused connections and
// idle timeouts; and ParseHttpUrl's table.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include "http/client.h"
#include "http/listener.h"

namespace tandem::http {
namespace {

class ListenerFixture : public ::testing::Test {
 protected:
  void Start(RequestHandler handler, SessionOptions options = {}) {
    listener_ = std::make_unique<HttpListener>(std::move(options), std::move(handler));
    ASSERT_TRUE(listener_->Open("127.0.0.1", 0).ok());
    thread_ = std::thread([this] { listener_->Run(2); });
  }
  void TearDown() override {
    if (listener_) listener_->Stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string Url(const std::string& target) {
    return "http://127.0.0.1:" + std::to_string(listener_->port()) + target;
  }
  std::unique_ptr<HttpListener> listener_;
  std::thread thread_;
};

TEST_F(ListenerFixture, RequestPartsReachTheHandlerAndTheResponseComesBack) {
  Start([](HttpRequest request, std::shared_ptr<ResponseSink> sink) {
    const std::string echo = request.method + " " + request.path + " ? " + request.query + " | " +
                             std::string(request.Header("X-Thing")) + " | " + request.body + " | " +
                             request.peer_address;
    sink->SendResponseWithHeaders(201, "text/plain", echo, {{"X-Reply", "yes"}});
  });
  ClientRequest request;
  request.method = "POST";
  request.url = Url("/v2/models?page=2&perPage=5");
  request.headers = {{"x-thing", "42"}};
  request.body = "hello";
  auto response = Fetch(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->body, "POST /v2/models ? page=2&perPage=5 | 42 | hello | 127.0.0.1");
  EXPECT_EQ(response->Header("x-reply"), "yes");
  EXPECT_EQ(response->Header("Content-Type"), "text/plain");
}

TEST_F(ListenerFixture, StreamedPiecesArriveOneByOneBeforeTheStreamEnds) {
  // The handler writes one piece per client acknowledgement: the client can only see piece
  // N+1 if it was handed piece N before the stream ended (no buffering on either side).
  std::mutex mutex;
  std::condition_variable cv;
  int acknowledged = 0;
  std::shared_ptr<ResponseSink> stream_sink;
  Start([&](HttpRequest, std::shared_ptr<ResponseSink> sink) {
    sink->StartStream("text/event-stream");
    sink->SendStreamData("piece0;");
    std::lock_guard lock(mutex);
    stream_sink = sink;
  });
  std::thread writer([&] {
    for (int i = 1; i <= 3; ++i) {
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return acknowledged >= i; });
      if (i < 3) {
        stream_sink->SendStreamData("piece" + std::to_string(i) + ";");
      } else {
        stream_sink->EndStream();
      }
    }
  });
  ClientRequest request;
  request.url = Url("/stream");
  std::vector<std::string> pieces;
  int status = 0;
  HttpCall call(request);
  Status result = call.Run(
      [&](int code, const HeaderList&) {
        status = code;
        return true;
      },
      [&](std::string_view bytes) {
        pieces.emplace_back(bytes);
        std::lock_guard lock(mutex);
        ++acknowledged;
        cv.notify_all();
        return true;
      });
  writer.join();
  ASSERT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(status, 200);
  EXPECT_EQ(pieces, (std::vector<std::string>{"piece0;", "piece1;", "piece2;"}));
}

TEST_F(ListenerFixture, CancelEndsARunningCallAndTheServerSeesTheDisconnect) {
  std::mutex mutex;
  std::condition_variable cv;
  bool disconnected = false;
  std::shared_ptr<const std::atomic<bool>> client_gone;  // the request's view of the same
  Start([&](HttpRequest request, std::shared_ptr<ResponseSink> sink) {
    client_gone = request.client_gone;
    ASSERT_NE(client_gone, nullptr);
    EXPECT_FALSE(client_gone->load());  // the client waits for this stream's head
    sink->SetOnDisconnect([&] {
      std::lock_guard lock(mutex);
      disconnected = true;
      cv.notify_all();
    });
    sink->StartStream("text/event-stream");
    sink->SendStreamData("first");  // and never ends
  });
  ClientRequest request;
  request.url = Url("/forever");
  HttpCall call(request);
  Status result = call.Run([](int, const HeaderList&) { return true; },
                           [&](std::string_view) {
                             call.Cancel();  // from inside, as a gateway's disconnect would
                             return true;
                           });
  EXPECT_FALSE(result.ok());
  EXPECT_NE(result.message().find("cancelled"), std::string::npos) << result.ToString();
  EXPECT_TRUE(call.head_received());
  std::unique_lock lock(mutex);
  cv.wait(lock, [&] { return disconnected; });
  EXPECT_TRUE(client_gone->load());  // set before the callback runs
}

TEST(HttpClientTest, ARefusedConnectionFailsBeforeTheHead) {
  // Bind a port, then close it: nothing listens there.
  uint16_t port = 0;
  {
    HttpListener listener({}, [](HttpRequest, std::shared_ptr<ResponseSink>) {});
    ASSERT_TRUE(listener.Open("127.0.0.1", 0).ok());
    port = listener.port();
  }
  ClientRequest request;
  request.url = "http://127.0.0.1:" + std::to_string(port) + "/";
  HttpCall call(request);
  Status result =
      call.Run([](int, const HeaderList&) { return true; }, [](std::string_view) { return true; });
  EXPECT_EQ(result.code(), StatusCode::kUnavailable);
  EXPECT_NE(result.message().find("cannot connect to 127.0.0.1:"), std::string::npos)
      << result.ToString();
  EXPECT_FALSE(call.head_received());
}

TEST_F(ListenerFixture, ASilentServerTimesOutAfterTheIdleTimeout) {
  std::shared_ptr<ResponseSink> held;
  std::mutex mutex;
  Start([&](HttpRequest, std::shared_ptr<ResponseSink> sink) {
    std::lock_guard lock(mutex);
    held = sink;  // never answers
  });
  ClientRequest request;
  request.url = Url("/silent");
  request.idle_timeout_s = 0.2;
  auto response = Fetch(request);
  EXPECT_FALSE(response.ok());
  if (!response.ok()) {
    EXPECT_NE(response.status().message().find("timed out"), std::string::npos)
        << response.status().ToString();
  }
  std::lock_guard lock(mutex);  // the handler ran on the listener's thread (ThreadSanitizer)
  held.reset();
}

TEST_F(ListenerFixture, ABodyOverTheLimitIsRefusedWith413InTheConfiguredShape) {
  SessionOptions options;
  options.max_body_bytes = 10;
  options.error_body = [](int status, const std::string& message, const std::string& path) {
    return "{\"code\": " + std::to_string(status) + ", \"path\": \"" + path + "\"}";
  };
  Start([](HttpRequest,
           std::shared_ptr<ResponseSink> sink) { sink->SendResponse(200, "text/plain", "ok"); },
        options);
  ClientRequest request;
  request.method = "POST";
  request.url = Url("/v1/upload?x=1");
  request.body = std::string(11, 'x');
  auto response = Fetch(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(response->body, "{\"code\": 413, \"path\": \"/v1/upload\"}");
}

TEST_F(ListenerFixture, OneBodyBiggerThanTheSendBufferLimitReachesAClientThatReads) {
  // The limit bounds what a producer queues behind the piece being written, not one body that
  // is already whole in memory (a /v1/models listing, a completion with many logprobs).
  SessionOptions options;
  options.send_buffer_bytes = 16 << 10;
  options.max_send_buffer_bytes = 64 << 10;
  const std::string body(4 << 20, 'b');
  Start(
      [&body](HttpRequest, std::shared_ptr<ResponseSink> sink) {
        sink->SendResponse(200, "text/plain", body);
      },
      options);
  ClientRequest request;
  request.url = Url("/big");
  auto response = Fetch(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body.size(), body.size());
}

TEST_F(ListenerFixture, AStreamQueuedPastTheLimitForAClientThatDoesNotReadIsAborted) {
  // A raw socket that sends a request and never reads; a producer thread (an engine's output
  // thread in serve) streams 64 KiB pieces until the session reports the disconnect: the bytes
  // queued behind the piece in flight passed max_send_buffer_bytes once the kernel's buffers
  // were full.
  SessionOptions options;
  options.send_buffer_bytes = 16 << 10;
  options.max_send_buffer_bytes = 64 << 10;
  options.stalled_client_timeout_s = 600;  // only the hard limit can end it within the test
  std::atomic<int> aborts{0};
  options.on_stalled_client = [&aborts] { aborts.fetch_add(1); };
  std::mutex mutex;
  std::condition_variable cv;
  bool disconnected = false;
  std::atomic<bool> stop{false};
  std::thread producer;
  Start(
      [&](HttpRequest, std::shared_ptr<ResponseSink> sink) {
        sink->SetOnDisconnect([&] {
          stop = true;
          std::lock_guard lock(mutex);
          disconnected = true;
          cv.notify_all();
        });
        sink->StartStream("text/plain");
        producer = std::thread([sink, &stop] {
          for (int i = 0; i < 4096 && !stop; ++i) {
            sink->SendStreamData(std::string(64 << 10, 's'));
          }
        });
      },
      options);
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), listener_->port()});
  const std::string head = "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n";
  boost::asio::write(socket, boost::asio::buffer(head));
  {
    std::unique_lock lock(mutex);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return disconnected; }))
        << "the stream was not aborted";
  }
  stop = true;
  if (producer.joinable()) {
    producer.join();
  }
  listener_->Stop();  // before the callbacks' captures go out of scope
  thread_.join();
  listener_.reset();
  EXPECT_EQ(aborts.load(), 1);
}

TEST(ParseHttpUrlTest, Table) {
  struct Case {
    const char* url;
    bool ok;
    const char* host;
    int port;
    const char* target;
  };
  const Case cases[] = {
      {"http://10.0.0.1:8080/v2/workers?x=1", true, "10.0.0.1", 8080, "/v2/workers?x=1"},
      {"http://manager", true, "manager", 80, "/"},
      {"http://h:1?q", true, "h", 1, "/?q"},
      {"http://[::1]:9000/a", true, "::1", 9000, "/a"},
      {"https://h/", false, "", 0, ""},
      {"http://:80/", false, "", 0, ""},
      {"http://h:0/", false, "", 0, ""},
      {"http://h:65536/", false, "", 0, ""},
      {"http://h:8x/", false, "", 0, ""},
      {"http://h:/", false, "", 0, ""},
      {"ftp://h", false, "", 0, ""},
  };
  for (const Case& c : cases) {
    auto url = ParseHttpUrl(c.url);
    ASSERT_EQ(url.ok(), c.ok) << c.url;
    if (!c.ok) {
      EXPECT_EQ(url.status().code(), StatusCode::kInvalidArgument);
      continue;
    }
    EXPECT_EQ(url->host, c.host) << c.url;
    EXPECT_EQ(url->port, c.port) << c.url;
    EXPECT_EQ(url->target, c.target) << c.url;
  }
}

}  // namespace
}  // namespace tandem::http
