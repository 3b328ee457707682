#include "text/stop_string_matcher.h"

#include <algorithm>

namespace tandem::text {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stop_strings,
                                     bool include_stop_str_in_output)
    : include_stop_str_in_output_(include_stop_str_in_output) {
  for (std::string& stop : stop_strings) {
    if (stop.empty()) continue;
    max_stop_size_bytes_ = std::max(max_stop_size_bytes_, stop.size());
    stop_strings_.push_back(std::move(stop));
  }
}

size_t StopStringMatcher::FindStop(std::string_view text, const std::string** stop,
                                   size_t min_end) const {
  size_t best = std::string_view::npos;
  for (const std::string& candidate : stop_strings_) {
    // Only matches that end past min_end: start at or after min_end - size + 1.
    const size_t from = min_end >= candidate.size() ? min_end - candidate.size() + 1 : 0;
    size_t pos = text.find(candidate, from);
    if (pos == std::string_view::npos) continue;
    if (pos < best || (pos == best && candidate.size() > (*stop)->size())) {
      best = pos;
      *stop = &candidate;
    }
  }
  return best;
}

size_t StopStringMatcher::HeldBackLength(std::string_view text) const {
  size_t longest = std::min(text.size(), max_stop_size_bytes_ - 1);
  for (size_t n = longest; n > 0; --n) {
    std::string_view suffix = text.substr(text.size() - n);
    for (const std::string& stop : stop_strings_) {
      if (stop.size() > n && std::string_view(stop).substr(0, n) == suffix) return n;
    }
  }
  return 0;
}

StopStringMatcher::Output StopStringMatcher::Push(std::string_view chunk, bool may_stop) {
  Output out;
  if (stopped_) return out;
  if (stop_strings_.empty()) {
    out.text = std::string(chunk);
    return out;
  }
  const std::string* stop = nullptr;
  if (!include_stop_str_in_output_) {
    // held_ is a proper prefix of a stop string, so a match across the chunk boundary starts
    // inside held_ + chunk.
    std::string text = held_ + std::string(chunk);
    held_.clear();
    size_t pos = may_stop ? FindStop(text, &stop) : std::string_view::npos;
    if (pos != std::string_view::npos) {
      stopped_ = true;
      out.text = text.substr(0, pos);
      out.matched_stop = *stop;
      return out;
    }
    size_t hold = HeldBackLength(text);
    out.text = text.substr(0, text.size() - hold);
    held_ = text.substr(text.size() - hold);
    return out;
  }
  // Include mode: search the recently emitted tail + chunk for a match that ends inside
  // `chunk` (one wholly in the tail was found by the previous call, or lay in text that could
  // not stop: min_tokens).
  std::string text = emitted_tail_ + std::string(chunk);
  size_t pos = may_stop ? FindStop(text, &stop, emitted_tail_.size()) : std::string_view::npos;
  if (pos != std::string_view::npos) {
    stopped_ = true;
    out.text = text.substr(emitted_tail_.size(), pos + stop->size() - emitted_tail_.size());
    out.matched_stop = *stop;
    return out;
  }
  out.text = std::string(chunk);
  size_t keep = std::min(text.size(), max_stop_size_bytes_ - 1);
  emitted_tail_ = text.substr(text.size() - keep);
  return out;
}

std::string StopStringMatcher::Flush() {
  std::string text = std::move(held_);
  held_.clear();
  return stopped_ ? std::string() : text;
}

}  // namespace tandem::text
