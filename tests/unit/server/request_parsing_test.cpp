#include "server/openai/request_parsing.h"

#include <gtest/gtest.h>

#include <memory>

#include "server/openai/chat_completions_types.h"
#include "server/openai/completions_types.h"
#include "testing.h"

namespace tandem::server::openai {
namespace {

using nlohmann::json;

ServerContext MakeContext() {
  ServerContext context;
  context.config.served_model_names = {"tiny", "alias"};
  context.config.max_model_len = 64;
  context.tokenizer = std::make_shared<testing::FakeTokenizer>();
  return context;
}

struct BadCase {
  const char* body;
  const char* param;
  int http_status;
};

class CompletionRejectTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(CompletionRejectTest, RejectsWithStatusAndParam) {
  const ServerContext context = MakeContext();
  const BadCase& c = GetParam();
  auto result = ParseCompletionRequest(json::parse(c.body), context);
  ASSERT_FALSE(result.ok()) << c.body;
  EXPECT_EQ(HttpStatusFor(result.error().status.code()), c.http_status) << c.body;
  EXPECT_EQ(result.error().param, c.param) << c.body << ": " << result.error().status.message();
}

INSTANTIATE_TEST_SUITE_P(
    BadFields, CompletionRejectTest,
    ::testing::Values(
        BadCase{R"({"model":"nope","prompt":"hi"})", "model", 404},
        BadCase{R"({"model":3,"prompt":"hi"})", "model", 400},
        BadCase{R"({"prompt":"hi","temperature":-0.1})", "temperature", 400},
        BadCase{R"({"prompt":"hi","temperature":"hot"})", "temperature", 400},
        BadCase{R"({"prompt":"hi","top_p":0})", "top_p", 400},
        BadCase{R"({"prompt":"hi","top_p":1.5})", "top_p", 400},
        BadCase{R"({"prompt":"hi","top_k":-2})", "top_k", 400},
        BadCase{R"({"prompt":"hi","min_p":2})", "min_p", 400},
        BadCase{R"({"prompt":"hi","presence_penalty":3})", "presence_penalty", 400},
        BadCase{R"({"prompt":"hi","frequency_penalty":-3})", "frequency_penalty", 400},
        BadCase{R"({"prompt":"hi","repetition_penalty":0})", "repetition_penalty", 400},
        BadCase{R"({"prompt":"hi","n":0})", "n", 400},
        BadCase{R"({"prompt":"hi","max_tokens":0})", "max_tokens", 400},
        BadCase{R"({"prompt":"hi","max_tokens":1.5})", "max_tokens", 400},
        BadCase{R"({"prompt":"hi","logprobs":21})", "logprobs", 400},
        BadCase{R"({"prompt":"hi","logprobs":-1})", "logprobs", 400},
        BadCase{R"({"prompt":"hi","stop":5})", "stop", 400},
        BadCase{R"({"prompt":"hi","stop_token_ids":["a"]})", "stop_token_ids", 400},
        BadCase{R"({"prompt":"hi","stream":"yes"})", "stream", 400},
        BadCase{R"({"prompt":"hi","stream_options":{"include_usage":true}})", "stream_options",
                400},
        BadCase{R"({"prompt":"hi","seed":"x"})", "seed", 400},
        BadCase{R"({"prompt":"hi","min_tokens":-1})", "min_tokens", 400},
        BadCase{R"({"prompt":""})", "prompt", 400}, BadCase{R"({})", "prompt", 400},
        BadCase{R"({"prompt":[1, 999]})", "prompt", 400},
        BadCase{R"({"prompt":["a",[1]]})", "prompt", 400},  // mixed (lists of prompts are served)
        BadCase{R"({"prompt":[[]]})", "prompt", 400},
        BadCase{R"({"prompt":"hi","request_id":"a\nb"})", "request_id", 400},
        BadCase{R"({"prompt":"hi","request_id":7})", "request_id", 400},
        BadCase{R"({"prompt":"hi","max_tokens":63})", "max_tokens", 400}));

TEST(RequestParsingTest, ContextLengthMessageHasBothNumbers) {
  const ServerContext context = MakeContext();
  auto result =
      ParseCompletionRequest(json::parse(R"({"prompt":"hello","max_tokens":60})"), context);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().status.message(),
            "This model's maximum context length is 64 tokens. However, you requested 65 tokens "
            "(5 in the messages, 60 in the completion). Please reduce the length of the messages "
            "or completion.");
}

TEST(RequestParsingTest, MapsSamplingFieldsAndDefaults) {
  ServerContext context = MakeContext();
  context.config.default_temperature = 0.6f;
  auto result = ParseCompletionRequest(
      json::parse(R"({"model":"alias","prompt":[104,105],"top_k":5,"seed":7,"n":2,
                      "stop":"x","stop_token_ids":[3],"ignore_eos":true,"unknown_field":1})"),
      context);
  ASSERT_TRUE(result.ok()) << result.error().status.message();
  const CompletionRequest& r = result.value();
  EXPECT_EQ(r.common.model, "alias");
  EXPECT_EQ(r.prompts, (std::vector<std::vector<int32_t>>{{104, 105}}));
  EXPECT_FLOAT_EQ(r.common.sampling.temperature, 0.6f);
  EXPECT_EQ(r.common.sampling.top_k, 5);
  EXPECT_TRUE(r.common.sampling.has_seed);
  EXPECT_EQ(r.common.sampling.seed, 7u);
  EXPECT_EQ(r.common.sampling.max_tokens, 16);
  EXPECT_EQ(r.common.n, 2);
  EXPECT_EQ(r.common.stop, (std::vector<std::string>{"x"}));
  EXPECT_EQ(r.common.sampling.stop_token_ids, (std::vector<int32_t>{3}));
  EXPECT_TRUE(r.common.sampling.ignore_eos);
}

