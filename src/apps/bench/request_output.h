// RequestOutput: what the client measured for one benchmark request.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::apps::bench {

struct RequestOutput {
  bool success = false;
  std::string error;            // first line of what went wrong; empty on success
  int prompt_len = 0;           // input tokens: usage.prompt_tokens, else the length sent
  int output_len = 0;           // output tokens: usage.completion_tokens, else number of chunks
  bool usage_reported = false;  // output_len came from the server's usage chunk
  double ttft_s = 0;            // send → first chunk carrying generated text
  std::vector<double> itl_s;    // gaps between consecutive text-carrying chunks
  double latency_s = 0;         // send → end of the response (E2EL)
  double start_s = 0;           // send time, seconds after the benchmark started
  bool is_long = false;         // the request was one of --long-request-fraction
  std::string generated_text;
};

}  // namespace tandem::apps::bench
