// JSON Schema -> Grammar. The mapping and its sources are in the header; this file is organised
// as: keyword table and messages, lexical pieces (whitespace, strings, numbers, formats), integer
// ranges, pattern escaping, then the Compiler (one schema at a time, recursively, depth-bounded).
#include "structured/json_schema_compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "structured/regex_compiler.h"

namespace tandem::structured {
namespace {

using json = nlohmann::ordered_json;  // the schema's key order is the output's property order

constexpr int kMaxDepth = 128;
// JSON values (enum members, merged alternatives) deeper than this are refused before they are
// copied, compared or printed (all recursive in nlohmann::json).
constexpr int kMaxValueDepth = 4 * kMaxDepth;
constexpr int64_t kMaxIntMagnitude = 9'999'999'999'999'999;  // 16 digits
constexpr int64_t kMaxCount = 10000;                         // minLength ... maxItems
// Subschemas compiled in all (an anyOf's siblings are compiled once per alternative, so nesting
// could otherwise take exponential time).
constexpr int kMaxSchemas = 50000;

// ---------------------------------------------------------------------------------------------
// Keywords and messages.

enum class Group { kAnnotation, kStructure, kGeneral, kString, kNumeric, kObject, kArray };

std::optional<Group> KeywordGroup(std::string_view keyword) {
  // clang-format off
  static const std::map<std::string_view, Group> kGroups = {
      {"title", Group::kAnnotation},           {"description", Group::kAnnotation},
      {"default", Group::kAnnotation},         {"examples", Group::kAnnotation},
      {"$schema", Group::kAnnotation},         {"$id", Group::kAnnotation},
      {"$anchor", Group::kAnnotation},         {"$comment", Group::kAnnotation},
      {"deprecated", Group::kAnnotation},      {"readOnly", Group::kAnnotation},
      {"writeOnly", Group::kAnnotation},       {"contentEncoding", Group::kAnnotation},
      {"contentMediaType", Group::kAnnotation},
      {"$defs", Group::kStructure},            {"definitions", Group::kStructure},
      {"nullable", Group::kStructure},
      {"type", Group::kGeneral},               {"enum", Group::kGeneral},
      {"const", Group::kGeneral},              {"anyOf", Group::kGeneral},
      {"oneOf", Group::kGeneral},              {"allOf", Group::kGeneral},
      {"$ref", Group::kGeneral},
      {"minLength", Group::kString},           {"maxLength", Group::kString},
      {"pattern", Group::kString},             {"format", Group::kString},
      {"minimum", Group::kNumeric},            {"maximum", Group::kNumeric},
      {"exclusiveMinimum", Group::kNumeric},   {"exclusiveMaximum", Group::kNumeric},
      {"multipleOf", Group::kNumeric},
      {"properties", Group::kObject},          {"required", Group::kObject},
      {"additionalProperties", Group::kObject},
      {"unevaluatedProperties", Group::kObject},
      {"minProperties", Group::kObject},       {"maxProperties", Group::kObject},
      {"patternProperties", Group::kObject},   {"propertyNames", Group::kObject},
      {"dependentRequired", Group::kObject},   {"dependentSchemas", Group::kObject},
      {"items", Group::kArray},                {"prefixItems", Group::kArray},
      {"additionalItems", Group::kArray},      {"unevaluatedItems", Group::kArray},
      {"minItems", Group::kArray},             {"maxItems", Group::kArray},
      {"uniqueItems", Group::kArray},          {"contains", Group::kArray},
      {"minContains", Group::kArray},          {"maxContains", Group::kArray},
  };
  // clang-format on
  const auto it = kGroups.find(keyword);
  if (it == kGroups.end()) return std::nullopt;
  return it->second;
}

std::string Where(const std::string& ptr) { return ptr.empty() ? "the root" : ptr; }

Status Unsupported(std::string_view keyword, const std::string& ptr, std::string_view why = {}) {
  std::string message =
      fmt::format("JSON schema keyword '{}' at {} is not supported", keyword, Where(ptr));
  if (!why.empty()) message += fmt::format(" ({})", why);
  return InvalidArgument(std::move(message));
}

// "JSON schema keyword 'k' at P <what>", for malformed values.
Status BadKeyword(std::string_view keyword, const std::string& ptr, std::string_view what) {
  return InvalidArgument(
      fmt::format("JSON schema keyword '{}' at {} {}", keyword, Where(ptr), what));
}

std::string Child(const std::string& ptr, std::string_view token) {
  std::string out = ptr + "/";
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Child(const std::string& ptr, std::string_view token, size_t index) {
  return Child(ptr, token) + "/" + std::to_string(index);
}

// A rule-name fragment from arbitrary text: [a-zA-Z0-9-], at most 40 characters, never empty.
std::string RuleToken(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 40)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '-';
  }
  return out.empty() ? "x" : out;
}

// Whether `value` nests deeper than `limit` (checked without recursing further than that).
bool DeeperThan(const json& value, int limit) {
  if (!value.is_structured()) return false;
  if (limit <= 0) return true;
  for (const json& child : value) {
    if (DeeperThan(child, limit - 1)) return true;
  }
  return false;
}

// Compact JSON text of `value`; nlohmann throws on strings that are not UTF-8.
Result<std::string> CompactText(const json& value, std::string_view keyword,
                                const std::string& ptr) {
  if (DeeperThan(value, kMaxValueDepth)) return BadKeyword(keyword, ptr, "nests too deep");
  try {
    return value.dump();
  } catch (const json::exception&) {
    return BadKeyword(keyword, ptr, "holds a string that is not valid UTF-8");
  }
}

// Keys of `schema` that constrain (neither annotations nor $defs/definitions/nullable), except
// those in `except`.
std::vector<std::string> ConstraintKeys(const json& schema,
                                        std::initializer_list<std::string_view> except) {
  std::vector<std::string> out;
  for (const auto& [key, value] : schema.items()) {
    const std::optional<Group> group = KeywordGroup(key);
    if (group == Group::kAnnotation || group == Group::kStructure) continue;
    if (std::find(except.begin(), except.end(), key) != except.end()) continue;
    out.push_back(key);
  }
  return out;
}

// `true`, or an object of annotations only.
bool IsTrivialSchema(const json& schema) {
  if (schema.is_boolean()) return schema.get<bool>();
  return schema.is_object() && ConstraintKeys(schema, {}).empty();
}

// ---------------------------------------------------------------------------------------------
// Lexical pieces.

Expr Class(uint32_t lo, uint32_t hi) { return CharClass({{lo, hi}}); }

// One of the ASCII characters of `chars` (or an ASCII letter or digit, for `alnum`).
Expr Chars(std::string_view chars, bool alnum = false) {
  std::vector<CodepointRange> ranges;
  if (alnum) ranges = {{'a', 'z'}, {'A', 'Z'}, {'0', '9'}};
  for (char c : chars) ranges.push_back({static_cast<uint32_t>(c), static_cast<uint32_t>(c)});
  return CharClass(std::move(ranges));
}
Expr AlnumOr(std::string_view chars) { return Chars(chars, /*alnum=*/true); }
Expr Digits(int32_t min, int32_t max) { return Repeat(Class('0', '9'), min, max); }
Expr HexDigit() { return CharClass({{'0', '9'}, {'a', 'f'}, {'A', 'F'}}); }

Expr WsBody() {
  return Choice({Empty(), Literal(" "), Sequence({Literal("\n"), Repeat(Class(' ', ' '), 0, 20)})});
}

Expr CharBody() {
  const Expr escaped =
      Choice({Chars("\"\\/bfnrt"), Sequence({Literal("u"), Repeat(HexDigit(), 4, 4)})});
  return Choice({CharClass({{'"', '"'}, {'\\', '\\'}, {0, 0x1F}}, /*negated=*/true),
                 Sequence({Literal("\\"), escaped})});
}

Expr IntegerBody() {
  return Sequence(
      {Optional(Literal("-")), Choice({Literal("0"), Sequence({Class('1', '9'), Digits(0, 15)})})});
}

Expr NumberBody() {
  return Sequence({IntegerBody(), Optional(Sequence({Literal("."), Digits(1, 16)})),
                   Optional(Sequence({Chars("eE"), Optional(Chars("-+")), Digits(1, 3)}))});
}

// ---------------------------------------------------------------------------------------------
// Formats (string content, without the quotes).

Expr TwoDigits(char first_lo, char first_hi, char second_lo, char second_hi) {
  return Sequence({Class(first_lo, first_hi), Class(second_lo, second_hi)});
}

Expr DateExpr() {
  const Expr month = Choice({TwoDigits('0', '0', '1', '9'), TwoDigits('1', '1', '0', '2')});
  const Expr day = Choice({TwoDigits('0', '0', '1', '9'), TwoDigits('1', '2', '0', '9'),
                           TwoDigits('3', '3', '0', '1')});
  return Sequence({Digits(4, 4), Literal("-"), month, Literal("-"), day});
}

Expr TimeExpr() {
  const Expr hour = Choice({TwoDigits('0', '1', '0', '9'), TwoDigits('2', '2', '0', '3')});
  const Expr minute = TwoDigits('0', '5', '0', '9');
  const Expr second = Choice({minute, Literal("60")});  // a leap second
  const Expr offset = Choice({Chars("Zz"), Sequence({Chars("+-"), hour, Literal(":"), minute})});
  return Sequence({hour, Literal(":"), minute, Literal(":"), second,
                   Optional(Sequence({Literal("."), Digits(1, 9)})), offset});
}

Expr UuidExpr() {
  std::vector<Expr> parts;
  for (int32_t n : {8, 4, 4, 4, 12}) {
    if (!parts.empty()) parts.push_back(Literal("-"));
    parts.push_back(Repeat(HexDigit(), n, n));
  }
  return Sequence(std::move(parts));
}

Expr Ipv4Expr() {
  const Expr octet = Choice({Sequence({Literal("25"), Class('0', '5')}),
                             Sequence({Literal("2"), Class('0', '4'), Class('0', '9')}),
                             Sequence({Literal("1"), Digits(2, 2)}),
                             Sequence({Class('1', '9'), Class('0', '9')}), Class('0', '9')});
  return Sequence({octet, Repeat(Sequence({Literal("."), octet}), 3, 3)});
}

Expr EmailExpr() {
  // Dot-atom local part (RFC 5322 atext) "@" a dotted host name of at least two labels.
  const Expr atext = AlnumOr("!#$%&'*+-/=?^_`{|}~");
  const Expr label = Sequence({AlnumOr(""), Optional(Sequence({Star(AlnumOr("-")), AlnumOr("")}))});
  return Sequence({Plus(atext), Star(Sequence({Literal("."), Plus(atext)})), Literal("@"), label,
                   Plus(Sequence({Literal("."), label}))});
}

Expr UriExpr() {
  // scheme ":" then URI characters (RFC 3986 unreserved, reserved and "%").
  const Expr scheme = Sequence({CharClass({{'a', 'z'}, {'A', 'Z'}}), Star(AlnumOr("+-."))});
  const Expr uric = AlnumOr("-._~:/?#[]@!$&'()*+,;=%");
  return Sequence({scheme, Literal(":"), Star(uric)});
}

std::optional<Expr> FormatExpr(std::string_view format) {
  if (format == "date") return DateExpr();
  if (format == "time") return TimeExpr();
  if (format == "date-time") {
    return Sequence({DateExpr(), Chars("Tt"), TimeExpr()});
  }
  if (format == "uuid") return UuidExpr();
  if (format == "ipv4") return Ipv4Expr();
  if (format == "email") return EmailExpr();
  if (format == "uri") return UriExpr();
  return std::nullopt;
}

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

// ---------------------------------------------------------------------------------------------
// Pattern escaping: a regex over decoded string content -> the same set in JSON encoding.

bool NeedsEscape(uint32_t cp) { return cp < 0x20 || cp == '"' || cp == '\\'; }

// The canonical JSON escape of `cp` (NeedsEscape(cp)); \u00XX takes either case of hex letters.
Expr EscapeOf(uint32_t cp) {
  switch (cp) {
    case '"':
      return Literal("\\\"");
    case '\\':
      return Literal("\\\\");
    case '\b':
      return Literal("\\b");
    case '\f':
      return Literal("\\f");
    case '\n':
      return Literal("\\n");
    case '\r':
      return Literal("\\r");
    case '\t':
      return Literal("\\t");
    default:
      break;
  }
  const uint32_t low = cp & 0xF;
  const Expr low_digit =
      low < 10 ? Literal(std::string(1, static_cast<char>('0' + low)))
               : CharClass({{'a' + low - 10, 'a' + low - 10}, {'A' + low - 10, 'A' + low - 10}});
  return Sequence({Literal(fmt::format("\\u00{}", cp >> 4)), low_digit});
}

Expr EscapeLiteral(const std::string& text) {
  std::vector<Expr> parts;
  std::string raw;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (NeedsEscape(byte)) {  // multi-byte UTF-8 bytes are all >= 0x80: never escaped
      parts.push_back(Literal(raw));
      raw.clear();
      parts.push_back(EscapeOf(byte));
    } else {
      raw += c;
    }
  }
  parts.push_back(Literal(raw));
  return Sequence(std::move(parts));
}

