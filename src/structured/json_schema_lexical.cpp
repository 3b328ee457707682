// JSON Schema compiler: the lexical pieces of JSON text as grammar expressions, i.e. character
// class builders (one range, some ASCII characters, digits, hex digits) and the bodies of the
// shared rules "ws" (bounded optional whitespace), "char" (one string character or escape),
// "integer" and "number". The rules themselves are added on first use by Compiler::Shared
// (json_schema_compiler.cpp); the text form they implement is described in json_schema_compiler.h.
#include <string_view>
#include <utility>
#include <vector>

#include "structured/json_schema_compiler_internal.h"

namespace tandem::structured::json_schema_detail {

Expr Class(uint32_t lo, uint32_t hi) { return CharClass({{lo, hi}}); }

Expr Chars(std::string_view chars, bool alnum) {
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

}  // namespace tandem::structured::json_schema_detail
