#include "http/static_files.h"

#include <gtest/gtest.h>

#include <optional>

namespace tandem::http {
namespace {

// Records the one response a request gets.
struct RecordingSink : ResponseSink {
  struct Response {
    int status = 0;
    std::string content_type, body;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string Header(const std::string& name) const {
      for (const auto& [k, v] : headers) {
        if (k == name) return v;
      }
      return "";
    }
  };
  std::optional<Response> response;
  void SendResponse(int s, std::string ct, std::string b) override { response = {s, ct, b, {}}; }
  void SendResponseWithHeaders(int s, std::string ct, std::string b,
                               std::vector<std::pair<std::string, std::string>> h) override {
    response = {s, ct, b, h};
  }
  void StartStream(std::string, int) override { ADD_FAILURE() << "a static file streamed"; }
  void SendStreamData(std::string) override {}
  void EndStream() override {}
  void SetOnDisconnect(std::function<void()>) override {}
  void AddResponseHeader(std::string name, std::string value) override {
    ADD_FAILURE() << "a static file added header " << name << ": " << value;
  }
  boost::asio::any_io_executor Executor() const override { return {}; }
};

HttpRequest Get(std::string path, std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpRequest r;
  r.method = "GET";
  r.path = std::move(path);
  r.headers = std::move(headers);
  return r;
}

StaticSite Site() {
  return StaticSite(
      {{"/index.html", "text/html; charset=utf-8", "<html>", "GZ-HTML", "\"e1\"", false},
       {"/assets/app-1a2b.js", "text/javascript; charset=utf-8", "js();", "", "\"e2\"", true}},
      "/index.html");
}

TEST(StaticSiteTest, ServesFilesWithTypeValidatorAndCachePolicy) {
  StaticSite site = Site();
  RecordingSink sink;
  ASSERT_TRUE(site.Serve(Get("/assets/app-1a2b.js"), sink, true));
  EXPECT_EQ(sink.response->status, 200);
  EXPECT_EQ(sink.response->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(sink.response->body, "js();");
  EXPECT_EQ(sink.response->Header("ETag"), "\"e2\"");
  EXPECT_EQ(sink.response->Header("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(sink.response->Header("Content-Encoding"), "");  // no gzip copy: as is

  RecordingSink root;
  ASSERT_TRUE(site.Serve(Get("/"), root, false));
  EXPECT_EQ(root.response->body, "<html>");
  EXPECT_EQ(root.response->Header("Cache-Control"), "no-cache");
  EXPECT_EQ(root.response->Header("Vary"), "Accept-Encoding");
}

TEST(StaticSiteTest, GzipOnlyWhenAcceptedAnd304OnAMatchingValidator) {
  StaticSite site = Site();
  RecordingSink gz;
  ASSERT_TRUE(site.Serve(Get("/index.html", {{"accept-encoding", "br, gzip;q=0.8"}}), gz, true));
  EXPECT_EQ(gz.response->body, "GZ-HTML");
  EXPECT_EQ(gz.response->Header("Content-Encoding"), "gzip");

  RecordingSink refused;
  ASSERT_TRUE(
      site.Serve(Get("/index.html", {{"accept-encoding", "gzip;q=0, deflate"}}), refused, true));
  EXPECT_EQ(refused.response->body, "<html>");

  EXPECT_EQ(gz.response->Header("ETag"), "\"e1-gzip\"");  // another representation

  RecordingSink refused_upper;
  ASSERT_TRUE(
      site.Serve(Get("/index.html", {{"accept-encoding", "gzip;Q=0"}}), refused_upper, true));
  EXPECT_EQ(refused_upper.response->body, "<html>");

  RecordingSink cached;
  ASSERT_TRUE(site.Serve(Get("/index.html", {{"if-none-match", "\"e1\""}}), cached, true));
  EXPECT_EQ(cached.response->status, 304);
  EXPECT_EQ(cached.response->body, "");
  for (const char* match : {"W/\"e1\"", "\"x\", \"e1\"", "*"}) {  // weak, a list, any
    RecordingSink sink;
    ASSERT_TRUE(site.Serve(Get("/index.html", {{"if-none-match", match}}), sink, true));
    EXPECT_EQ(sink.response->status, 304) << match;
  }
  RecordingSink other;
  ASSERT_TRUE(site.Serve(Get("/index.html", {{"if-none-match", "\"e1-gzip\""}}), other, true));
  EXPECT_EQ(other.response->status, 200);  // the gzip body's validator, asked for the plain one
}

TEST(StaticSiteTest, RoutesFallBackToTheIndexButMissingFilesAndOtherMethodsDoNot) {
  StaticSite site = Site();
  RecordingSink route;
  ASSERT_TRUE(site.Serve(Get("/deployments/3/edit"), route, true));
  EXPECT_EQ(route.response->body, "<html>");

  RecordingSink no_fallback;
  EXPECT_FALSE(site.Serve(Get("/deployments"), no_fallback, false));
  RecordingSink missing_file;
  EXPECT_FALSE(site.Serve(Get("/assets/gone-9z.js"), missing_file, true));
  HttpRequest head = Get("/index.html");
  head.method = "HEAD";  // answered like GET; the session sends no body
  RecordingSink head_sink;
  ASSERT_TRUE(site.Serve(head, head_sink, true));
  EXPECT_EQ(head_sink.response->status, 200);
  HttpRequest post = Get("/index.html");
  post.method = "POST";
  RecordingSink other_method;
  EXPECT_FALSE(site.Serve(post, other_method, true));
  EXPECT_FALSE(no_fallback.response || missing_file.response || other_method.response);
}

TEST(StaticSiteTest, ServesSaysWhichPathsAGetWouldBeAnsweredOn) {
  StaticSite site = Site();
  EXPECT_TRUE(site.Serves("/", false));
  EXPECT_TRUE(site.Serves("/assets/app-1a2b.js", false));
  EXPECT_FALSE(site.Serves("/deployments", false));
  EXPECT_TRUE(site.Serves("/deployments", true));
  EXPECT_FALSE(site.Serves("/assets/gone-9z.js", true));
}

}  // namespace
}  // namespace tandem::http
