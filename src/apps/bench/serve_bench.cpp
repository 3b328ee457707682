#include "apps/bench/serve_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "apps/bench/http_target.h"
#include "apps/bench/openai_stream_request.h"
#include "apps/bench/random_dataset.h"
#include "apps/bench/serve_metrics.h"
#include "apps/bench/serve_report.h"
#include "core/clock.h"

namespace tandem::apps::bench {
namespace {

Result<HttpTarget> ResolveTarget(const ServeBenchConfig& config) {
  if (config.host.empty() && config.port == 0) return ParseBaseUrl(config.base_url);
  HttpTarget target;
  target.host = config.host.empty() ? "127.0.0.1" : config.host;
  target.port = std::to_string(config.port == 0 ? 8000 : config.port);
  return target;
}

// Sends every request with `num_workers` threads; worker k takes the next request in order,
// sleeps until its arrival offset, sends it and records its output. Returns the wall duration
// from the first send to the last completion.
double ReplayWorkload(const StreamRequestOptions& options,
                      const std::vector<BenchRequest>& requests,
                      const std::vector<double>& arrival_offsets_s, int num_workers,
                      bool show_progress, std::vector<RequestOutput>& outputs) {
  outputs.assign(requests.size(), RequestOutput{});
  std::atomic<size_t> next{0};
  std::atomic<size_t> num_done{0};
  std::mutex progress_mutex;
  const size_t progress_step = std::max<size_t>(1, requests.size() / 10);
  const auto start = std::chrono::steady_clock::now();
  StreamRequestOptions timed = options;
  timed.bench_start_s = MonotonicSeconds();

  auto worker = [&]() {
    for (size_t i = next.fetch_add(1); i < requests.size(); i = next.fetch_add(1)) {
      std::this_thread::sleep_until(start +
                                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::chrono::duration<double>(arrival_offsets_s[i])));
      outputs[i] = SendStreamRequest(timed, requests[i]);
      size_t done = num_done.fetch_add(1) + 1;
      if (show_progress && (done % progress_step == 0 || done == requests.size())) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        std::fprintf(stderr, "  %zu/%zu requests done\n", done, requests.size());
      }
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(num_workers);
  for (int w = 0; w < num_workers; ++w) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Status SaveResult(const std::string& path, const nlohmann::json& result) {
  std::ofstream file(path);
  if (!file) {
    return InvalidArgument(fmt::format("cannot open result file '{}' for writing", path));
  }
  file << result.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!file) return Internal(fmt::format("writing result file '{}' failed", path));
  return Status::Ok();
}

}  // namespace

Status RunServeBench(const ServeBenchConfig& config) {
  TANDEM_RETURN_IF_ERROR(config.Validate());
  TANDEM_ASSIGN_OR_RETURN(HttpTarget target, ResolveTarget(config));

  StreamRequestOptions options;
  options.target = target;
  options.endpoint = config.endpoint;
  options.chat = config.IsChat();
  options.api_key = config.api_key;
  options.ignore_eos = config.ignore_eos;
  options.idle_timeout_s = config.request_timeout_s;
  options.model = config.model;
  if (options.model.empty()) {
    TANDEM_ASSIGN_OR_RETURN(options.model,
                            FetchFirstModelId(target, config.api_key, config.request_timeout_s));
  }
  std::printf("Target: %s%s  model: %s\n", target.ToString().c_str(), config.endpoint.c_str(),
              options.model.c_str());

  std::vector<BenchRequest> requests = SampleRandomRequests(config);
  if (!config.disable_initial_test) {
    std::printf("Starting initial single prompt test run...\n");
    RequestOutput probe = SendStreamRequest(options, requests.front());
    if (!probe.success) {
      return Unavailable(fmt::format(
          "initial test request to {}{} failed: {} (check the server, --endpoint and --model; "
          "--disable-initial-test skips this check)",
          target.ToString(), config.endpoint, probe.error));
    }
    std::printf("Initial test run completed. Starting main benchmark run...\n");
  }

  const int num_requests = static_cast<int>(requests.size());
  int num_workers = config.max_concurrency > 0 ? config.max_concurrency : kMaxWorkerThreads;
  num_workers = std::min(num_workers, num_requests);
  if (config.max_concurrency == 0 && num_requests > kMaxWorkerThreads) {
    std::printf("Note: at most %d requests are in flight at once (one thread each)\n",
                kMaxWorkerThreads);
  }
  const std::string rate_text =
      std::isinf(config.request_rate) ? "inf" : fmt::format("{}", config.request_rate);
  const std::string concurrency_text =
      config.max_concurrency > 0 ? std::to_string(config.max_concurrency) : "unlimited";
  std::printf("Traffic request rate: %s, burstiness: %g, max concurrency: %s\n", rate_text.c_str(),
              config.burstiness, concurrency_text.c_str());
  std::vector<double> arrivals =
      SampleArrivalOffsets(num_requests, config.request_rate, config.burstiness, config.seed);
  std::vector<RequestOutput> outputs;
  double duration_s =
      ReplayWorkload(options, requests, arrivals, num_workers, !config.disable_tqdm, outputs);

  ServeMetrics metrics = ComputeServeMetrics(outputs, duration_s, config.metric_percentiles);
  int num_long = static_cast<int>(std::count_if(requests.begin(), requests.end(),
                                                [](const BenchRequest& r) { return r.is_long; }));
  std::fputs(FormatServeReport(config, metrics, num_long).c_str(), stdout);
  std::fflush(stdout);

  const std::string path = config.ResultPath(options.model);
  if (!path.empty()) {
    TANDEM_RETURN_IF_ERROR(
        SaveResult(path, ServeResultJson(config, options.model, metrics, outputs)));
    std::printf("Saved result to %s\n", path.c_str());
  }
  return Status::Ok();
}

}  // namespace tandem::apps::bench
