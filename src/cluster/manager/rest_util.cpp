#include "cluster/manager/rest_util.h"

#include <charconv>

#include <fmt/format.h>

#include "http/status.h"

namespace tandem::cluster::manager {

using nlohmann::json;

void SendJson(http::ResponseSink& sink, const json& body, int http_status) {
  sink.SendResponse(http_status, "application/json",
                    body.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string ManagementErrorBody(int http_status, const std::string& message) {
  return json({{"code", http_status},
               {"reason", http::HttpReasonFor(http_status)},
               {"message", message}})
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

void SendError(http::ResponseSink& sink, const Status& status) {
  const int code = http::HttpStatusFor(status.code());
  sink.SendResponse(code, "application/json", ManagementErrorBody(code, status.message()));
}

void SendMethodNotAllowed(http::ResponseSink& sink, std::string_view method, std::string_view path,
                          std::string_view allow) {
  sink.AddResponseHeader("Allow", std::string(allow));
  sink.SendResponse(405, "application/json",
                    ManagementErrorBody(405, fmt::format("method {} is not allowed on {}; "
                                                         "allowed: {}",
                                                         method, path, allow)));
}

std::string OpenAiErrorBody(int http_status, const std::string& message) {
  const char* type = http::OpenAiErrorTypeFor(http_status);
  return json({{"error",
                {{"message", message}, {"type", type}, {"param", nullptr}, {"code", http_status}}}})
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

void SendOpenAiError(http::ResponseSink& sink, int http_status, const std::string& message) {
  sink.SendResponse(http_status, "application/json", OpenAiErrorBody(http_status, message));
}

bool JsonNestsDeeperThan(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

std::string TooDeepMessage() {
  return fmt::format(
      "request body nests JSON arrays and objects deeper than the limit of {} "
      "levels",
      kMaxJsonDepth);
}

Result<json> ParseJsonBody(const std::string& body) {
  if (JsonNestsDeeperThan(body, kMaxJsonDepth)) return InvalidArgument(TooDeepMessage());
  json parsed;
  try {
    parsed = json::parse(body);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e400
    return InvalidArgument(std::string("request body is not valid JSON: ") + e.what());
  }
  if (!parsed.is_object()) return InvalidArgument("request body must be a JSON object");
  return parsed;
}

Result<std::string> StringField(const json& body, const char* field, std::string fallback) {
  if (!body.is_object()) return fallback;
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_string()) {
    return InvalidArgument(fmt::format("field '{}' must be a string, not {}", field, Shown(*it)));
  }
  return it->get<std::string>();
}

std::string Shown(const json& value, size_t limit) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > limit) text = text.substr(0, limit) + "…";
  return text;
}

std::vector<std::string> PathSegments(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) out.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::optional<int64_t> ParseId(std::string_view text) {
  int64_t id = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || ptr != text.data() + text.size() || id <= 0) return std::nullopt;
  return id;
}

std::string CookieValue(std::string_view header, std::string_view name) {
  size_t pos = 0;
  while (pos < header.size()) {
    while (pos < header.size() && (header[pos] == ' ' || header[pos] == ';')) ++pos;
    size_t end = header.find(';', pos);
    if (end == std::string_view::npos) end = header.size();
    std::string_view pair = header.substr(pos, end - pos);
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) {
      return std::string(pair.substr(eq + 1));
    }
    pos = end + 1;
  }
  return "";
}

}  // namespace tandem::cluster::manager
