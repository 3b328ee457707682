#include "server/auth.h"

#include <gtest/gtest.h>

namespace tandem::server {
namespace {

TEST(ApiKeyAuthTest, NoKeysMeansEveryRequestPasses) {
  ApiKeyAuth auth({});
  EXPECT_FALSE(auth.enabled());
  EXPECT_TRUE(auth.Check(""));
}

TEST(ApiKeyAuthTest, AcceptsOnlyBearerWithAConfiguredKey) {
  ApiKeyAuth auth({"secret-1", "secret-2"});
  EXPECT_TRUE(auth.enabled());
  EXPECT_TRUE(auth.Check("Bearer secret-1"));
  EXPECT_TRUE(auth.Check("Bearer secret-2"));
  EXPECT_FALSE(auth.Check("Bearer secret-3"));
  EXPECT_FALSE(auth.Check("Bearer secret-"));
  EXPECT_FALSE(auth.Check("secret-1"));
  EXPECT_FALSE(auth.Check("Basic secret-1"));
  EXPECT_FALSE(auth.Check(""));
}

TEST(ApiKeyAuthTest, XApiKeyValueIsComparedLikeTheBearerKey) {
  ApiKeyAuth auth({"secret-1"});
  EXPECT_TRUE(auth.CheckKey("secret-1"));
  EXPECT_FALSE(auth.CheckKey("secret-2"));
  EXPECT_FALSE(auth.CheckKey("Bearer secret-1"));
  EXPECT_FALSE(auth.CheckKey(""));
  EXPECT_TRUE(ApiKeyAuth({}).CheckKey(""));
}

}  // namespace
}  // namespace tandem::server
