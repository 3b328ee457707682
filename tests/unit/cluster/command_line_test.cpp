// The agent's command-line rendering, table-driven: placeholders, POSIX splitting, backend
// parameters with comments and several flags per line in both formats (the seed's exact
// text included), flag lookup, environment precedence and device visibility.
#include "cluster/agent/command_line.h"

#include <gtest/gtest.h>

namespace tandem::cluster::agent {
namespace {

using Words = std::vector<std::string>;

TEST(RenderPlaceholdersTest, Table) {
  const std::map<std::string, std::string> values = {{"model_path", "/models/qwen"},
                                                     {"port", "40000"},
                                                     {"worker_ip", "10.0.0.1"},
                                                     {"model_name", "qwen3.5-397b-1"},
                                                     {"HCCL_IF_IP", "192.168.13.33"}};
  auto out = RenderPlaceholders(
      "{{model_path}} --host {{worker_ip}} --port {{ port }} --served-model-name {{model_name}}",
      values);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "/models/qwen --host 10.0.0.1 --port 40000 --served-model-name qwen3.5-397b-1");
  EXPECT_EQ(RenderPlaceholders("--data-parallel-address={{HCCL_IF_IP}}", values).value(),
            "--data-parallel-address=192.168.13.33");
  EXPECT_EQ(RenderPlaceholders("no placeholders {x}", values).value(), "no placeholders {x}");
  auto unknown = RenderPlaceholders("{{model}}", values);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown placeholder '{{model}}'"), std::string::npos)
      << unknown.status().message();
  EXPECT_FALSE(RenderPlaceholders("{{model_path", values).ok());
}

TEST(SplitPosixWordsTest, Table) {
  struct Case {
    const char* text;
    Words words;
  };
  const Case cases[] = {
      {"a b\tc\n d", {"a", "b", "c", "d"}},
      {"  ", {}},
      {"--speculative_config '{\"method\": \"qwen3_5_mtp\", \"num_speculative_tokens\": 3}'",
       {"--speculative_config", "{\"method\": \"qwen3_5_mtp\", \"num_speculative_tokens\": 3}"}},
      {"\"a b\" 'c d'", {"a b", "c d"}},
      {"\"say \\\"hi\\\" \\\\ \\$x \\n\"", {"say \"hi\" \\ $x \\n"}},
      {"a\\ b c", {"a b", "c"}},
      {"x'y'\"z\"", {"xyz"}},
      {"''", {""}},
      {"--flag value # a comment 'with quote", {"--flag", "value"}},
      {"a#b #c\nd", {"a#b", "d"}},
  };
  for (const Case& c : cases) {
    auto words = SplitPosixWords(c.text);
    ASSERT_TRUE(words.ok()) << c.text << ": " << words.status().message();
    EXPECT_EQ(*words, c.words) << c.text;
  }
  for (const char* bad : {"'open", "\"open", "ends\\"}) {
    auto words = SplitPosixWords(bad);
    EXPECT_FALSE(words.ok()) << bad;
    EXPECT_EQ(words.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_NE(
      SplitPosixWords("--x 'unbalanced").status().message().find("unbalanced ' at character 4"),
      std::string::npos);
}

// The seed's primary parameters as a user pastes them: one entry per line, mixed spellings,
// a trailing '# comment' on some lines, several flags on the first.
const std::vector<std::string> kSeedPrimary = {
    "--data-parallel-size 2 --tensor-parallel-size 8",
    "--data-parallel-size-local=1   # DP ranks on this machine",
    "--api-server-count=2",
    "--data-parallel-address=192.168.13.33",
    "--data-parallel-rpc-port=13389  # handshake / RPC port",
    "--seed=1024",
    "--enable-expert-parallel",
    "--max-num-seqs=16",
    "--max-model-len=32768",
    "--max-num-batched-tokens=8192",
    "--gpu-memory-utilization=0.90",
    "--trust-remote-code",
    "--async-scheduling   # overlap CPU scheduling with device compute",
    "--no-enable-prefix-caching",
    "--speculative_config "
    "'{\"method\":\"qwen3_5_mtp\",\"num_speculative_tokens\":3,\"enforce_eager\":true}'",
    "--compilation-config '{\"cudagraph_mode\":\"FULL_DECODE_ONLY\"}'",
    "--additional-config "
    "'{\"enable_cpu_binding\":true,\"multistream_overlap_shared_expert\":true}'",
    "--disable-access-log-for-endpoints /health,/metrics,/ping",
    "# a line that is only a comment",
};

TEST(BackendParameterWordsTest, TheSeedsTextInSpaceFormat) {
  auto words = BackendParameterWords(kSeedPrimary, "space");
  ASSERT_TRUE(words.ok()) << words.status().message();
  const Words expected = {
      "--data-parallel-size",
      "2",
      "--tensor-parallel-size",
      "8",
      "--data-parallel-size-local",
      "1",
      "--api-server-count",
      "2",
      "--data-parallel-address",
      "192.168.13.33",
      "--data-parallel-rpc-port",
      "13389",
      "--seed",
      "1024",
      "--enable-expert-parallel",
      "--max-num-seqs",
      "16",
      "--max-model-len",
      "32768",
      "--max-num-batched-tokens",
      "8192",
      "--gpu-memory-utilization",
      "0.90",
      "--trust-remote-code",
      "--async-scheduling",
      "--no-enable-prefix-caching",
      "--speculative_config",
      "{\"method\":\"qwen3_5_mtp\",\"num_speculative_tokens\":3,\"enforce_eager\":true}",
      "--compilation-config",
      "{\"cudagraph_mode\":\"FULL_DECODE_ONLY\"}",
      "--additional-config",
      "{\"enable_cpu_binding\":true,\"multistream_overlap_shared_expert\":true}",
      "--disable-access-log-for-endpoints",
      "/health,/metrics,/ping"};
  EXPECT_EQ(*words, expected);
  EXPECT_TRUE(HasFlag(*words, "--speculative-config"));
  EXPECT_EQ(FlagValue(*words, "--data-parallel-size"), "2");
  EXPECT_EQ(FlagValue(*words, "--data_parallel_rpc_port"), "13389");
  EXPECT_FALSE(HasFlag(*words, "--headless"));
}

TEST(BackendParameterWordsTest, EqualFormatJoinsFlagsAndValues) {
  auto words = BackendParameterWords(
      {"--ctx-size 8192 --flash-attn", "--temp -0.5 --threads=4", "--headless --port 8000"},
      "equal");
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(*words, (Words{"--ctx-size=8192", "--flash-attn", "--temp=-0.5", "--threads=4",
                           "--headless", "--port=8000"}));
  auto bad = BackendParameterWords({"--ok 1", "--x 'oops"}, "space");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("backend_parameters[1]"), std::string::npos);
}

TEST(BuildEnvironmentTest, LaterLayersWinAndAgentSecretsStayBehind) {
  auto env = BuildEnvironment(
      {{"PATH", "/bin"}, {"OMP_NUM_THREADS", "8"}, {"TANDEM_AGENT_TOKEN", "secret"}},
      {{{"OMP_NUM_THREADS", "4"}, {"A", "backend"}},
       {{"A", "version"}},
       {{"OMP_NUM_THREADS", "1"}}},
      {{"CUDA_VISIBLE_DEVICES", "2,3"}});
  EXPECT_EQ(env, (std::vector<std::string>{"A=version", "CUDA_VISIBLE_DEVICES=2,3",
                                           "OMP_NUM_THREADS=1", "PATH=/bin"}));
}

TEST(VisibleDevicesEnvTest, PerVendor) {
  EXPECT_EQ(VisibleDevicesEnv("cuda", {0, 1}),
            (std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "0,1"}}));
  EXPECT_EQ(VisibleDevicesEnv("cann", {4, 5, 6, 7}),
            (std::map<std::string, std::string>{{"ASCEND_RT_VISIBLE_DEVICES", "4,5,6,7"}}));
  EXPECT_TRUE(VisibleDevicesEnv("cpu", {0}).empty());
}

}  // namespace
}  // namespace tandem::cluster::agent
