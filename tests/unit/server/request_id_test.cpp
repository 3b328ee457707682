#include "server/request_id.h"

#include <gtest/gtest.h>

#include <string>

namespace tandem::server {
namespace {

TEST(RequestIdTest, AnIdUpToTheLimitOfPrintableBytesIsTaken) {
  EXPECT_EQ(CheckRequestId("", "request_id"), std::nullopt);
  EXPECT_EQ(CheckRequestId("my-id 42/é", "request_id"), std::nullopt);
  EXPECT_EQ(CheckRequestId(std::string(kMaxRequestIdBytes, 'a'), "request_id"), std::nullopt);
}

TEST(RequestIdTest, AnIdPastTheLimitIsRefusedWithItsLength) {
  const auto error = CheckRequestId(std::string(1 << 20, 'a'), "request_id");
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(*error, "request_id is 1048576 bytes long; the limit is 512 bytes");
  EXPECT_TRUE(CheckRequestId(std::string(kMaxRequestIdBytes + 1, 'a'), "x").has_value());
}

TEST(RequestIdTest, AControlCharacterIsRefusedWithItsOffset) {
  const auto error = CheckRequestId("abc\ndef", "the X-Request-Id header");
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(*error,
            "the X-Request-Id header holds the control character 0x0a at byte 3; use "
            "printable characters");
  EXPECT_TRUE(CheckRequestId(std::string("a\0b", 3), "x").has_value());
  EXPECT_TRUE(CheckRequestId("a\x7f", "x").has_value());
  EXPECT_TRUE(CheckRequestId("\t", "x").has_value());
}

}  // namespace
}  // namespace tandem::server
