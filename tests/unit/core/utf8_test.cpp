// IsValidUtf8 / Utf8ValidPrefix against Unicode 15 §3.9 Table 3-7's well-formed sequences.
#include "core/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace tandem {
namespace {

TEST(Utf8Test, WellFormedSequencesOfEveryLengthAreValid) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii\n"));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9"));           // é: 2 bytes
  EXPECT_TRUE(IsValidUtf8("\xE2\x82\xAC"));          // €: 3 bytes
  EXPECT_TRUE(IsValidUtf8("\xF0\x9F\x98\x80"));      // 😀: 4 bytes
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));      // U+10FFFF, the last code point
  EXPECT_TRUE(IsValidUtf8(std::string("a\0b", 3)));  // NUL is a character
}

TEST(Utf8Test, IllFormedSequencesAreInvalid) {
  EXPECT_FALSE(IsValidUtf8("\xFF\xFE"));          // bytes that never occur
  EXPECT_FALSE(IsValidUtf8("\xC0\x80"));          // overlong NUL
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // a UTF-16 surrogate (U+D800)
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));          // truncated at the end
  EXPECT_FALSE(
      IsValidUtf8("\xE2\x82"
                  "a"));              // cut by another character
  EXPECT_FALSE(IsValidUtf8("\x80"));  // a lone continuation byte
}

TEST(Utf8Test, ValidPrefixReportsHowFarASequenceGoes) {
  EXPECT_EQ(Utf8ValidPrefix("a"), std::make_pair(1, 1));
  EXPECT_EQ(Utf8ValidPrefix("\xE2\x82\xAC"), std::make_pair(3, 3));
  EXPECT_EQ(Utf8ValidPrefix("\xE2\x82"), std::make_pair(2, 3));  // incomplete, valid so far
  EXPECT_EQ(Utf8ValidPrefix("\xE0\x80"), std::make_pair(1, 3));  // second byte out of range
  EXPECT_EQ(Utf8ValidPrefix("\xFF"), std::make_pair(0, 0));
}

}  // namespace
}  // namespace tandem
