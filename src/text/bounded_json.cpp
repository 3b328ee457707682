#include "text/bounded_json.h"

#include "text/bounded_dom_sax.h"

namespace tandem::text {
namespace {

template <typename BasicJson>
bool Parse(std::string_view text, int32_t max_depth, BasicJson* out, BoundedJsonError* error) {
  *out = BasicJson();
  // nlohmann's lexer reads a NUL byte as the end of input, so `{"a":1}\0{...}` would parse as
  // `{"a":1}`; a raw NUL is never valid JSON (RFC 8259 §7: control characters are escaped).
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    *error = {false, "JSON text contains a NUL byte at offset " + std::to_string(nul) +
                         " (control characters must be escaped)"};
    return false;
  }
  BoundedDomSax<BasicJson> sax(out, max_depth);
  bool parsed = false;
  try {
    parsed = BasicJson::sax_parse(text, &sax);
  } catch (const nlohmann::json::exception& e) {  // e.g. an excessive container size
    *out = BasicJson();
    *error = {false, e.what()};
    return false;
  }
  if (parsed) {
    return true;
  }
  *out = BasicJson();  // drop what was built so far (at most max_depth deep)
  if (sax.too_deep()) {
    *error = {true, "JSON nests arrays and objects deeper than " + std::to_string(max_depth) +
                        " levels, the limit"};
  } else if (!sax.limit().empty()) {
    *error = {false, sax.limit(), /*too_large=*/true};
  } else {
    *error = {false, sax.message().empty() ? std::string("not valid JSON") : sax.message()};
  }
  return false;
}

}  // namespace

bool ParseBoundedJson(std::string_view text, int32_t max_depth, nlohmann::json* out,
                      BoundedJsonError* error) {
  return Parse(text, max_depth, out, error);
}

bool ParseBoundedJson(std::string_view text, int32_t max_depth, nlohmann::ordered_json* out,
                      BoundedJsonError* error) {
  return Parse(text, max_depth, out, error);
}

nlohmann::ordered_json ParseBoundedOrderedOrDiscarded(std::string_view text) {
  nlohmann::ordered_json out;
  BoundedJsonError error;
  if (!ParseBoundedJson(text, kMaxJsonDepth, &out, &error)) {
    return nlohmann::ordered_json(nlohmann::ordered_json::value_t::discarded);
  }
  return out;
}

}  // namespace tandem::text
