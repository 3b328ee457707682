#include "text/bounded_json.h"

#include <gtest/gtest.h>

#include <string>

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

TEST(BoundedJsonTest, KeepsKeyOrderAndValues) {
  const auto out = ParseBoundedOrderedOrDiscarded(R"({"z": 1, "a": [true, null, "x", 2.5]})");
  ASSERT_FALSE(out.is_discarded());
  EXPECT_EQ(out.dump(), R"({"z":1,"a":[true,null,"x",2.5]})");
}

}  // namespace
}  // namespace tandem::text
