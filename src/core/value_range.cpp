#include "core/value_range.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tandem {
namespace {

std::string Trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(' ') + 1 - begin);
}

std::string IntText(int64_t v) {
  if (v == std::numeric_limits<int64_t>::max()) return "2^63-1";
  if (v == std::numeric_limits<int64_t>::min()) return "-2^63";
  if (v == std::numeric_limits<int32_t>::max()) return "2^31-1";
  if (v == std::numeric_limits<int32_t>::min()) return "-2^31";
  return std::to_string(v);
}

std::string NumberText(double v) {
  if (v == std::trunc(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", v);
  return buffer;
}

}  // namespace

std::string IntRangeText(int64_t min, int64_t max) {
  return "[" + IntText(min) + ", " + IntText(max) + "]";
}

std::string NumberRangeText(double min, double max, bool min_exclusive) {
  return (min_exclusive ? "(" : "[") + NumberText(min) + ", " + NumberText(max) + "]";
}

Result<int64_t> ParseIntInRange(const std::string& text, int64_t min, int64_t max) {
  const std::string digits = Trimmed(text);
  const char* begin = digits.data();
  const char* end = begin + digits.size();
  if (begin != end && *begin == '+') ++begin;
  int64_t value = 0;
  const auto [stop, error] = std::from_chars(begin, end, value);
  if (begin == end || error != std::errc() || stop != end || value < min || value > max) {
    return InvalidArgument("must be an integer in " + IntRangeText(min, max) + ", got '" + text +
                           "'");
  }
  return value;
}

Result<double> ParseFiniteInRange(const std::string& text, double min, double max,
                                  bool min_exclusive) {
  const std::string number = Trimmed(text);
  char* stop = nullptr;
  const double value = number.empty() ? 0.0 : std::strtod(number.c_str(), &stop);
  const bool parsed = !number.empty() && stop == number.c_str() + number.size();
  const bool above_min = min_exclusive ? value > min : value >= min;
  if (!parsed || !std::isfinite(value) || !above_min || !(value <= max)) {
    return InvalidArgument("must be a finite number in " +
                           NumberRangeText(min, max, min_exclusive) + ", got '" + text + "'");
  }
  return value;
}

}  // namespace tandem