TEST(RequestParsingTest, MalformedJsonAndInvalidUtf8AreRejected) {
  EXPECT_FALSE(ParseOrderedJsonObject("{\"prompt\": ").ok());
  EXPECT_FALSE(ParseOrderedJsonObject("{\"prompt\": \"\xff\xfe\"}").ok());
  EXPECT_FALSE(ParseOrderedJsonObject("[1,2]").ok());
  EXPECT_TRUE(ParseOrderedJsonObject("{\"prompt\": \"h\xc3\xa9\"}").ok());
}

TEST(RequestParsingTest, ChatTopLogprobsNeedsLogprobsAndMessagesAreRequired) {
  const ServerContext context = MakeContext();
  auto top = ParseChatCompletionRequest(
      json::parse(R"({"messages":[{"role":"user","content":"hi"}],"top_logprobs":2})"), context);
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.error().param, "top_logprobs");
  auto none = ParseChatCompletionRequest(json::parse(R"({"messages":[]})"), context);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().param, "messages");
  auto ok = ParseChatCompletionRequest(
      json::parse(R"({"messages":[{"role":"user","content":[{"type":"text","text":"a"},
                     {"type":"text","text":"b"}]}],"logprobs":true,"top_logprobs":3,
                     "max_completion_tokens":5})"),
      context);
  ASSERT_TRUE(ok.ok()) << ok.error().status.message();
  EXPECT_EQ(ok.value().input.messages[0]["content"], "a\nb");
  EXPECT_EQ(ok.value().common.sampling.logprobs, 3);
  EXPECT_EQ(ok.value().common.sampling.max_tokens, 5);
}

TEST(RequestParsingTest, ATypeThatIsNotAStringIsA400NamingTheFieldNotAThrow) {
  // Found by the openai_request fuzzer: nlohmann's value("type", "function") threw type_error
  // 302 on {"type": {...}} (the server's last-resort catch answered; the parser must).
  const ServerContext context = MakeContext();
  const char* tool = R"({"messages": [{"role": "user", "content": "weather?"}],
      "tools": [{"type": {"name": "get_weather"}, "function": {"name": "get_weather"}}],
      "tool_choice": "required"})";
  auto tools = ParseChatCompletionRequest(json::parse(tool), context);
  ASSERT_FALSE(tools.ok());
  EXPECT_EQ(tools.error().param, "tools");
  EXPECT_NE(tools.error().status.message().find("tools[0]"), std::string::npos);
  const char* part = R"({"messages": [{"role": "user", "content": [{"type": 7, "text": "a"}]}]})";
  auto parts = ParseChatCompletionRequest(json::parse(part), context);
  ASSERT_FALSE(parts.ok());
  EXPECT_EQ(parts.error().param, "messages");
  EXPECT_NE(parts.error().status.message().find("content[0]"), std::string::npos);
  // An absent or null type still means "function" for a chat tool.
  const char* untyped = R"({"messages": [{"role": "user", "content": "hi"}],
      "tools": [{"type": null, "function": {"name": "f"}}, {"function": {"name": "g"}}]})";
  auto ok = ParseChatCompletionRequest(json::parse(untyped), context);
  ASSERT_TRUE(ok.ok()) << ok.error().status.message();
}

TEST(RequestParsingTest, StringMemberNeverThrows) {
  const OrderedJson object = OrderedJson::parse(R"({"s": "x", "n": 1, "o": {}, "z": null})");
  EXPECT_EQ(StringMember(object, "s", "d"), "x");
  EXPECT_EQ(StringMember(object, "missing", "d"), "d");
  EXPECT_EQ(StringMember(object, "z", "d"), "d");
  EXPECT_EQ(StringMember(object, "n", "d"), std::nullopt);
  EXPECT_EQ(StringMember(object, "o", "d"), std::nullopt);
}

}  // namespace
}  // namespace tandem::server::openai
