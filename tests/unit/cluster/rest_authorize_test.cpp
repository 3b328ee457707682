// RestApi::Authorize: who may use which /v2 route, decided from the request head alone, so that
// the manager refuses an Expect: 100-continue body it would not read (issue 31) and Handle
// refuses with the same words.
#include <gtest/gtest.h>

#include <string>

#include "cluster/manager/rest_api.h"

namespace tandem::cluster::manager {
namespace rest_authorize_test {
namespace {

Principal Admin() {
  Principal p;
  p.kind = Principal::Kind::kUser;
  p.is_admin = true;
  return p;
}

Principal User() {
  Principal p;
  p.kind = Principal::Kind::kUser;
  return p;
}

Principal Key(const std::string& scope) {
  Principal p;
  p.kind = Principal::Kind::kApiKey;
  p.is_admin = true;  // an admin's key: the scope still decides
  p.scopes = {scope};
  return p;
}

Principal Worker() {
  Principal p;
  p.kind = Principal::Kind::kWorker;
  p.scopes = {"worker"};
  return p;
}

Principal Registration() {
  Principal p;
  p.kind = Principal::Kind::kRegistration;
  return p;
}

// The refusal's message after "not allowed: ", or "" when allowed.
std::string Refusal(const std::string& method, const std::string& path, const Principal& who) {
  const Status s = RestApi::Authorize(method, path, who);
  if (s.ok()) {
    return "";
  }
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.message();
  const std::string& message = s.message();
  const std::string prefix = "not allowed: ";
  EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
  return message.substr(prefix.size());
}

TEST(RestAuthorizeTest, AnAdminMayUseEveryRoute) {
  for (const char* path : {"/v2/users", "/v2/models/3", "/v2/workers/1/heartbeat", "/v2/usage"}) {
    EXPECT_EQ(Refusal("POST", path, Admin()), "") << path;
    EXPECT_EQ(Refusal("GET", path, Admin()), "") << path;
  }
}

TEST(RestAuthorizeTest, AUserReadsModelsAndKeepsOwnKeysOnly) {
  EXPECT_EQ(Refusal("GET", "/v2/models", User()), "");
  EXPECT_EQ(Refusal("HEAD", "/v2/models", User()), "");
  EXPECT_EQ(Refusal("POST", "/v2/api-keys", User()), "");
  EXPECT_EQ(Refusal("GET", "/v2/users/me", User()), "");
  EXPECT_EQ(Refusal("POST", "/v2/users", User()), "POST /v2/users needs an admin");
  EXPECT_EQ(Refusal("PUT", "/v2/models/3", User()), "PUT /v2/models/3 needs an admin");
  EXPECT_EQ(Refusal("GET", "/v2/workers", User()), "GET /v2/workers needs an admin");
}

TEST(RestAuthorizeTest, AKeyNeedsScopeManagement) {
  EXPECT_EQ(Refusal("GET", "/v2/models", Key("management")), "");
  EXPECT_EQ(Refusal("POST", "/v2/users", Key("*")), "");
  EXPECT_EQ(Refusal("GET", "/v2/models", Key("inference")),
            "this API key's scope does not include management");
}

TEST(RestAuthorizeTest, WorkersAndTheRegistrationTokenHaveTheirRoutesOnly) {
  EXPECT_EQ(Refusal("GET", "/v2/model-instances", Worker()), "");
  EXPECT_EQ(Refusal("POST", "/v2/workers/4/heartbeat", Worker()), "");
  EXPECT_EQ(Refusal("POST", "/v2/model-instances/2/status", Worker()), "");
  EXPECT_EQ(Refusal("DELETE", "/v2/models/1", Worker()), "a worker key cannot DELETE /v2/models/1");
  EXPECT_EQ(Refusal("GET", "/v2/usage", Worker()), "workers do not read usage");
  EXPECT_EQ(Refusal("POST", "/v2/workers", Registration()), "");
  EXPECT_EQ(Refusal("GET", "/v2/workers", Registration()),
            "the registration token only registers workers");
}

TEST(RestAuthorizeTest, RoutesThatDoNotExistAreLeftToTheNotFound) {
  for (const char* path : {"/v2", "/v2/nothing", "/v2/models/abc", "/v2/models/1/a/b"}) {
    EXPECT_EQ(Refusal("POST", path, User()), "") << path;
  }
}

}  // namespace
}  // namespace rest_authorize_test
}  // namespace tandem::cluster::manager