Expr EscapeClass(const Expr& e) {
  std::vector<CodepointRange> specials = {{0, 0x1F}, {'"', '"'}, {'\\', '\\'}};
  // raw = e minus the specials = complement(complement(e) + specials).
  std::vector<CodepointRange> outside = CharClass(e.ranges, /*negated=*/true).ranges;
  outside.insert(outside.end(), specials.begin(), specials.end());
  std::vector<Expr> alternatives;
  Expr raw = CharClass(std::move(outside), /*negated=*/true);
  if (!raw.ranges.empty()) alternatives.push_back(std::move(raw));
  for (const CodepointRange& r : e.ranges) {
    for (uint32_t cp = r.lo; cp <= std::min<uint32_t>(r.hi, '\\'); ++cp) {
      if (NeedsEscape(cp)) alternatives.push_back(EscapeOf(cp));
    }
  }
  if (alternatives.empty()) return CharClass({});  // matches nothing, as `e` did
  return Choice(std::move(alternatives));
}

Result<Expr> EscapeForJsonString(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kEmpty:
      return e;
    case Expr::Kind::kLiteral:
      return EscapeLiteral(e.literal);
    case Expr::Kind::kCharClass:
      return EscapeClass(e);
    case Expr::Kind::kRuleRef:
      return InvalidArgument("regex compiled to a rule reference");
    case Expr::Kind::kSequence:
    case Expr::Kind::kChoice:
    case Expr::Kind::kRepeat:
      break;
  }
  std::vector<Expr> children;
  for (const Expr& child : e.children) {
    TANDEM_ASSIGN_OR_RETURN(Expr escaped, EscapeForJsonString(child));
    children.push_back(std::move(escaped));
  }
  if (e.kind == Expr::Kind::kSequence) return Sequence(std::move(children));
  if (e.kind == Expr::Kind::kChoice) return Choice(std::move(children));
  return Repeat(std::move(children[0]), e.min_repeat, e.max_repeat);
}

