#include "text/bounded_json.h"

#include <utility>

namespace tandem::text {
namespace {

// nlohmann's DOM builder with a depth count in front: start_object/start_array past the limit
// return false, which ends sax_parse at once (no deeper value is ever built).
template <typename BasicJson>
class DepthLimitedSax {
 public:
  using number_integer_t = typename BasicJson::number_integer_t;
  using number_unsigned_t = typename BasicJson::number_unsigned_t;
  using number_float_t = typename BasicJson::number_float_t;
  using string_t = typename BasicJson::string_t;
  using binary_t = typename BasicJson::binary_t;

  DepthLimitedSax(BasicJson* result, int32_t max_depth)
      : dom_(*result, /*allow_exceptions=*/false), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) { return dom_.number_float(v, s); }
  bool string(string_t& v) { return dom_.string(v); }
  bool binary(binary_t& v) { return dom_.binary(v); }
  bool key(string_t& v) { return dom_.key(v); }
  bool start_object(std::size_t n) { return Enter() && dom_.start_object(n); }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return Enter() && dom_.start_array(n); }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& ex) {
    message_ = ex.what();
    return dom_.parse_error(position, token, ex);
  }

  bool too_deep() const { return too_deep_; }
  const std::string& message() const { return message_; }

 private:
  bool Enter() {
    if (++depth_ <= max_depth_) return true;
    too_deep_ = true;
    return false;
  }

  nlohmann::detail::json_sax_dom_parser<BasicJson> dom_;
  const int32_t max_depth_;
  int32_t depth_ = 0;
  bool too_deep_ = false;
  std::string message_;
};

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
  DepthLimitedSax<BasicJson> sax(out, max_depth);
  bool parsed = false;
  try {
    parsed = BasicJson::sax_parse(text, &sax);
  } catch (const nlohmann::json::exception& e) {  // e.g. an excessive container size
    *out = BasicJson();
    *error = {false, e.what()};
    return false;
  }
  if (parsed) return true;
  *out = BasicJson();  // drop what was built so far (at most max_depth deep)
  if (sax.too_deep()) {
    *error = {true, "JSON nests arrays and objects deeper than " + std::to_string(max_depth) +
                        " levels, the limit"};
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
