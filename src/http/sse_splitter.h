// SseSplitter: a Server-Sent-Events byte stream (or any "\n\n"-separated one, like the
// manager's watch streams) → whole events, as the bytes arrive in arbitrary pieces.
// Reference: WHATWG HTML "Server-sent events" (an event ends at a blank line).
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace tandem::http {

class SseSplitter {
 public:
  // Appends `bytes`; calls on_event(event) for every whole event now complete, in order, each
  // with its terminating "\n\n".
  template <typename F>
  void Feed(std::string_view bytes, F&& on_event) {
    buffer_.append(bytes);
    size_t begin = 0;
    size_t end;
    while ((end = buffer_.find("\n\n", begin)) != std::string::npos) {
      on_event(std::string_view(buffer_).substr(begin, end + 2 - begin));
      begin = end + 2;
    }
    buffer_.erase(0, begin);
  }

  // The bytes after the last whole event (an unterminated one), taken out.
  std::string Rest() { return std::exchange(buffer_, std::string()); }

 private:
  std::string buffer_;
};

}  // namespace tandem::http
