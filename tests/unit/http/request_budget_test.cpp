// http/: what a session refuses before or while it reads a body (issue 31, item 7) — a request
// the handler answers without its body, bodies past the byte budget, a body trickled past its
// deadline, connections past the cap — over raw loopback sockets, and BodyBudget's accounting.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "http/body_budget.h"
#include "http/listener.h"

namespace tandem::http {
namespace request_budget_test {
namespace {

namespace net = boost::asio;
using net::ip::tcp;

class BudgetFixture : public ::testing::Test {
 protected:
  void Start(SessionOptions options) {
    listener_ = std::make_unique<HttpListener>(
        std::move(options), [this](HttpRequest request, std::shared_ptr<ResponseSink> sink) {
          handled_ += 1;
          body_bytes_ += static_cast<int64_t>(request.body.size());
          sink->SendResponse(200, "text/plain", "ok");
        });
    ASSERT_TRUE(listener_->Open("127.0.0.1", 0).ok());
    thread_ = std::thread([this] { listener_->Run(2); });
  }
  void TearDown() override {
    if (listener_) {
      listener_->Stop();
    }
    if (thread_.joinable()) {
      thread_.join();
    }
  }
  // A connected socket that has sent `bytes`.
  tcp::socket Send(const std::string& bytes) {
    tcp::socket socket(io_);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), listener_->port()));
    net::write(socket, net::buffer(bytes));
    return socket;
  }
  // What arrives until `needle` has (a kept-alive response's end).
  static std::string ReadUntil(tcp::socket& socket, const std::string& needle) {
    std::string out;
    boost::system::error_code ec;
    char buf[4096];
    while (out.find(needle) == std::string::npos) {
      const size_t n = socket.read_some(net::buffer(buf), ec);
      if (ec) {
        break;
      }
      out.append(buf, n);
    }
    return out;
  }
  // The response's status line and everything after it until the server closes.
  static std::string ReadAll(tcp::socket& socket) {
    std::string out;
    boost::system::error_code ec;
    char buf[4096];
    while (true) {
      const size_t n = socket.read_some(net::buffer(buf), ec);
      if (ec) {
        break;
      }
      out.append(buf, n);
    }
    return out;
  }
  static std::string Head(const std::string& target, int64_t content_length,
                          const std::string& extra = "") {
    return "POST " + target + " HTTP/1.1\r\nHost: x\r\n" + extra +
           "Content-Length: " + std::to_string(content_length) + "\r\n\r\n";
  }

  net::io_context io_;
  std::unique_ptr<HttpListener> listener_;
  std::thread thread_;
  std::atomic<int> handled_{0};
  std::atomic<int64_t> body_bytes_{0};
};

