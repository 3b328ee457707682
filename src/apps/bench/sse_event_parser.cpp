#include "apps/bench/sse_event_parser.h"

namespace tandem::apps::bench {

std::vector<std::string> SseEventParser::Feed(std::string_view bytes) {
  std::vector<std::string> events;
  for (char c : bytes) {
    if (last_was_cr_) {
      last_was_cr_ = false;
      if (c == '\n') continue;
    }
    if (c == '\r' || c == '\n') {
      last_was_cr_ = c == '\r';
      HandleLine(pending_line_, events);
      pending_line_.clear();
    } else {
      pending_line_.push_back(c);
    }
  }
  return events;
}

void SseEventParser::HandleLine(std::string_view line, std::vector<std::string>& events) {
  if (line.empty()) {
    if (has_data_) events.push_back(std::move(data_));
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // comment / keep-alive
  std::string_view field = line;
  std::string_view value;
  if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field != "data") return;  // event:, id:, retry: do not matter to the benchmark
  if (has_data_) data_.push_back('\n');
  data_.append(value);
  has_data_ = true;
}

}  // namespace tandem::apps::bench
