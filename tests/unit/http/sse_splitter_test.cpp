#include "http/sse_splitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tandem::http {
namespace {

TEST(SseSplitterTest, EventsComeOutWholeWhateverThePieces) {
  const std::string stream = "data: {\"a\": 1}\n\ndata: [DONE]\n\n: comment\nx\n\npartial";
  for (size_t piece : {1u, 2u, 5u, 1000u}) {
    SseSplitter splitter;
    std::vector<std::string> events;
    for (size_t i = 0; i < stream.size(); i += piece) {
      splitter.Feed(std::string_view(stream).substr(i, piece),
                    [&](std::string_view e) { events.emplace_back(e); });
    }
    EXPECT_EQ(events, (std::vector<std::string>{"data: {\"a\": 1}\n\n", "data: [DONE]\n\n",
                                                ": comment\nx\n\n"}))
        << "pieces of " << piece;
    EXPECT_EQ(splitter.Rest(), "partial");
    EXPECT_EQ(splitter.Rest(), "");
  }
}

}  // namespace
}  // namespace tandem::http
