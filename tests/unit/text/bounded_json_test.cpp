#include "text/bounded_json.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace tandem::text {
namespace {

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(BoundedJsonTest, NestingUpToTheLimitParses) {
  nlohmann::json out;
  BoundedJsonError error;
  ASSERT_TRUE(ParseBoundedJson(Nested(kMaxJsonDepth), kMaxJsonDepth, &out, &error))
      << error.message;
  int depth = 0;
  for (const nlohmann::json* v = &out; v->is_array(); v = v->empty() ? nullptr : &(*v)[0]) {
    ++depth;
    if (v->empty()) break;
  }
  EXPECT_EQ(depth, kMaxJsonDepth);
}

TEST(BoundedJsonTest, OneLevelPastTheLimitIsRefusedNamingIt) {
  nlohmann::ordered_json out;
  BoundedJsonError error;
  EXPECT_FALSE(ParseBoundedJson(Nested(kMaxJsonDepth + 1), kMaxJsonDepth, &out, &error));
  EXPECT_TRUE(error.too_deep);
  EXPECT_NE(error.message.find("deeper than 128 levels"), std::string::npos) << error.message;
  EXPECT_TRUE(out.is_null());
}

TEST(BoundedJsonTest, AHundredThousandLevelsAreRefusedWithoutRecursing) {
  // Objects and arrays mixed, as in a request: {"a":[{"a":[...]}]}.
  std::string text;
  for (int i = 0; i < 50000; ++i) text += "{\"a\":[";
  for (int i = 0; i < 50000; ++i) text += "]}";
  nlohmann::json out;
  BoundedJsonError error;
  EXPECT_FALSE(ParseBoundedJson(text, kMaxJsonDepth, &out, &error));
  EXPECT_TRUE(error.too_deep);
  EXPECT_TRUE(ParseBoundedOrderedOrDiscarded(text).is_discarded());
}

TEST(BoundedJsonTest, MalformedTextIsAnErrorThatIsNotTooDeep) {
  for (const char* text : {"{\"a\": }", "[1, 2", "1e400", "{} trailing", "\"\xff\"", ""}) {
    nlohmann::json out;
    BoundedJsonError error;
    EXPECT_FALSE(ParseBoundedJson(text, kMaxJsonDepth, &out, &error)) << text;
    EXPECT_FALSE(error.too_deep) << text;
    EXPECT_FALSE(error.message.empty()) << text;
  }
}

// nlohmann's lexer ends the input at a NUL byte: without the check, the text after it (another
// request, a smuggled field) would be dropped silently and the prefix parsed as the whole body.
TEST(BoundedJsonTest, ARawNulByteIsAnErrorNamingItsOffset) {
  using namespace std::string_view_literals;
  for (const std::string_view text : {"{\"a\": 1}\0{\"b\": 2}"sv, "{\"a\": \"x\0y\"}"sv, "\0"sv}) {
    nlohmann::json out;
    BoundedJsonError error;
    EXPECT_FALSE(ParseBoundedJson(text, kMaxJsonDepth, &out, &error));
    EXPECT_NE(error.message.find("NUL byte at offset " + std::to_string(text.find('\0'))),
              std::string::npos)
        << error.message;
    EXPECT_TRUE(out.is_null());
  }
  // Escaped, it is a character like any other.
  nlohmann::json out;
  BoundedJsonError error;
  ASSERT_TRUE(ParseBoundedJson(R"({"a": "x\u0000y"})", kMaxJsonDepth, &out, &error));
  EXPECT_EQ(out["a"].get<std::string>(), std::string("x\0y", 3));
}

TEST(BoundedJsonTest, KeepsKeyOrderAndValues) {
  const auto out = ParseBoundedOrderedOrDiscarded(R"({"z": 1, "a": [true, null, "x", 2.5]})");
  ASSERT_FALSE(out.is_discarded());
  EXPECT_EQ(out.dump(), R"({"z":1,"a":[true,null,"x",2.5]})");
}

}  // namespace
}  // namespace tandem::text
