// JSON Schema compiler: "type": "string". The string formats (date, time, date-time, uuid, ipv4,
// email, uri) as grammars of the content between the quotes; pattern escaping, which turns a
// regex over decoded string content into the same set of strings in their canonical JSON
// encoding; and Compiler::StringSchema, which picks one of pattern, format or
// minLength/maxLength (they exclude one another) and wraps the content in quotes.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "structured/json_schema_compiler_internal.h"
#include "structured/regex_compiler.h"

namespace tandem::structured::json_schema_detail {
namespace {

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

}  // namespace

// ---------------------------------------------------------------------------------------------
// The string schema.

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

}  // namespace tandem::structured::json_schema_detail
