// Internal to the JSON Schema compiler (json_schema_*.cpp in structured/): its limits, the
// helpers its files share (keyword table and error messages, JSON pointers and rule names, type
// names, the lexical pieces of JSON text) and the Compiler class, whose member functions are
// spread over one file per part of the schema language: json_schema_compiler.cpp (the driver:
// dispatch, shared rules, enum/const, types), json_schema_refs.cpp ($ref),
// json_schema_combinators.cpp (allOf/anyOf/oneOf), json_schema_strings.cpp,
// json_schema_numbers.cpp, json_schema_objects.cpp and json_schema_arrays.cpp. The public API and
// the mapping it implements are in json_schema_compiler.h; nothing here is used outside those
// files.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "structured/grammar.h"

namespace tandem::structured::json_schema_detail {

using json = nlohmann::ordered_json;  // the schema's key order is the output's property order

inline constexpr int kMaxDepth = 128;
// JSON values (enum members, merged alternatives) deeper than this are refused before they are
// copied, compared or printed (all recursive in nlohmann::json).
inline constexpr int kMaxValueDepth = 4 * kMaxDepth;
inline constexpr int64_t kMaxIntMagnitude = 9'999'999'999'999'999;  // 16 digits
inline constexpr int64_t kMaxCount = 10000;                         // minLength ... maxItems
// Subschemas compiled in all (an anyOf's siblings are compiled once per alternative, so nesting
// could otherwise take exponential time).
inline constexpr int kMaxSchemas = 50000;

// ---------------------------------------------------------------------------------------------
// Keywords and messages (json_schema_keywords.cpp).

enum class Group { kAnnotation, kStructure, kGeneral, kString, kNumeric, kObject, kArray };

// The group of a known keyword; nullopt for a keyword the compiler does not know.
std::optional<Group> KeywordGroup(std::string_view keyword);

// The JSON pointer `ptr` for a message: "the root" when empty.
std::string Where(const std::string& ptr);

// "JSON schema keyword 'k' at P is not supported (why)".
Status Unsupported(std::string_view keyword, const std::string& ptr, std::string_view why = {});

// "JSON schema keyword 'k' at P <what>", for malformed values.
Status BadKeyword(std::string_view keyword, const std::string& ptr, std::string_view what);

// The JSON pointer `ptr` + "/" + `token` (~ and / escaped), and + "/" + `index` after that.
std::string Child(const std::string& ptr, std::string_view token);
std::string Child(const std::string& ptr, std::string_view token, size_t index);

// A rule-name fragment from arbitrary text: [a-zA-Z0-9-], at most 40 characters, never empty.
std::string RuleToken(std::string_view text);

// Whether `value` nests deeper than `limit` (checked without recursing further than that).
bool DeeperThan(const json& value, int limit);

// Compact JSON text of `value`; nlohmann throws on strings that are not UTF-8.
Result<std::string> CompactText(const json& value, std::string_view keyword,
                                const std::string& ptr);

// Keys of `schema` that constrain (neither annotations nor $defs/definitions/nullable), except
// those in `except`.
std::vector<std::string> ConstraintKeys(const json& schema,
                                        std::initializer_list<std::string_view> except);

// `true`, or an object of annotations only.
bool IsTrivialSchema(const json& schema);

// ---------------------------------------------------------------------------------------------
// Type names (json_schema_keywords.cpp).

// The type names of a "type" value (a name or a non-empty array of them), without repeats.
Result<std::vector<std::string>> ParseTypes(const json& type, const std::string& ptr);

bool HasType(const std::vector<std::string>& types, std::string_view t);

// The types of `a` that `b` allows too ("integer" where one says integer and the other number).
std::vector<std::string> IntersectTypes(const std::vector<std::string>& a,
                                        const std::vector<std::string>& b);

// Whether JSON value `v` is of type `t`.
bool ValueHasType(const json& v, std::string_view t);

// minLength/maxLength/minItems/maxItems: a non-negative integer, at most kMaxCount.
Result<std::optional<int32_t>> GetCount(const json& schema, std::string_view keyword,
                                        const std::string& ptr);

// ---------------------------------------------------------------------------------------------
// Lexical pieces (json_schema_lexical.cpp).

Expr Class(uint32_t lo, uint32_t hi);
// One of the ASCII characters of `chars` (or an ASCII letter or digit, for `alnum`).
Expr Chars(std::string_view chars, bool alnum = false);
Expr AlnumOr(std::string_view chars);
Expr Digits(int32_t min, int32_t max);
Expr HexDigit();
// The bodies of the shared rules "ws", "char", "integer" and "number".
Expr WsBody();
Expr CharBody();
Expr IntegerBody();
Expr NumberBody();

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

}  // namespace tandem::structured::json_schema_detail
