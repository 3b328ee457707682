#include "http/framing.h"

#include <gtest/gtest.h>

namespace tandem::http {
namespace {

TEST(FramingTest, ContentLengthAloneOrChunkedAloneFrameTheBody) {
  EXPECT_FALSE(CheckRequestFraming(std::nullopt, std::nullopt));
  EXPECT_FALSE(CheckRequestFraming(std::nullopt, "12"));
  EXPECT_FALSE(CheckRequestFraming("chunked", std::nullopt));
  EXPECT_FALSE(CheckRequestFraming("Chunked", std::nullopt));
  EXPECT_FALSE(CheckRequestFraming(" chunked ", std::nullopt));
}

// RFC 9112 §6.3: chunked not final, or TE with CL → 400 (and close); §6.1: a coding the server
// does not implement → 501.
TEST(FramingTest, UntrustworthyFramingIsRefusedWithTheRfcStatus) {
  struct Case {
    std::optional<std::string_view> te, cl;
    int status;
    const char* message_part;
  };
  for (const Case& c : {Case{"gzip", std::nullopt, 400, "does not end with chunked"},
                        Case{"chunked, identity", std::nullopt, 400, "does not end with chunked"},
                        Case{"xchunked", std::nullopt, 400, "does not end with chunked"},
                        Case{"", std::nullopt, 400, "does not end with chunked"},
                        Case{"xchunked", "12", 400, "Transfer-Encoding and Content-Length"},
                        Case{"chunked", "12", 400, "Transfer-Encoding and Content-Length"},
                        Case{"gzip, chunked", std::nullopt, 501, "only chunked"},
                        Case{"chunked, chunked", std::nullopt, 501, "only chunked"}}) {
    const auto error = CheckRequestFraming(c.te, c.cl);
    ASSERT_TRUE(error) << c.te.value_or("-");
    EXPECT_EQ(error->http_status, c.status) << c.te.value_or("-");
    EXPECT_NE(error->message.find(c.message_part), std::string::npos) << error->message;
  }
}

TEST(FramingTest, AbsoluteFormBecomesOriginForm) {
  EXPECT_EQ(OriginFormTarget("http://127.0.0.1:8000/v1/models?x=1"), "/v1/models?x=1");
  EXPECT_EQ(OriginFormTarget("HTTPS://example.com/health"), "/health");
  EXPECT_EQ(OriginFormTarget("http://example.com"), "/");
  EXPECT_EQ(OriginFormTarget("http://example.com?q"), "/?q");
  EXPECT_EQ(OriginFormTarget("/v1/models"), "/v1/models");
  EXPECT_EQ(OriginFormTarget("*"), "*");
  EXPECT_EQ(OriginFormTarget("httpx://a/b"), "httpx://a/b");
  EXPECT_EQ(OriginFormTarget("http://[::1]:8000/health"), "/health");
  EXPECT_EQ(OriginFormTarget("http://[::1]/health"), "/health");
  EXPECT_EQ(OriginFormTarget("http://localhost:/health"), "/health");
  EXPECT_EQ(OriginFormTarget("http://my-host.example_1/x"), "/x");
}

TEST(FramingTest, AMalformedAuthorityInAbsoluteFormIsNoTarget) {
  for (const char* target :
       {"http://[::1/health", "http:///health", "http://", "http://[]/x", "http://[::1]x/y",
        "http://[::1]:8x/x", "http://[zz::1]/x", "http://user@host/x", "http://a b/x",
        "http://host:http/x", "http://host:65536/x", "http://host:123456/x", "http://:80/x",
        "https://h[1]/x", "http://h:1:2/x"}) {
    EXPECT_EQ(OriginFormTarget(target), std::nullopt) << target;
  }
}

TEST(FramingTest, ABareLineFeedInUnparsedChunkLinesIsFound) {
  EXPECT_TRUE(HasBareLineFeed("5\nhello\n0\n\n"));
  EXPECT_TRUE(HasBareLineFeed("\n0\r\n\r\n"));
  EXPECT_TRUE(HasBareLineFeed("0\r\nX-Trailer: 1\n\r\n"));
  EXPECT_FALSE(HasBareLineFeed("5\r\nhel"));
  EXPECT_FALSE(HasBareLineFeed("\r\n0\r\n\r"));
  EXPECT_FALSE(HasBareLineFeed(""));
}

TEST(FramingTest, ExpectContinueIsRecognisedInAnyCase) {
  EXPECT_TRUE(ExpectsContinue("100-continue"));
  EXPECT_TRUE(ExpectsContinue(" 100-Continue "));
  EXPECT_FALSE(ExpectsContinue(""));
  EXPECT_FALSE(ExpectsContinue("200-ok"));
}

}  // namespace
}  // namespace tandem::http
