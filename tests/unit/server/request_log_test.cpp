#include "server/openai/request_log.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>

#include "testing.h"

namespace tandem::server::openai {
namespace {

TEST(RequestLogTest, SamplingParamsReadAsVllmPrintsThem) {
  GenerationRequest request;
  request.n = 2;
  request.sampling.temperature = 0.7f;
  request.sampling.top_p = 0.9f;
  request.sampling.top_k = 40;
  request.sampling.has_seed = true;
  request.sampling.seed = 11;
  request.sampling.max_tokens = 16;
  request.sampling.stop_token_ids = {2, 7};
  request.stop = {"\n", "it's"};
  EXPECT_EQ(SamplingParamsRepr(request),
            "SamplingParams(n=2, presence_penalty=0.0, frequency_penalty=0.0, "
            "repetition_penalty=1.0, temperature=0.7, top_p=0.9, top_k=40, min_p=0.0, seed=11, "
            "stop=['\\n', 'it\\'s'], stop_token_ids=[2, 7], bad_words=[], "
            "include_stop_str_in_output=False, ignore_eos=False, max_tokens=16, min_tokens=0, "
            "logprobs=None, skip_special_tokens=True, truncate_prompt_tokens=None, "
            "structured_outputs=None)");
}

class ReceivedRequestLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = spdlog::default_logger();
    sink_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
    auto logger = std::make_shared<spdlog::logger>("capture", sink_);
    logger->set_pattern("%l %v");
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
  }
  void TearDown() override { spdlog::set_default_logger(previous_); }
  std::vector<std::string> Lines() { return sink_->last_formatted(); }

  std::shared_ptr<spdlog::logger> previous_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

TEST_F(ReceivedRequestLogTest, NothingIsLoggedWithoutTheFlag) {
  ServerContext context;
  context.tokenizer = std::make_shared<testing::FakeTokenizer>();
  LogReceivedRequest(context, "cmpl-1", {104, 105}, GenerationRequest{});
  EXPECT_TRUE(Lines().empty());
}

TEST_F(ReceivedRequestLogTest, TheIdAndParamsAtInfoThePromptCutToMaxLogLenAtDebug) {
  ServerContext context;
  context.tokenizer = std::make_shared<testing::FakeTokenizer>();  // one token per byte
  context.config.enable_log_requests = true;
  context.config.max_log_len = 3;
  LogReceivedRequest(context, "cmpl-1", {104, 101, 108, 108, 111}, GenerationRequest{});
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("debug Request cmpl-1 details: prompt: 'hel', prompt_token_ids: "
                           "[104, 101, 108], prompt_embeds shape: None.",
                           0),
            0u)
      << lines[0];
  EXPECT_EQ(lines[1].rfind("info Received request cmpl-1: params: SamplingParams(n=1, ", 0), 0u)
      << lines[1];
  EXPECT_NE(lines[1].find("max_tokens=16, "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("), lora_request: None."), std::string::npos) << lines[1];
}

}  // namespace
}  // namespace tandem::server::openai