TEST_F(BudgetFixture, ARequestAnsweredWithoutItsBodyIsAnsweredBeforeTheBodyArrives) {
  SessionOptions options;
  options.answers_without_body = [](const HttpRequest& head) { return head.path == "/refused"; };
  Start(options);
  // 10 MB declared, 10 bytes sent: the answer comes, the connection closes after it.
  tcp::socket socket = Send(Head("/refused", 10'000'000) + "0123456789");
  const std::string reply = ReadAll(socket);
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
  EXPECT_NE(reply.find("Connection: close"), std::string::npos) << reply;
  EXPECT_EQ(body_bytes_.load(), 0);
  // Any other path reads its body (the connection stays open: a half-close reads as leaving).
  tcp::socket taken = Send(Head("/taken", 5) + "hello");
  EXPECT_EQ(ReadUntil(taken, "\r\n\r\nok").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(body_bytes_.load(), 5);
}

TEST_F(BudgetFixture, BodiesPastTheBudgetAre503AtTheirHeaderAndTheBytesComeBack) {
  SessionOptions options;
  auto budget = std::make_shared<BodyBudget>(/*total=*/1000, /*per_address=*/600);
  options.body_budget = budget;
  Start(options);
  tcp::socket first = Send(Head("/a", 500) + "x");  // held: 500 of the address's 600
  // The listener runs two threads: wait for the first header's charge, or the second could be
  // charged first and the first refused in its place.
  for (int i = 0; i < 500 && budget->total_bytes() != 500; ++i) {
    usleep(10'000);
  }
  ASSERT_EQ(budget->total_bytes(), 500);
  tcp::socket second = Send(Head("/a", 200));  // 700 > 600: refused at its header
  const std::string refused = ReadAll(second);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_NE(refused.find("too many request bytes"), std::string::npos) << refused;
  EXPECT_EQ(budget->total_bytes(), 500);
  first.close();  // the held body's bytes come back when its connection goes
  for (int i = 0; i < 500 && budget->total_bytes() != 0; ++i) {
    usleep(10'000);
  }
  EXPECT_EQ(budget->total_bytes(), 0);
  tcp::socket third = Send(Head("/a", 200) + std::string(200, 'y'));
  EXPECT_EQ(ReadUntil(third, "\r\n\r\nok").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(body_bytes_.load(), 200);
  for (int i = 0; i < 500 && budget->total_bytes() != 0; ++i) {
    usleep(10'000);
  }
  EXPECT_EQ(budget->total_bytes(), 0) << "a handled request gives its bytes back";
}

TEST_F(BudgetFixture, AChunkedBodyIsChargedAsItArrives) {
  SessionOptions options;
  options.body_budget = std::make_shared<BodyBudget>(1000, 100);
  Start(options);
  tcp::socket socket =
      Send("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n32\r\n" +
           std::string(50, 'a') + "\r\n");
  net::write(socket, net::buffer("3c\r\n" + std::string(60, 'b') + "\r\n0\r\n\r\n"));
  const std::string reply = ReadAll(socket);
  EXPECT_EQ(reply.rfind("HTTP/1.1 503", 0), 0u) << reply;
  EXPECT_EQ(handled_.load(), 0);
}

TEST_F(BudgetFixture, ABodyTrickledPastItsDeadlineIs408) {
  SessionOptions options;
  options.body_timeout_s = 1;
  options.min_body_bytes_per_s = 1'000'000;  // 1 s + 1 s per MB
  Start(options);
  tcp::socket socket = Send(Head("/slow", 100) + "a");
  // One byte every 100 ms, each within the idle timeout, for 2 s: the deadline passes at ~1 s.
  for (int i = 0; i < 20; ++i) {
    usleep(100'000);
    boost::system::error_code ignored;
    net::write(socket, net::buffer("b", 1), ignored);
  }
  const std::string reply = ReadAll(socket);
  EXPECT_EQ(reply.rfind("HTTP/1.1 408", 0), 0u) << reply;
  EXPECT_NE(reply.find("request body not complete within"), std::string::npos) << reply;
  EXPECT_EQ(handled_.load(), 0);
}

TEST_F(BudgetFixture, AConnectionPastTheCapIsAnswered503) {
  SessionOptions options;
  options.max_connections = 2;
  Start(options);
  tcp::socket a = Send("");
  tcp::socket b = Send("");
  // Wait until both are counted as sessions (each answers a request once it is one).
  for (tcp::socket* s : {&a, &b}) {
    net::write(*s, net::buffer(std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n")));
    char buf[256];
    s->read_some(net::buffer(buf));
  }
  tcp::socket c = Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string reply = ReadAll(c);
  EXPECT_EQ(reply.rfind("HTTP/1.1 503", 0), 0u) << reply;
  EXPECT_NE(reply.find("open connections, its limit"), std::string::npos) << reply;
  a.close();
  b.close();
}

TEST(BodyBudgetTest, ChargesPerAddressAndInTotalAndReleasesWithTheLastHold) {
  auto budget = std::make_shared<BodyBudget>(100, 60);
  EXPECT_TRUE(budget->Charge("a", 60));
  EXPECT_FALSE(budget->Charge("a", 1));  // the address's share
  EXPECT_TRUE(budget->Charge("b", 40));
  EXPECT_FALSE(budget->Charge("c", 1));  // the total
  {
    std::shared_ptr<const void> hold = budget->Hold("a", 60);
    std::shared_ptr<const void> copy = hold;
    hold.reset();
    EXPECT_EQ(budget->total_bytes(), 100);  // a copy still holds it
  }
  EXPECT_EQ(budget->total_bytes(), 40);
  EXPECT_TRUE(budget->Charge("c", 60));
  budget->Release("b", 40);
  budget->Release("c", 60);
  EXPECT_EQ(budget->total_bytes(), 0);
}

}  // namespace
}  // namespace request_budget_test
}  // namespace tandem::http
