// The manager's defences of its cookie-authenticated console (issue 31, item 4): a write with
// the session cookie must come from the manager's own origin with a JSON body, logout is POST
// only, and wrong passwords are throttled per user and per address.
#include <gtest/gtest.h>

#include <string>

#include "cluster/manager/login_limiter.h"
#include "http/client.h"
#include "manager_test_util.h"

namespace tandem::cluster::manager {
namespace manager_csrf_test {
namespace {

using testing::ManagerHarness;

// One request with exactly these headers.
http::ClientResponse Raw(ManagerHarness& h, const std::string& method, const std::string& target,
                         const std::string& body, http::HeaderList headers) {
  http::ClientRequest request;
  request.method = method;
  request.url = h.Url(target);
  request.body = body;
  request.headers = std::move(headers);
  auto response = http::Fetch(request);
  EXPECT_TRUE(response.ok()) << response.status().ToString();
  return response.ok() ? *response : http::ClientResponse{};
}

TEST(ManagerCsrfTest, ACookieWriteFromAnotherSiteIsRefusedAndFromTheConsoleTaken) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string cookie = h.AdminSession().substr(7);
  const std::string body = R"({"username": "eve", "password": "pw-eve-123", "is_admin": true})";
  const http::HeaderList json_type = {{"Content-Type", "application/json"}};
  auto with = [&](http::HeaderList extra) {
    http::HeaderList headers = {{"Cookie", cookie}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return headers;
  };
  // Another site's page: its Origin, or (no Origin) its Referer; or neither.
  auto other = Raw(h, "POST", "/v2/users", body,
                   with({{"Content-Type", "application/json"}, {"Origin", "http://evil.test"}}));
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_NE(other.body.find("cross-site write refused"), std::string::npos) << other.body;
  auto referer =
      Raw(h, "POST", "/v2/users", body,
          with({{"Content-Type", "application/json"}, {"Referer", "http://evil.test/page.html"}}));
  EXPECT_EQ(referer.status, 403) << referer.body;
  auto none = Raw(h, "POST", "/v2/users", body, with({{"Content-Type", "application/json"}}));
  EXPECT_EQ(none.status, 403) << none.body;
  // A form or text/plain body (what a cross-site form can send without a preflight).
  auto form = Raw(h, "POST", "/v2/users", body,
                  with({{"Content-Type", "text/plain"}, {"Origin", h.Url("")}}));
  EXPECT_EQ(form.status, 415) << form.body;
  const auto users = h.Call("GET", "/v2/users", "", "cookie:" + cookie);
  ASSERT_EQ(users.status, 200);
  EXPECT_EQ(users.raw.find("\"eve\""), std::string::npos) << "nothing was created";
  // The console's own page (what a browser sends), and a key instead of the cookie.
  auto console = Raw(h, "POST", "/v2/users", body,
                     with({{"Content-Type", "application/json"}, {"Origin", h.Url("")}}));
  EXPECT_EQ(console.status, 201) << console.body;
  auto same_page = Raw(h, "DELETE", "/v2/users/999", "", with({{"Referer", h.Url("/users")}}));
  EXPECT_EQ(same_page.status, 404) << same_page.body;  // past the check: no such user
}

TEST(ManagerCsrfTest, LogoutIsPostOnly) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const std::string admin = h.AdminSession();
  auto get = h.Call("GET", "/auth/logout", "", admin);
  EXPECT_EQ(get.status, 405) << get.raw;
  EXPECT_EQ(h.Call("GET", "/v2/users/me", "", admin).status, 200);  // still logged in
  EXPECT_EQ(h.Call("POST", "/auth/logout", "", admin).status, 200);
  EXPECT_EQ(h.Call("GET", "/v2/users/me", "", admin).status, 401);
}

TEST(ManagerCsrfTest, WrongPasswordsAreThrottledWith429AndRetryAfter) {
  ManagerHarness h;
  ASSERT_TRUE(h.start_status().ok());
  const http::HeaderList form = {{"Content-Type", "application/x-www-form-urlencoded"}};
  for (int i = 0; i < 10; ++i) {
    auto wrong = Raw(h, "POST", "/auth/login", "username=admin&password=wrong", form);
    ASSERT_EQ(wrong.status, 401) << i << ": " << wrong.body;
  }
  // The 11th is refused before its password is checked, even the right one.
  auto throttled = Raw(h, "POST", "/auth/login", "username=admin&password=admin-password", form);
  EXPECT_EQ(throttled.status, 429) << throttled.body;
  const int retry_after = std::stoi(std::string(throttled.Header("retry-after")));
  EXPECT_GE(retry_after, 1);
  EXPECT_LE(retry_after, 60);
}

TEST(LoginLimiterTest, CountsPerUserAndAddressAndPerAddressOverASlidingWindow) {
  LoginLimiter limiter(/*max_failures=*/3, /*window_s=*/60);
  for (int i = 0; i < 3; ++i) {
    limiter.Failed("alice", "10.0.0.1", 100.0 + i);
  }
  EXPECT_EQ(limiter.RetryAfterS("alice", "10.0.0.1", 103), 57);
  EXPECT_EQ(limiter.RetryAfterS("bob", "10.0.0.1", 103), 57);   // the address, any user
  EXPECT_EQ(limiter.RetryAfterS("alice", "10.0.0.9", 103), 0);  // not locked out elsewhere
  EXPECT_EQ(limiter.RetryAfterS("alice", "10.0.0.1", 159.5), 1);
  EXPECT_EQ(limiter.RetryAfterS("alice", "10.0.0.1", 160), 0);  // the first left the window
  // Many addresses guessing one user's password: each address has its own count.
  for (int a = 0; a < 3; ++a) {
    limiter.Failed("carol", "10.0.1." + std::to_string(a), 200);
  }
  EXPECT_EQ(limiter.RetryAfterS("carol", "10.0.1.7", 201), 0);
  for (int i = 0; i < 3; ++i) {
    limiter.Failed("carol", "10.0.2.1", 200);
  }
  EXPECT_GT(limiter.RetryAfterS("carol", "10.0.2.1", 201), 0);
  limiter.Succeeded("carol", "10.0.2.1");  // forgets the pair, not the address
  EXPECT_GT(limiter.RetryAfterS("carol", "10.0.2.1", 201), 0);
}

}  // namespace
}  // namespace manager_csrf_test
}  // namespace tandem::cluster::manager
