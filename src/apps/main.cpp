// tandem: one binary. `tandem serve MODEL [flags]` serves a model over the OpenAI API;
// `tandem bench serve|kernels` measures; `_engine-core` is the hidden child of serve.
#include <cstdio>
#include <cstring>
#include <string>

#include "apps/agent_command.h"
#include "apps/api_server_runner.h"
#include "apps/bench/bench_command.h"
#include "apps/engine_core_config.h"
#include "apps/manager_command.h"
#include "apps/quantize_command.h"
#include "apps/serve_command.h"
#include "apps/tokenize_command.h"
#include "apps/version.h"
#include "core/resource_limits.h"

namespace {

void PrintUsage() {
  std::printf(
      "tandem %s: serve large language models over an OpenAI-compatible API\n\n"
      "Usage: tandem <command> [flags]\n\n"
      "Commands:\n"
      "  serve MODEL [flags]   Serve a GGUF file or Hugging Face folder (see `tandem serve "
      "--help`)\n"
      "  bench serve [flags]   Load-test an OpenAI-compatible server (like `vllm bench serve`)\n"
      "  bench kernels         Measure this machine: memory bandwidth, GEMM GFLOP/s\n"
      "  bench comm            Collectives latency / bandwidth per backend (shm, gloo)\n"
      "  quantize SRC OUT [--format ascend|compressed-tensors]\n"
      "                        Write an int8 W8A8_DYNAMIC copy of a Hugging Face folder\n"
      "  manager --data-dir DIR [flags]\n"
      "                        The cluster manager: web console at /, /v2 API, OpenAI gateway "
      "(`tandem manager --help`)\n"
      "  agent --server-url URL --token TOKEN --data-dir DIR [flags]\n"
      "                        Runs a machine's model instances for the manager (`tandem agent "
      "--help`)\n"
      "  tokenize --tokenizer PATH [--ids|--pieces] [TEXT...]\n"
      "                        Token ids / pieces of TEXT (or stdin) as JSON\n"
      "  --version             Print the version\n"
      "  --help                This text\n\n"
      "Every serve flag also reads an environment variable TANDEM_<FLAG_NAME>; see `tandem serve "
      "--help`.\n",
      tandem::apps::kVersion);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    PrintUsage();
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  tandem::RaiseOpenFileLimit();  // one descriptor per client connection
  if (cmd == "--version" || cmd == "version") {
    std::printf("tandem %s\n", tandem::apps::kVersion);
    return 0;
  }
  if (cmd == "serve") return tandem::apps::RunServeCommand(argc - 1, argv + 1);
  if (cmd == "tokenize") return tandem::apps::RunTokenizeCommand(argc - 1, argv + 1);
  if (cmd == "agent") return tandem::apps::RunAgentCommand(argc - 1, argv + 1);
  if (cmd == "manager") return tandem::apps::RunManagerCommand(argc - 1, argv + 1);
  if (cmd == "quantize") return tandem::apps::RunQuantizeCommand(argc - 1, argv + 1);
  if (cmd == "bench") return RunBenchCommand(argc - 1, argv + 1);
  if (cmd == "_api-server") return tandem::apps::RunApiServerCommand(argc - 1, argv + 1);
  if (cmd == "_tp-worker") return tandem::apps::RunTpWorkerCommand(argc - 1, argv + 1);
  if (cmd == "_engine-core") return tandem::apps::RunEngineCoreCommand(argc - 1, argv + 1);
  std::fprintf(stderr, "tandem: unknown command '%s'; run `tandem --help`\n", cmd.c_str());
  return 2;
}