// ---------------------------------------------------------------------------------------------
// Type names.

const std::vector<std::string>& TypeNames() {
  static const std::vector<std::string> kNames = {"string", "integer", "number", "boolean",
                                                  "null",   "object",  "array"};
  return kNames;
}

Result<std::vector<std::string>> ParseTypes(const json& type, const std::string& ptr) {
  std::vector<std::string> types;
  if (type.is_string()) {
    types.push_back(type.get<std::string>());
  } else if (type.is_array() && !type.empty()) {
    for (const json& t : type) {
      if (!t.is_string()) return BadKeyword("type", ptr, "must hold type names (strings)");
      types.push_back(t.get<std::string>());
    }
  } else {
    return BadKeyword("type", ptr, "must be a type name or a non-empty array of them");
  }
  std::vector<std::string> unique;
  for (const std::string& t : types) {
    if (std::find(TypeNames().begin(), TypeNames().end(), t) == TypeNames().end()) {
      return BadKeyword("type", ptr, fmt::format("names an unknown type '{}'", t));
    }
    if (std::find(unique.begin(), unique.end(), t) == unique.end()) unique.push_back(t);
  }
  return unique;
}

bool HasType(const std::vector<std::string>& types, std::string_view t) {
  return std::find(types.begin(), types.end(), t) != types.end();
}

