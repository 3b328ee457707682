#include "text/bounded_json.h"

#include <gtest/gtest.h>

#include <cstdint>
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
    if (v->empty()) {
      break;
    }
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
  for (int i = 0; i < 50000; ++i) {
    text += "{\"a\":[";
  }
  for (int i = 0; i < 50000; ++i) {
    text += "]}";
  }
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

// {"k0":0,"k1":1,...} with n keys.
std::string ManyKeys(int64_t n) {
  std::string text = "{";
  for (int64_t i = 0; i < n; ++i) {
    text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  }
  return text + "}";
}

TEST(BoundedJsonTest, AnObjectOfManyKeysKeepsItsOrderInBothKinds) {
  // Built by appending (nlohmann's own builder searched every key so far: 100k keys took 14 s).
  const std::string text = ManyKeys(100'000);
  nlohmann::ordered_json ordered;
  nlohmann::json sorted;
  BoundedJsonError error;
  ASSERT_TRUE(ParseBoundedJson(text, kMaxJsonDepth, &ordered, &error)) << error.message;
  ASSERT_TRUE(ParseBoundedJson(text, kMaxJsonDepth, &sorted, &error)) << error.message;
  ASSERT_EQ(ordered.size(), 100'000u);
  ASSERT_EQ(sorted.size(), 100'000u);
  EXPECT_EQ(ordered.begin().key(), "k0");
  EXPECT_EQ((--ordered.end()).key(), "k99999");
  EXPECT_EQ(ordered["k54321"], 54321);
  EXPECT_EQ(sorted["k54321"], 54321);
  EXPECT_EQ(ordered.dump(), text);
}

TEST(BoundedJsonTest, ARepeatedKeyKeepsItsFirstPlaceAndItsLastValue) {
  // As nlohmann's parser (RFC 8259 leaves it open): small objects and indexed ones alike.
  for (const int64_t before : {2, 40}) {
    std::string text = ManyKeys(before);
    text.pop_back();
    text += R"(,"k1":{"x":[1]},"z":true,"k1":"last"})";
    const auto out = ParseBoundedOrderedOrDiscarded(text);
    ASSERT_FALSE(out.is_discarded()) << text;
    EXPECT_EQ(out.size(), static_cast<size_t>(before + 1));
    EXPECT_EQ((++out.begin()).key(), "k1");
    EXPECT_EQ(out["k1"], "last");
    EXPECT_EQ((--out.end()).key(), "z");
  }
}

TEST(BoundedJsonTest, AnObjectPastTheKeyLimitIsRefusedNamingIt) {
  nlohmann::ordered_json out;
  BoundedJsonError error;
  EXPECT_TRUE(ParseBoundedJson(ManyKeys(kMaxJsonObjectKeys), kMaxJsonDepth, &out, &error));
  EXPECT_EQ(out.size(), static_cast<size_t>(kMaxJsonObjectKeys));
  ASSERT_FALSE(ParseBoundedJson(ManyKeys(kMaxJsonObjectKeys + 1), kMaxJsonDepth, &out, &error));
  EXPECT_TRUE(error.too_large);
  EXPECT_FALSE(error.too_deep);
  EXPECT_NE(error.message.find("more than 262144 keys"), std::string::npos) << error.message;
  EXPECT_TRUE(out.is_null());
}

TEST(BoundedJsonTest, ATextPastTheValueLimitIsRefusedNamingIt) {
  // [0,0,...]: the array counts one value, each element one more.
  std::string text = "[0";
  for (int64_t i = 1; i < kMaxJsonValues - 1; ++i) {
    text += ",0";
  }
  nlohmann::json out;
  BoundedJsonError error;
  EXPECT_TRUE(ParseBoundedJson(text + "]", kMaxJsonDepth, &out, &error)) << error.message;
  EXPECT_EQ(out.size(), static_cast<size_t>(kMaxJsonValues - 1));
  ASSERT_FALSE(ParseBoundedJson(text + ",0]", kMaxJsonDepth, &out, &error));
  EXPECT_TRUE(error.too_large);
  EXPECT_NE(error.message.find("more than 4194304 JSON values"), std::string::npos)
      << error.message;
}

}  // namespace
}  // namespace tandem::text
