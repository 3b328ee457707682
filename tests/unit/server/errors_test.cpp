#include "server/errors.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tandem::server {
namespace {

TEST(ErrorsTest, BodyHasOpenAiShapeWithHttpCodeAndParam) {
  const auto body = nlohmann::json::parse(ErrorBody(BadParam("top_p", "bad top_p")));
  EXPECT_EQ(body["error"]["message"], "bad top_p");
  EXPECT_EQ(body["error"]["type"], "BadRequestError");
  EXPECT_EQ(body["error"]["param"], "top_p");
  EXPECT_EQ(body["error"]["code"], 400);
}

TEST(ErrorsTest, EmptyParamIsNullAndStatusCodesMap) {
  const auto body = nlohmann::json::parse(ErrorBody({NotFound("no such model"), ""}));
  EXPECT_TRUE(body["error"]["param"].is_null());
  EXPECT_EQ(body["error"]["type"], "NotFoundError");
  EXPECT_EQ(body["error"]["code"], 404);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusFor(StatusCode::kMethodNotAllowed), 405);
  EXPECT_EQ(HttpStatusFor(StatusCode::kPayloadTooLarge), 413);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(StatusCode::kInternal), 500);
}

}  // namespace
}  // namespace tandem::server