// The types of `a` that `b` allows too ("integer" where one says integer and the other number).
std::vector<std::string> IntersectTypes(const std::vector<std::string>& a,
                                        const std::vector<std::string>& b) {
  std::vector<std::string> out;
  for (const std::string& t : a) {
    if (HasType(b, t)) {
      out.push_back(t);
    } else if ((t == "integer" && HasType(b, "number")) ||
               (t == "number" && HasType(b, "integer"))) {
      out.push_back("integer");
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Whether JSON value `v` is of type `t`.
bool ValueHasType(const json& v, std::string_view t) {
  if (t == "string") return v.is_string();
  if (t == "number") return v.is_number();
  if (t == "integer") {
    if (v.is_number_integer()) return true;
    return v.is_number_float() && std::isfinite(v.get<double>()) &&
           std::floor(v.get<double>()) == v.get<double>();
  }
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "object") return v.is_object();
  return v.is_array();
}

// minLength/maxLength/minItems/maxItems: a non-negative integer, at most kMaxCount.
Result<std::optional<int32_t>> GetCount(const json& schema, std::string_view keyword,
                                        const std::string& ptr) {
  const auto it = schema.find(keyword);
  if (it == schema.end()) return std::optional<int32_t>();
  const json& v = *it;
  const bool integral = v.is_number_integer() ||
                        (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  if (!integral || v.get<double>() < 0) {
    return BadKeyword(keyword, ptr, "must be a non-negative integer");
  }
  if (v.get<double>() > static_cast<double>(kMaxCount)) {
    return Unsupported(keyword, ptr, fmt::format("above {}", kMaxCount));
  }
  return std::optional<int32_t>(static_cast<int32_t>(v.get<double>()));
}

// ---------------------------------------------------------------------------------------------
// The compiler.

struct Property {
  std::string name;
  const json* schema = nullptr;
  std::string ptr;
  bool required = false;
};

// An array's elements: the tuple members, then items (when allowed) within the count bounds.
struct ArrayShape {
  int32_t min = 0;
  int32_t max = -1;  // -1: unbounded
  std::vector<Expr> tuple;
  std::optional<Expr> item;
};

class Compiler {
 public:
  explicit Compiler(const json& root) : root_(root) {
    names_ = {"root", "ws", "char", "string", "integer", "number", "value", "object", "array"};
  }

  Result<Grammar> CompileRoot() {
    ref_rules_[""] = "root";
    unguarded_ = {""};
    TANDEM_ASSIGN_OR_RETURN(Expr body, Schema(root_, "", "root", 0));
    grammar_.Add("root", std::move(body));
    return std::move(grammar_);
  }

  Grammar AnyObject() {
    grammar_.Add("root", Shared("object"));
    return std::move(grammar_);
  }

 private:
  Result<Expr> Schema(const json& s, const std::string& ptr, const std::string& name, int depth);
  Result<Expr> Dispatch(const json& s, const std::string& ptr, const std::string& name, int depth);
  Result<Expr> Nested(const json& s, const std::string& ptr, const std::string& name, int depth);
  Result<Expr> RefSchema(const json& s, const std::string& ptr, int depth);
  Result<Expr> Ref(const std::string& uri, const std::string& ptr, int depth);
  Result<Expr> AllOfSchema(const json& s, const std::string& ptr, const std::string& name,
                           int depth);
  Result<Expr> AnyOfSchema(const json& s, const std::string& ptr, const std::string& name,
                           int depth);
  Result<json> Conjoin(const json& parent, std::string_view applicator, const json& alt,
                       const std::string& alt_ptr);
  Result<Expr> EnumSchema(const json& s, const std::string& ptr);
  Result<Expr> TypedSchema(const json& s, const std::string& ptr, const std::string& name,
                           int depth);
  Result<Expr> OfType(const std::string& type, const json& s, const std::string& ptr,
                      const std::string& name, int depth);
  Result<Expr> StringSchema(const json& s, const std::string& ptr);
  Result<Expr> IntegerSchema(const json& s, const std::string& ptr);
  Result<Expr> NumberSchema(const json& s, const std::string& ptr);
  Result<Expr> ObjectSchema(const json& s, const std::string& ptr, const std::string& name,
                            int depth);
  Result<std::vector<Property>> ObjectProperties(const json& s, const std::string& ptr,
                                                 const json* additional,
                                                 const std::string& additional_ptr);
  Expr AssembleObject(const std::vector<Property>& props, std::vector<Expr> members,
                      std::optional<Expr> extra, const std::string& name);
  Result<Expr> ArraySchema(const json& s, const std::string& ptr, const std::string& name,
                           int depth);
  Expr AssembleArray(const ArrayShape& shape);

  // A rule named after `base` (made unique) for `e`, or `e` itself when it is already small.
  Expr Named(const std::string& base, Expr e);
  std::string Unique(const std::string& base);
  // A shared rule ("ws", "char", "string", "integer", "number", "value", "object", "array"),
  // added on first use.
  Expr Shared(const std::string& name);
  void AddAnyValueRules();

  const json& root_;
  Grammar grammar_;
  std::set<std::string> names_;                   // taken rule names
  std::map<std::string, std::string> ref_rules_;  // $ref target pointer -> rule name
  std::set<std::string> unguarded_;               // $ref targets entered since the last `{` or `[`
  int schemas_compiled_ = 0;                      // Schema() calls, against kMaxSchemas
};

std::string Compiler::Unique(const std::string& base) {
  std::string name = base;
  for (int i = 2; names_.count(name) > 0; ++i) name = fmt::format("{}-{}", base, i);
  names_.insert(name);
  return name;
}

Expr Compiler::Named(const std::string& base, Expr e) {
  switch (e.kind) {
    case Expr::Kind::kEmpty:
    case Expr::Kind::kLiteral:
    case Expr::Kind::kCharClass:
    case Expr::Kind::kRuleRef:
      return e;
    default:
      break;
  }
  const std::string name = Unique(base);
  grammar_.Add(name, std::move(e));
  return RuleRef(name);
}

Expr Compiler::Shared(const std::string& name) {
  if (grammar_.Find(name) != nullptr) return RuleRef(name);
  if (name == "ws") {
    grammar_.Add(name, WsBody());
  } else if (name == "char") {
    grammar_.Add(name, CharBody());
  } else if (name == "string") {
    Expr ch = Shared("char");
    grammar_.Add(name, Sequence({Literal("\""), Star(std::move(ch)), Literal("\"")}));
  } else if (name == "integer") {
    grammar_.Add(name, IntegerBody());
  } else if (name == "number") {
    grammar_.Add(name, NumberBody());
  } else {
    AddAnyValueRules();
  }
  return RuleRef(name);
}

void Compiler::AddAnyValueRules() {
  const Expr ws = Shared("ws");
  const Expr member = Sequence({Shared("string"), Literal(":"), ws, RuleRef("value")});
  grammar_.Add("value",
               Choice({RuleRef("object"), RuleRef("array"), Shared("string"), Shared("number"),
                       Literal("true"), Literal("false"), Literal("null")}));
  grammar_.Add(
      "object",
      Sequence({Literal("{"), ws,
                Optional(Sequence({member, Star(Sequence({Literal(","), ws, member})), ws})),
                Literal("}")}));
  grammar_.Add(
      "array",
      Sequence({Literal("["), ws,
                Optional(Sequence(
                    {RuleRef("value"), Star(Sequence({Literal(","), ws, RuleRef("value")})), ws})),
                Literal("]")}));
}

Result<Expr> Compiler::Schema(const json& s, const std::string& ptr, const std::string& name,
                              int depth) {
  if (++schemas_compiled_ > kMaxSchemas) {
    return InvalidArgument(
        fmt::format("JSON schema is too large to compile: more than {} subschemas (keywords beside "
                    "anyOf/oneOf are compiled once per alternative)",
                    kMaxSchemas));
  }
  if (depth > kMaxDepth) {
    return InvalidArgument(
        fmt::format("JSON schema at {} nests deeper than {} levels", Where(ptr), kMaxDepth));
  }
  if (s.is_boolean()) {
    if (s.get<bool>()) return Shared("value");
    return InvalidArgument(
        fmt::format("JSON schema at {} is false: it matches nothing", Where(ptr)));
  }
  if (!s.is_object()) {
    return InvalidArgument(
        fmt::format("JSON schema at {} must be an object or a boolean", Where(ptr)));
  }
  for (const auto& [key, value] : s.items()) {
    if (!KeywordGroup(key).has_value()) return Unsupported(key, ptr);
  }
  for (const char* key : {"$defs", "definitions"}) {
    if (s.contains(key) && !s[key].is_object()) return BadKeyword(key, ptr, "must be an object");
  }
  bool nullable = false;
  if (const auto it = s.find("nullable"); it != s.end()) {
    if (!it->is_boolean()) return BadKeyword("nullable", ptr, "must be a boolean");
    nullable = it->get<bool>();
  }
  TANDEM_ASSIGN_OR_RETURN(Expr e, Dispatch(s, ptr, name, depth));
  if (nullable) e = Choice({std::move(e), Literal("null")});
  return e;
}

Result<Expr> Compiler::Dispatch(const json& s, const std::string& ptr, const std::string& name,
                                int depth) {
  if (s.contains("$ref")) return RefSchema(s, ptr, depth);
  if (s.contains("allOf")) return AllOfSchema(s, ptr, name, depth);
  if (s.contains("anyOf") || s.contains("oneOf")) return AnyOfSchema(s, ptr, name, depth);
  if (s.contains("enum") || s.contains("const")) return EnumSchema(s, ptr);
  return TypedSchema(s, ptr, name, depth);
}

Result<Expr> Compiler::Nested(const json& s, const std::string& ptr, const std::string& name,
                              int depth) {
  // A `{` or `[` precedes: a $ref cycle from here on is not left-recursive.
  std::set<std::string> saved;
  saved.swap(unguarded_);
  Result<Expr> result = Schema(s, ptr, name, depth);
  unguarded_.swap(saved);
  return result;
}

Result<Expr> Compiler::RefSchema(const json& s, const std::string& ptr, int depth) {
  const json& ref = s["$ref"];
  if (!ref.is_string()) return BadKeyword("$ref", ptr, "must be a string");
  const std::vector<std::string> beside = ConstraintKeys(s, {"$ref"});
  if (!beside.empty()) return Unsupported(beside.front(), ptr, "beside '$ref'");
  return Ref(ref.get<std::string>(), ptr, depth);
}

// The schema that local reference `uri` ("#" or "#/a/b~1c") names within `root`, with the
// unescaped tokens of its pointer in *tokens.
Result<const json*> ResolveRef(const json& root, const std::string& uri, const std::string& ptr,
                               std::vector<std::string>* tokens) {
  if (uri.empty() || uri[0] != '#') {
    return Unsupported("$ref", ptr, fmt::format("'{}' is not a local reference (#...)", uri));
  }
  if (uri.size() > 1 && uri[1] != '/') {
    return Unsupported("$ref", ptr, fmt::format("'{}' is an anchor, not a JSON pointer", uri));
  }
  const json* target = &root;
  for (size_t pos = 1; pos < uri.size();) {
    const size_t end = std::min(uri.find('/', pos + 1), uri.size());
    std::string token;
    for (size_t i = pos + 1; i < end; ++i) {
      if (uri[i] == '~' && i + 1 < end && (uri[i + 1] == '0' || uri[i + 1] == '1')) {
        token += uri[++i] == '0' ? '~' : '/';
      } else {
        token += uri[i];
      }
    }
    pos = end;
    const bool index = !token.empty() && token.size() < 10 &&
                       token.find_first_not_of("0123456789") == std::string::npos &&
                       (token == "0" || token[0] != '0');
    if (target->is_object() && target->contains(token)) {
      target = &(*target)[token];
    } else if (target->is_array() && index && std::stoul(token) < target->size()) {
      target = &(*target)[std::stoul(token)];
    } else {
      return BadKeyword("$ref", ptr, fmt::format("'{}' does not resolve", uri));
    }
    tokens->push_back(std::move(token));
  }
  return target;
}

Result<Expr> Compiler::Ref(const std::string& uri, const std::string& ptr, int depth) {
  std::vector<std::string> tokens;
  TANDEM_ASSIGN_OR_RETURN(const json* target, ResolveRef(root_, uri, ptr, &tokens));
  std::string canonical;
  for (const std::string& token : tokens) canonical = Child(canonical, token);
  if (unguarded_.count(canonical) > 0) {
    return BadKeyword("$ref", ptr,
                      fmt::format("'{}' refers back to itself before any '{{' or '[' (left "
                                  "recursion: it matches nothing)",
                                  uri));
  }
  if (const auto it = ref_rules_.find(canonical); it != ref_rules_.end()) {
    return RuleRef(it->second);
  }
  std::string base = "ref";
  for (const std::string& token : tokens) base += "-" + RuleToken(token);
  if (tokens.size() == 2 && (tokens[0] == "$defs" || tokens[0] == "definitions")) {
    base = "def-" + RuleToken(tokens[1]);
  }
  const std::string name = Unique(base);
  ref_rules_[canonical] = name;
  unguarded_.insert(canonical);
  Result<Expr> body = Schema(*target, canonical, name, depth + 1);
  unguarded_.erase(canonical);
  if (!body.ok()) return body.status();
  grammar_.Add(name, std::move(body).value());
  return RuleRef(name);
}

Result<json> Compiler::Conjoin(const json& parent, std::string_view applicator, const json& alt,
                               const std::string& alt_ptr) {
  const std::vector<std::string> keys = ConstraintKeys(parent, {applicator});
  if (alt.is_boolean() && !alt.get<bool>()) return json(false);
  if (!alt.is_boolean() && !alt.is_object()) {
    return InvalidArgument(
        fmt::format("JSON schema at {} must be an object or a boolean", Where(alt_ptr)));
  }
  json merged = alt.is_object() ? alt : json::object();
  for (const std::string& key : keys) {
    const json& value = parent[key];
    const auto it = merged.find(key);
    if (it == merged.end()) {
      merged[key] = value;
    } else if (*it == value) {
      continue;
    } else if (key == "type") {
      TANDEM_ASSIGN_OR_RETURN(std::vector<std::string> outer, ParseTypes(value, alt_ptr));
      TANDEM_ASSIGN_OR_RETURN(std::vector<std::string> inner, ParseTypes(*it, alt_ptr));
      const std::vector<std::string> both = IntersectTypes(outer, inner);
      if (both.empty()) return json(false);
      *it = both;
    } else if (key == "required" && value.is_array() && it->is_array()) {
      for (const json& r : value) {
        if (std::find(it->begin(), it->end(), r) == it->end()) it->push_back(r);
      }
    } else {
      return Unsupported(key, alt_ptr,
                         fmt::format("it also appears beside '{}' with another value", applicator));
    }
  }
  return merged;
}

Result<Expr> Compiler::AllOfSchema(const json& s, const std::string& ptr, const std::string& name,
                                   int depth) {
  const json& all = s["allOf"];
  if (!all.is_array() || all.empty()) {
    return BadKeyword("allOf", ptr, "must be a non-empty array of schemas");
  }
  if (all.size() > 1) return Unsupported("allOf", ptr, "with more than one schema");
  const std::string alt_ptr = Child(ptr, "allOf", 0);
  if (ConstraintKeys(s, {"allOf"}).empty()) return Schema(all[0], alt_ptr, name, depth + 1);
  if (DeeperThan(s, kMaxValueDepth)) return BadKeyword("allOf", ptr, "nests too deep");
  TANDEM_ASSIGN_OR_RETURN(json merged, Conjoin(s, "allOf", all[0], alt_ptr));
  return Schema(merged, alt_ptr, name, depth + 1);
}

Result<Expr> Compiler::AnyOfSchema(const json& s, const std::string& ptr, const std::string& name,
                                   int depth) {
  if (s.contains("anyOf") && s.contains("oneOf")) {
    return Unsupported("oneOf", ptr, "beside 'anyOf'");
  }
  const char* keyword = s.contains("anyOf") ? "anyOf" : "oneOf";
  const json& alternatives = s[keyword];
  if (!alternatives.is_array() || alternatives.empty()) {
    return BadKeyword(keyword, ptr, "must be a non-empty array of schemas");
  }
  const bool plain = ConstraintKeys(s, {keyword}).empty();
  if (!plain && DeeperThan(s, kMaxValueDepth)) return BadKeyword(keyword, ptr, "nests too deep");
  std::vector<Expr> choices;
  for (size_t i = 0; i < alternatives.size(); ++i) {
    const std::string alt_ptr = Child(ptr, keyword, i);
    const std::string alt_name = fmt::format("{}-{}", name, i);
    const json& alt = alternatives[i];
    if (alt.is_boolean() && !alt.get<bool>()) continue;  // matches nothing: dropped
    if (plain) {
      TANDEM_ASSIGN_OR_RETURN(Expr e, Schema(alt, alt_ptr, alt_name, depth + 1));
      choices.push_back(std::move(e));
      continue;
    }
    TANDEM_ASSIGN_OR_RETURN(json merged, Conjoin(s, keyword, alt, alt_ptr));
    if (merged.is_boolean() && !merged.get<bool>()) continue;
    TANDEM_ASSIGN_OR_RETURN(Expr e, Schema(merged, alt_ptr, alt_name, depth + 1));
    choices.push_back(std::move(e));
  }
  if (choices.empty()) return BadKeyword(keyword, ptr, "has no alternative that can match");
  return Choice(std::move(choices));
}

Result<Expr> Compiler::EnumSchema(const json& s, const std::string& ptr) {
  const std::vector<std::string> beside = ConstraintKeys(s, {"enum", "const", "type"});
  if (!beside.empty()) return Unsupported(beside.front(), ptr, "beside 'enum' or 'const'");
  std::vector<const json*> values;
  if (const auto it = s.find("enum"); it != s.end()) {
    if (!it->is_array()) return BadKeyword("enum", ptr, "must be an array");
    for (const json& v : *it) values.push_back(&v);
  }
  if (const auto it = s.find("const"); it != s.end()) {
    if (!s.contains("enum")) {
      values.push_back(&*it);
    } else {
      std::erase_if(values, [&](const json* v) {
        return DeeperThan(*v, kMaxValueDepth) || DeeperThan(*it, kMaxValueDepth) || *v != *it;
      });
    }
  }
  if (const auto it = s.find("type"); it != s.end()) {
    TANDEM_ASSIGN_OR_RETURN(std::vector<std::string> types, ParseTypes(*it, ptr));
    std::erase_if(values, [&](const json* v) {
      return std::none_of(types.begin(), types.end(),
                          [&](const std::string& t) { return ValueHasType(*v, t); });
    });
  }
  const char* keyword = s.contains("enum") ? "enum" : "const";
  std::vector<std::string> texts;
  for (const json* v : values) {
    TANDEM_ASSIGN_OR_RETURN(std::string text, CompactText(*v, keyword, ptr));
    if (std::find(texts.begin(), texts.end(), text) == texts.end()) texts.push_back(text);
  }
  if (texts.empty()) return BadKeyword(keyword, ptr, "admits no value (of the schema's type)");
  std::vector<Expr> choices;
  for (std::string& text : texts) choices.push_back(Literal(std::move(text)));
  return Choice(std::move(choices));
}

Result<Expr> Compiler::TypedSchema(const json& s, const std::string& ptr, const std::string& name,
                                   int depth) {
  std::vector<std::string> types;
  if (const auto it = s.find("type"); it != s.end()) {
    TANDEM_ASSIGN_OR_RETURN(types, ParseTypes(*it, ptr));
  } else {
    std::set<Group> groups;
    for (const auto& [key, value] : s.items()) groups.insert(*KeywordGroup(key));
    if (groups.count(Group::kObject)) types.push_back("object");
    if (groups.count(Group::kArray)) types.push_back("array");
    if (groups.count(Group::kString)) types.push_back("string");
    if (groups.count(Group::kNumeric)) types.push_back("number");
    if (types.empty()) return Shared("value");
  }
  if (HasType(types, "number")) std::erase(types, "integer");
  std::vector<Expr> choices;
  for (const std::string& type : types) {
    TANDEM_ASSIGN_OR_RETURN(Expr e, OfType(type, s, ptr, name, depth));
    choices.push_back(std::move(e));
  }
  return Choice(std::move(choices));
}

Result<Expr> Compiler::OfType(const std::string& type, const json& s, const std::string& ptr,
                              const std::string& name, int depth) {
  if (type == "string") return StringSchema(s, ptr);
  if (type == "integer") return IntegerSchema(s, ptr);
  if (type == "number") return NumberSchema(s, ptr);
  if (type == "boolean") return Choice({Literal("true"), Literal("false")});
  if (type == "null") return Literal("null");
  if (type == "object") return ObjectSchema(s, ptr, name, depth);
  return ArraySchema(s, ptr, name, depth);
}

Result<Expr> Compiler::StringSchema(const json& s, const std::string& ptr) {
  std::vector<std::string> present;
  for (const char* key : {"pattern", "format", "minLength", "maxLength"}) {
    if (s.contains(key)) present.push_back(key);
  }
  const bool has_length = s.contains("minLength") || s.contains("maxLength");
  if ((s.contains("pattern") + s.contains("format") + has_length) > 1) {
    return Unsupported(present[1], ptr, fmt::format("together with '{}'", present[0]));
  }
  Expr content = Star(Shared("char"));
  if (const auto it = s.find("pattern"); it != s.end()) {
    if (!it->is_string()) return BadKeyword("pattern", ptr, "must be a string");
    Result<Expr> regex = CompileRegex(it->get<std::string>());
    if (!regex.ok()) return BadKeyword("pattern", ptr, "is invalid: " + regex.status().message());
    Result<Expr> escaped = EscapeForJsonString(regex.value());
    if (!escaped.ok()) return BadKeyword("pattern", ptr, escaped.status().message());
    content = std::move(escaped).value();
  } else if (const auto it = s.find("format"); it != s.end()) {
    if (!it->is_string()) return BadKeyword("format", ptr, "must be a string");
    std::optional<Expr> format = FormatExpr(it->get<std::string>());
    if (!format) {
      return Unsupported("format", ptr, fmt::format("format '{}'", it->get<std::string>()));
    }
    content = std::move(*format);
  } else if (has_length) {
    TANDEM_ASSIGN_OR_RETURN(std::optional<int32_t> min, GetCount(s, "minLength", ptr));
    TANDEM_ASSIGN_OR_RETURN(std::optional<int32_t> max, GetCount(s, "maxLength", ptr));
    if (min && max && *min > *max) return BadKeyword("minLength", ptr, "exceeds maxLength");
    content = Repeat(Shared("char"), min.value_or(0), max.value_or(-1));
  } else {
    return Shared("string");
  }
  return Sequence({Literal("\""), std::move(content), Literal("\"")});
}

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

// The object keywords other than properties/required/additionalProperties: refused unless
// trivially satisfied by the object grammar built from `props` (`open`: further keys allowed).
Status CheckObjectExtras(const json& s, const std::string& ptr, const std::vector<Property>& props,
                         bool open) {
  const auto required_count = static_cast<double>(
      std::count_if(props.begin(), props.end(), [](const Property& p) { return p.required; }));
  const auto is_required = [&](const json& name) {
    return std::any_of(props.begin(), props.end(), [&](const Property& p) {
      return p.required && name.is_string() && p.name == name.get<std::string>();
    });
  };
  const auto can_appear = [&](const std::string& name) {
    return open || std::any_of(props.begin(), props.end(),
                               [&](const Property& p) { return p.name == name; });
  };
  if (const auto it = s.find("minProperties"); it != s.end()) {
    if (!it->is_number() || it->get<double>() > required_count) {
      return Unsupported("minProperties", ptr, "above the number of required properties");
    }
  }
  if (const auto it = s.find("maxProperties"); it != s.end()) {
    if (open || !it->is_number() || it->get<double>() < static_cast<double>(props.size())) {
      return Unsupported("maxProperties", ptr, "below the number of possible properties");
    }
  }
  if (const auto it = s.find("patternProperties"); it != s.end()) {
    if (!it->is_object() || !it->empty()) return Unsupported("patternProperties", ptr);
  }
  if (const auto it = s.find("propertyNames"); it != s.end()) {
    if (!IsTrivialSchema(*it)) return Unsupported("propertyNames", ptr);
  }
  if (const auto it = s.find("dependentSchemas"); it != s.end()) {
    if (!it->is_object() || !std::all_of(it->begin(), it->end(), IsTrivialSchema)) {
      return Unsupported("dependentSchemas", ptr);
    }
  }
  if (const auto it = s.find("dependentRequired"); it != s.end()) {
    if (!it->is_object()) return BadKeyword("dependentRequired", ptr, "must be an object");
    for (auto dep = it->begin(); dep != it->end(); ++dep) {
      if (!can_appear(dep.key())) continue;
      if (!dep->is_array() || !std::all_of(dep->begin(), dep->end(), is_required)) {
        return Unsupported("dependentRequired", ptr,
                           fmt::format("'{}' needs properties that are not required", dep.key()));
      }
    }
  }
  return Status::Ok();
}

Result<std::vector<Property>> Compiler::ObjectProperties(const json& s, const std::string& ptr,
                                                         const json* additional,
                                                         const std::string& additional_ptr) {
  std::set<std::string> required;
  if (const auto it = s.find("required"); it != s.end()) {
    if (!it->is_array()) return BadKeyword("required", ptr, "must be an array of names");
    for (const json& r : *it) {
      if (!r.is_string()) return BadKeyword("required", ptr, "must be an array of names");
      required.insert(r.get<std::string>());
    }
  }
  // In the schema's order (xgrammar and OpenAI keep it: a model writes "reasoning" before
  // "answer" when the schema says so); required names missing from properties come after.
  std::vector<std::string> order;
  std::map<std::string, Property> by_name;
  if (const auto it = s.find("properties"); it != s.end()) {
    if (!it->is_object()) return BadKeyword("properties", ptr, "must be an object");
    const std::string properties_ptr = Child(ptr, "properties");
    for (auto p = it->begin(); p != it->end(); ++p) {
      if (!by_name.count(p.key())) order.push_back(p.key());
      by_name[p.key()] = Property{p.key(), &p.value(), Child(properties_ptr, p.key()),
                                  required.count(p.key()) > 0};
    }
  }
  for (const std::string& r : required) {
    if (by_name.count(r) > 0) continue;
    if (additional == nullptr) {
      return BadKeyword("required", ptr,
                        fmt::format("lists '{}', which is not in 'properties' while no "
                                    "additional properties are allowed",
                                    r));
    }
    by_name[r] = Property{r, additional, additional_ptr, true};
    order.push_back(r);
  }
  std::vector<Property> out;
  for (const std::string& key : order) {
    Property& property = by_name.at(key);
    if (property.schema->is_boolean() && !property.schema->get<bool>()) {
      if (property.required) {
        return BadKeyword("required", ptr, fmt::format("lists '{}', whose schema is false", key));
      }
      continue;  // can never appear
    }
    out.push_back(std::move(property));
  }
  return out;
}

Result<Expr> Compiler::ObjectSchema(const json& s, const std::string& ptr, const std::string& name,
                                    int depth) {
  // Further keys: additionalProperties, else unevaluatedProperties (the same here); none when
  // both are absent (strict).
  const json* additional = nullptr;
  std::string additional_ptr;
  for (const char* key : {"additionalProperties", "unevaluatedProperties"}) {
    const auto it = s.find(key);
    if (it == s.end()) continue;
    if (!it->is_boolean() && !it->is_object()) return BadKeyword(key, ptr, "must be a schema");
    if (!it->is_boolean() || it->get<bool>()) {
      additional = &*it;
      additional_ptr = Child(ptr, key);
    }
    break;
  }
  TANDEM_ASSIGN_OR_RETURN(std::vector<Property> props,
                          ObjectProperties(s, ptr, additional, additional_ptr));
  TANDEM_RETURN_IF_ERROR(CheckObjectExtras(s, ptr, props, additional != nullptr));
  std::vector<Expr> members;  // "\"name\":" ws value, one per property
  for (const Property& p : props) {
    const std::string rule = name + "-" + RuleToken(p.name);
    TANDEM_ASSIGN_OR_RETURN(Expr value, Nested(*p.schema, p.ptr, rule, depth + 1));
    TANDEM_ASSIGN_OR_RETURN(std::string key, CompactText(json(p.name), "properties", ptr));
    members.push_back(Sequence({Literal(key + ":"), Shared("ws"), Named(rule, std::move(value))}));
  }
  std::optional<Expr> extra;
  if (additional != nullptr) {
    const std::string rule = name + "-additional";
    TANDEM_ASSIGN_OR_RETURN(Expr value, Nested(*additional, additional_ptr, rule, depth + 1));
    extra = Sequence({Shared("string"), Literal(":"), Shared("ws"), Named(rule, std::move(value))});
  }
  return AssembleObject(props, std::move(members), std::move(extra), name);
}

Expr Compiler::AssembleObject(const std::vector<Property>& props, std::vector<Expr> members,
                              std::optional<Expr> extra, const std::string& name) {
  const Expr ws = Shared("ws");
  const auto after_comma = [&](const Expr& e) { return Sequence({Literal(","), ws, e}); };
  const size_t n = props.size();
  size_t first_required = n;
  for (size_t i = 0; i < n && first_required == n; ++i) {
    if (props[i].required) first_required = i;
  }
  // rest[k]: the members k.. (required ones, optional ones or not) and then the further keys,
  // each after a comma. rest[1..first_required] are shared by the alternatives below: rules keep
  // the grammar linear in the number of properties.
  std::vector<Expr> rest(n + 1);
  rest[n] = extra ? Star(after_comma(*extra)) : Empty();
  for (size_t k = n; k-- > 0;) {
    Expr item = after_comma(members[k]);
    rest[k] =
        Sequence({props[k].required ? std::move(item) : Optional(std::move(item)), rest[k + 1]});
    if (k >= 1 && k <= first_required) {
      rest[k] = Named(name + "-after-" + RuleToken(props[k - 1].name), std::move(rest[k]));
    }
  }
  // One alternative per possible first member: the optional ones up to the first required one.
  std::vector<Expr> alternatives;
  for (size_t j = 0; j < n && j <= first_required; ++j) {
    alternatives.push_back(Sequence({members[j], rest[j + 1]}));
  }
  const bool can_be_empty = first_required == n;
  if (can_be_empty && extra) alternatives.push_back(Sequence({*extra, rest[n]}));
  if (alternatives.empty()) return Sequence({Literal("{"), ws, Literal("}")});
  Expr inside = Sequence({Choice(std::move(alternatives)), ws});
  return Sequence({Literal("{"), ws, can_be_empty ? Optional(std::move(inside)) : std::move(inside),
                   Literal("}")});
}

// Where an array schema keeps its tuple (prefixItems, or draft-7 items as an array) and the
// schema of the items after it (items, draft-7 additionalItems, else unevaluatedItems).
struct ArrayKeywords {
  const json* prefix = nullptr;
  const char* prefix_key = "prefixItems";
  const json* items = nullptr;
  const char* items_key = "items";
};

Result<ArrayKeywords> FindArrayKeywords(const json& s, const std::string& ptr) {
  ArrayKeywords out;
  if (const auto it = s.find("prefixItems"); it != s.end()) out.prefix = &*it;
  if (const auto it = s.find("items"); it != s.end() && !it->is_array()) out.items = &*it;
  if (const auto it = s.find("items"); it != s.end() && it->is_array()) {
    if (out.prefix != nullptr) return BadKeyword("items", ptr, "is an array beside 'prefixItems'");
    out.prefix = &*it;
    out.prefix_key = "items";
    if (const auto add = s.find("additionalItems"); add != s.end()) {
      out.items = &*add;
      out.items_key = "additionalItems";
    }
  }
  if (const auto it = s.find("unevaluatedItems"); it != s.end() && out.items == nullptr) {
    out.items = &*it;
    out.items_key = "unevaluatedItems";
  }
  if (out.prefix != nullptr && !out.prefix->is_array()) {
    return BadKeyword(out.prefix_key, ptr, "must be an array of schemas");
  }
  if (out.items != nullptr && !out.items->is_boolean() && !out.items->is_object()) {
    return BadKeyword(out.items_key, ptr, "must be a schema");
  }
  static const json kAnything = true;
  if (out.items == nullptr && out.prefix == nullptr) out.items = &kAnything;  // any values
  return out;
}

Result<Expr> Compiler::ArraySchema(const json& s, const std::string& ptr, const std::string& name,
                                   int depth) {
  if (const auto it = s.find("uniqueItems"); it != s.end()) {
    if (!it->is_boolean()) return BadKeyword("uniqueItems", ptr, "must be a boolean");
    if (it->get<bool>()) return Unsupported("uniqueItems", ptr, "true");
  }
  if (s.contains("contains")) return Unsupported("contains", ptr);
  TANDEM_ASSIGN_OR_RETURN(const ArrayKeywords keywords, FindArrayKeywords(s, ptr));
  TANDEM_ASSIGN_OR_RETURN(std::optional<int32_t> min_items, GetCount(s, "minItems", ptr));
  TANDEM_ASSIGN_OR_RETURN(std::optional<int32_t> max_items, GetCount(s, "maxItems", ptr));
  ArrayShape shape;
  shape.min = min_items.value_or(0);
  shape.max = max_items.value_or(-1);
  if (shape.max >= 0 && shape.min > shape.max) {
    return BadKeyword("minItems", ptr, "exceeds maxItems");
  }
  // Tuple members past maxItems or from a `false` one on never appear.
  const json* prefix = keywords.prefix;
  int64_t k = prefix != nullptr ? static_cast<int64_t>(prefix->size()) : 0;
  if (shape.max >= 0) k = std::min<int64_t>(k, shape.max);
  for (int64_t i = 0; i < k; ++i) {
    if ((*prefix)[i].is_boolean() && !(*prefix)[i].get<bool>()) k = i;
  }
  const json* items = keywords.items;
  const bool items_allowed = items != nullptr && !(items->is_boolean() && !items->get<bool>()) &&
                             (shape.max < 0 || shape.max > k);
  if (!items_allowed && shape.min > k) {
    return BadKeyword("minItems", ptr, "asks for more items than the schema allows");
  }
  for (int64_t i = 0; i < k; ++i) {
    TANDEM_ASSIGN_OR_RETURN(Expr e, Nested((*prefix)[i], Child(ptr, keywords.prefix_key, i),
                                           fmt::format("{}-item-{}", name, i), depth + 1));
    shape.tuple.push_back(std::move(e));
  }
  if (items_allowed) {
    const std::string rule = name + "-item";
    TANDEM_ASSIGN_OR_RETURN(Expr e,
                            Nested(*items, Child(ptr, keywords.items_key), rule, depth + 1));
    shape.item = Named(rule, std::move(e));
  }
  return AssembleArray(shape);
}

Expr Compiler::AssembleArray(const ArrayShape& shape) {
  const Expr ws = Shared("ws");
  const auto k = static_cast<int64_t>(shape.tuple.size());
  const int64_t min = shape.min;
  const int64_t max = shape.max;
  // The items after the first `before` elements, each after a comma.
  const auto further = [&](int64_t before) {
    return Repeat(Sequence({Literal(","), ws, *shape.item}),
                  static_cast<int32_t>(std::max<int64_t>(min - before, 0)),
                  max < 0 ? -1 : static_cast<int32_t>(max - before));
  };
  Expr elements;
  if (k == 0) {
    if (!shape.item) return Sequence({Literal("["), ws, Literal("]")});
    elements = Sequence({*shape.item, further(1)});
  } else {
    // The tuple members in order, each optional from minItems on, then the further items.
    elements = shape.item ? further(k) : Empty();
    for (int64_t i = k; i-- > 0;) {
      Expr member = i == 0 ? shape.tuple[0] : Sequence({Literal(","), ws, shape.tuple[i]});
      const bool next_optional = i + 1 < k && i + 1 >= min;
      elements = Sequence(
          {std::move(member), next_optional ? Optional(std::move(elements)) : std::move(elements)});
    }
  }
  Expr inside = Sequence({std::move(elements), ws});
  return Sequence(
      {Literal("["), ws, min == 0 ? Optional(std::move(inside)) : std::move(inside), Literal("]")});
}

}  // namespace

Result<Grammar> CompileJsonSchema(const nlohmann::ordered_json& schema) {
  Compiler compiler(schema);
  return compiler.CompileRoot();
}

Grammar JsonObjectGrammar() {
  const nlohmann::ordered_json unused;
  Compiler compiler(unused);
  return compiler.AnyObject();
}

}  // namespace tandem::structured
