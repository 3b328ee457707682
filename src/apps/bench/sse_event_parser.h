// SseEventParser: splits a Server-Sent Events byte stream into the `data:` payloads of its
// events, fed in arbitrary pieces as they arrive off the socket.
// Reference: WHATWG HTML "Server-sent events" §9.2.6 (lines end in LF, CRLF or CR; an empty line
// dispatches the event; multiple data lines join with LF; lines starting with ':' are comments).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tandem::apps::bench {

class SseEventParser {
 public:
  // Appends bytes and returns the data payloads of every event completed by them, in order.
  std::vector<std::string> Feed(std::string_view bytes);

 private:
  void HandleLine(std::string_view line, std::vector<std::string>& events);

  std::string pending_line_;  // bytes after the last line end
  std::string data_;          // data of the event being built
  bool has_data_ = false;
  bool last_was_cr_ = false;  // a CR ended the previous piece: skip a directly following LF
};

}  // namespace tandem::apps::bench
