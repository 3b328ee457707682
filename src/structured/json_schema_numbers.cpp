// JSON Schema compiler: "type": "integer" and "type": "number". Integer ranges as exact
// grammars by digit-by-digit decomposition of the decimal numerals (negative ranges and
// one-sided bounds included, never "-0"), the rounding of minimum/maximum/exclusiveMinimum/
// exclusiveMaximum (draft 4 booleans too) to integer bounds, and Compiler::IntegerSchema /
// NumberSchema, which refuse the numeric keywords they cannot express.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "structured/json_schema_compiler_internal.h"

namespace tandem::structured::json_schema_detail {
namespace {

// ---------------------------------------------------------------------------------------------
// Integer ranges by digit-by-digit decomposition.

uint64_t Pow10(size_t n) {
  uint64_t p = 1;
  for (size_t i = 0; i < n; ++i) p *= 10;
  return p;
}

// Decimal strings of one length, lo <= hi: exactly the strings between them.
Expr DigitsBetween(const std::string& lo, const std::string& hi) {
  if (lo.empty()) return Empty();
  if (lo == hi) return Literal(lo);
  const std::string lo_rest = lo.substr(1);
  const std::string hi_rest = hi.substr(1);
  if (lo[0] == hi[0]) return Sequence({Literal(lo.substr(0, 1)), DigitsBetween(lo_rest, hi_rest)});
  const size_t n = lo_rest.size();
  const bool lo_full = lo_rest == std::string(n, '0');
  const bool hi_full = hi_rest == std::string(n, '9');
  std::vector<Expr> alternatives;
  if (!lo_full) {
    alternatives.push_back(
        Sequence({Literal(lo.substr(0, 1)), DigitsBetween(lo_rest, std::string(n, '9'))}));
  }
  const char first = lo_full ? lo[0] : static_cast<char>(lo[0] + 1);
  const char last = hi_full ? hi[0] : static_cast<char>(hi[0] - 1);
  if (first <= last) {
    alternatives.push_back(
        Sequence({Class(first, last), Digits(static_cast<int32_t>(n), static_cast<int32_t>(n))}));
  }
  if (!hi_full) {
    alternatives.push_back(
        Sequence({Literal(hi.substr(0, 1)), DigitsBetween(std::string(n, '0'), hi_rest)}));
  }
  return Choice(std::move(alternatives));
}

// Decimal numerals (no leading zeros) of the integers a..b, 0 <= a <= b < 10^16. Whole digit
// lengths in a row join into one [1-9][0-9]{m,n}.
Expr NonNegativeRange(uint64_t a, uint64_t b) {
  std::vector<Expr> alternatives;
  size_t run_first = 0, run_last = 0;  // a run of whole lengths (>= 2 digits), 0 when none
  const auto flush = [&] {
    if (run_first == 0) return;
    alternatives.push_back(Sequence({Class('1', '9'), Digits(static_cast<int32_t>(run_first - 1),
                                                             static_cast<int32_t>(run_last - 1))}));
    run_first = 0;
  };
  for (size_t d = std::to_string(a).size(); d <= std::to_string(b).size(); ++d) {
    const uint64_t length_lo = d == 1 ? 0 : Pow10(d - 1);
    const uint64_t lo = std::max(a, length_lo);
    const uint64_t hi = std::min(b, Pow10(d) - 1);
    if (d >= 2 && lo == length_lo && hi == Pow10(d) - 1) {
      if (run_first == 0) run_first = d;
      run_last = d;
      continue;
    }
    flush();
    alternatives.push_back(DigitsBetween(std::to_string(lo), std::to_string(hi)));
  }
  flush();
  return Choice(std::move(alternatives));
}

// The integers lo..hi, |lo|, |hi| <= kMaxIntMagnitude, lo <= hi; never "-0".
Expr IntegerRange(int64_t lo, int64_t hi) {
  std::vector<Expr> alternatives;
  if (lo < 0) {
    const uint64_t magnitude_lo = hi < 0 ? static_cast<uint64_t>(-hi) : 1;
    alternatives.push_back(
        Sequence({Literal("-"), NonNegativeRange(magnitude_lo, static_cast<uint64_t>(-lo))}));
  }
  if (hi >= 0) alternatives.push_back(NonNegativeRange(std::max<int64_t>(lo, 0), hi));
  return Choice(std::move(alternatives));
}

// A JSON integer (signed, or unsigned as nlohmann stores the non-negative ones) in [-cap, cap].
int64_t ClampedInteger(const json& v, int64_t cap) {
  if (v.is_number_unsigned()) {
    return static_cast<int64_t>(std::min<uint64_t>(v.get<uint64_t>(), static_cast<uint64_t>(cap)));
  }
  return std::clamp<int64_t>(v.get<int64_t>(), -cap, cap);
}

// The least integer >= v (> v when `exclusive`), clamped to +-(kMaxIntMagnitude + 1). `v` is a
// JSON number.
int64_t LowerBound(const json& v, bool exclusive) {
  constexpr int64_t kCap = kMaxIntMagnitude + 1;
  if (v.is_number_integer()) {
    const int64_t i = ClampedInteger(v, kCap);
    return std::clamp<int64_t>(exclusive ? i + 1 : i, -kCap, kCap);
  }
  const double x = v.get<double>();
  if (x > 1e17) return kCap;
  if (x < -1e17) return -kCap;
  const double bound = exclusive ? std::floor(x) + 1 : std::ceil(x);
  return std::clamp<int64_t>(static_cast<int64_t>(bound), -kCap, kCap);
}

// The greatest integer <= v (< v when `exclusive`), clamped likewise.
int64_t UpperBound(const json& v, bool exclusive) {
  constexpr int64_t kCap = kMaxIntMagnitude + 1;
  if (v.is_number_integer()) {
    const int64_t i = ClampedInteger(v, kCap);
    return std::clamp<int64_t>(exclusive ? i - 1 : i, -kCap, kCap);
  }
  const double x = v.get<double>();
  if (x > 1e17) return kCap;
  if (x < -1e17) return -kCap;
  const double bound = exclusive ? std::ceil(x) - 1 : std::floor(x);
  return std::clamp<int64_t>(static_cast<int64_t>(bound), -kCap, kCap);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The integer and number schemas.

Result<Expr> Compiler::IntegerSchema(const json& s, const std::string& ptr) {
  constexpr int64_t kCap = kMaxIntMagnitude;
  int64_t lo = -kCap, hi = kCap;
  for (const char* key : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
    const auto it = s.find(key);
    if (it == s.end()) continue;
    const std::string_view k = key;
    if (it->is_boolean() && k.starts_with("exclusive")) continue;  // draft 4: read below
    if (!it->is_number()) return BadKeyword(key, ptr, "must be a number");
    const auto draft4 = [&](const char* flag) {
      return s.contains(flag) && s[flag].is_boolean() && s[flag].get<bool>();
    };
    if (k == "minimum") lo = std::max(lo, LowerBound(*it, draft4("exclusiveMinimum")));
    if (k == "maximum") hi = std::min(hi, UpperBound(*it, draft4("exclusiveMaximum")));
    if (k == "exclusiveMinimum") lo = std::max(lo, LowerBound(*it, true));
    if (k == "exclusiveMaximum") hi = std::min(hi, UpperBound(*it, true));
  }
  if (const auto it = s.find("multipleOf"); it != s.end()) {
    if (!it->is_number() || it->get<double>() != 1.0) {
      return Unsupported("multipleOf", ptr, "other than 1");
    }
  }
  if (lo > hi) {
    return InvalidArgument(fmt::format(
        "JSON schema keywords minimum/maximum/exclusiveMinimum/exclusiveMaximum at {} admit no "
        "integer of at most 16 digits",
        Where(ptr)));
  }
  if (lo == -kCap && hi == kCap) return Shared("integer");
  return IntegerRange(lo, hi);
}

Result<Expr> Compiler::NumberSchema(const json& s, const std::string& ptr) {
  for (const char* key :
       {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}) {
    const auto it = s.find(key);
    if (it == s.end() || (it->is_boolean() && !it->get<bool>())) continue;
    return Unsupported(key, ptr, "on type 'number'");
  }
  return Shared("number");
}

}  // namespace tandem::structured::json_schema_detail
