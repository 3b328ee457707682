#include "server/openai/generation.h"

#include <gtest/gtest.h>

#include <memory>

#include "testing.h"

namespace tandem::server::openai {
namespace {

// A client that leaves while its request waits for a preprocessing thread fires Abort() before
// Start(): nothing may go on running in the engine for it.
TEST(GenerationTest, AbortBeforeStartLeavesNothingRunningInTheEngine) {
  auto engine = std::make_shared<testing::FakeEngineClient>(/*step_ms=*/20);
  ServerContext context;
  context.config.served_model_names = {"m"};
  context.engine = engine;
  context.tokenizer = std::make_shared<testing::FakeTokenizer>();
  GenerationRequest request;
  request.n = 4;
  request.sampling.max_tokens = 1000;
  request.sampling.ignore_eos = true;
  Generation::Callbacks callbacks;
  callbacks.on_delta = [](const ChoiceDelta&) {};
  callbacks.on_done = [](const GenerationUsage&) {};
  callbacks.on_error = [](const ApiError&) {};
  auto generation = std::make_shared<Generation>(
      context, "cmpl-gone", std::vector<int32_t>{1, 2, 3}, request, 0.0, callbacks);
  generation->Abort();
  ASSERT_TRUE(generation->Start().ok());
  EXPECT_EQ(engine->num_running(), 0u);
  EXPECT_LE(engine->added().size(), 1u) << "choices added after the abort";
}

}  // namespace
}  // namespace tandem::server::openai
