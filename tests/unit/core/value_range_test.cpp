// ParseIntInRange / ParseFiniteInRange: the range checks of every number flag, with messages a
// person reads (no 300-digit bound) and NaN / inf refused (a comparison alone lets NaN through).
#include "core/value_range.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace tandem {
namespace {

std::string IntError(const std::string& text, int64_t min, int64_t max) {
  const auto parsed = ParseIntInRange(text, min, max);
  EXPECT_FALSE(parsed.ok()) << text;
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  return parsed.ok() ? "" : parsed.status().message();
}

std::string NumberError(const std::string& text, double min, double max, bool min_exclusive) {
  const auto parsed = ParseFiniteInRange(text, min, max, min_exclusive);
  EXPECT_FALSE(parsed.ok()) << text;
  return parsed.ok() ? "" : parsed.status().message();
}

TEST(ValueRangeTest, IntegersInsideTheRangeParseIncludingBothBounds) {
  EXPECT_EQ(ParseIntInRange("1", 1, 65536).value(), 1);
  EXPECT_EQ(ParseIntInRange("65536", 1, 65536).value(), 65536);
  EXPECT_EQ(ParseIntInRange(" +42 ", 1, 65536).value(), 42);
  EXPECT_EQ(ParseIntInRange("-1", -1, 10).value(), -1);
  EXPECT_EQ(ParseIntInRange("-9223372036854775808", std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::max())
                .value(),
            std::numeric_limits<int64_t>::min());
}

TEST(ValueRangeTest, IntegerOutsideTheRangeNamesTheRangeAndTheValue) {
  EXPECT_EQ(IntError("0", 1, 65536), "must be an integer in [1, 65536], got '0'");
  EXPECT_EQ(IntError("100000", 0, 1024), "must be an integer in [0, 1024], got '100000'");
}

TEST(ValueRangeTest, TypeLimitsAsBoundsReadAsPowersOfTwo) {
  EXPECT_EQ(IntError("-1", 0, std::numeric_limits<int32_t>::max()),
            "must be an integer in [0, 2^31-1], got '-1'");
  EXPECT_EQ(IntRangeText(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()),
            "[-2^63, 2^63-1]");
  EXPECT_EQ(IntRangeText(std::numeric_limits<int32_t>::min(), 7), "[-2^31, 7]");
}

TEST(ValueRangeTest, BeyondInt64AndNonIntegersAreRefusedWithTheSameMessage) {
  for (const std::string text :
       {"100000000000000000000000000000", "1e3", "2.5", "0x10", "", " ", "12abc", "nan"}) {
    EXPECT_EQ(IntError(text, 1, 4096), "must be an integer in [1, 4096], got '" + text + "'");
  }
}

TEST(ValueRangeTest, FiniteNumbersInsideTheRangeParse) {
  EXPECT_DOUBLE_EQ(ParseFiniteInRange("0.9", 0.01, 1.0).value(), 0.9);
  EXPECT_DOUBLE_EQ(ParseFiniteInRange("1", 0.01, 1.0).value(), 1.0);
  EXPECT_DOUBLE_EQ(ParseFiniteInRange("1e-2", 0.01, 1.0).value(), 0.01);
  EXPECT_DOUBLE_EQ(ParseFiniteInRange("600", 0, 86400, true).value(), 600.0);
}

TEST(ValueRangeTest, NanAndInfinitiesAreRefusedThoughTheyPassAComparisonBasedRange) {
  for (const std::string text : {"nan", "NaN", "-nan", "inf", "-inf", "infinity"}) {
    EXPECT_EQ(NumberError(text, 0.01, 1.0, false),
              "must be a finite number in [0.01, 1], got '" + text + "'");
  }
}

TEST(ValueRangeTest, ExclusiveLowerBoundRefusesTheBoundItself) {
  EXPECT_EQ(NumberError("0", 0, 86400, true), "must be a finite number in (0, 86400], got '0'");
  EXPECT_EQ(NumberError("86400.5", 0, 86400, true),
            "must be a finite number in (0, 86400], got '86400.5'");
  EXPECT_EQ(NumberError("1e400", 0, 86400, true),
            "must be a finite number in (0, 86400], got "
            "'1e400'");
  EXPECT_EQ(NumberError("fast", 0.1, 86400, false),
            "must be a finite number in [0.1, 86400], got 'fast'");
}

}  // namespace
}  // namespace tandem
