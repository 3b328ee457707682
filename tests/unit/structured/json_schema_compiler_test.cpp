#include "structured/json_schema_compiler.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "structured/automaton.h"
#include "structured/gbnf_parser.h"
#include "testing.h"

namespace tandem::structured {
namespace {

using nlohmann::json;
using testing::ReferenceMatch;

// Every rule reference names a rule, and every name is [a-zA-Z0-9-]+.
void ExpectWellFormed(const Grammar& g) {
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (e.kind == Expr::Kind::kRuleRef) {
      EXPECT_NE(g.Find(e.rule), nullptr) << "undefined rule " << e.rule;
    }
    for (const Expr& child : e.children) walk(child);
  };
  ASSERT_NE(g.Find(g.root), nullptr);
  for (const auto& [name, body] : g.rules) {
    EXPECT_FALSE(name.empty());
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789-"),
              std::string::npos)
        << name;
    walk(body);
  }
  // The text form parses back, and the grammar compiles for the matcher (no left recursion).
  const Result<Grammar> reparsed = ParseGbnf(ToGbnf(g));
  EXPECT_TRUE(reparsed.ok()) << reparsed.status().ToString() << "\n" << ToGbnf(g);
  const auto automaton = Automaton::Compile(g);
  EXPECT_TRUE(automaton.ok()) << automaton.status().ToString() << "\n" << ToGbnf(g);
}

Grammar MustCompile(const std::string& schema_text) {
  const Result<Grammar> g = CompileJsonSchema(json::parse(schema_text));
  EXPECT_TRUE(g.ok()) << schema_text << ": " << g.status().ToString();
  if (!g.ok()) return Grammar{};
  ExpectWellFormed(g.value());
  return g.value();
}

// ---------------------------------------------------------------------------------------------
// Schemas with texts that must match and texts that must not.

struct MatchCase {
  std::string name;
  std::string schema;
  std::vector<std::string> accept;
  std::vector<std::string> reject;
};

void PrintTo(const MatchCase& c, std::ostream* os) { *os << c.name << ": " << c.schema; }

class JsonSchemaMatchTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(JsonSchemaMatchTest, AcceptsValidAndRejectsInvalidTexts) {
  const MatchCase& c = GetParam();
  const Grammar g = MustCompile(c.schema);
  if (::testing::Test::HasFailure()) return;
  for (const std::string& text : c.accept) {
    EXPECT_TRUE(ReferenceMatch(g, text)) << "should accept: " << text << "\n" << ToGbnf(g);
  }
  for (const std::string& text : c.reject) {
    EXPECT_FALSE(ReferenceMatch(g, text)) << "should reject: " << text << "\n" << ToGbnf(g);
  }
}

const std::vector<MatchCase> kMatchCases = {
    {"StringWithEscapes",
     R"({"type":"string"})",
     {R"("abc")", R"("")", R"("a\"b")", R"("\u00e9")", "\"\xC3\xA9\"", R"("line\nx")",
      R"("\\\/\b\f\r\t")"},
     {"abc", "\"a", R"("a"b")", "\"a\nb\"", R"("\x")", R"("\u12")", R"( "a")", R"("a" )",
      "\"\x01\""}},
    {"StringLengthBounds",
     R"({"type":"string","minLength":2,"maxLength":3})",
     {R"("ab")", R"("abc")", "\"\xC3\xA9\xC3\xA9\"", R"("a\n")", R"("\u00e9b")"},
     {R"("a")", R"("abcd")", "\"\xC3\xA9\"", R"("")"}},
    {"MaxLengthCountsCodepoints",
     R"({"maxLength":1})",
     {"\"\xC3\xA9\"", R"("\u00e9")", R"("")", "\"\xF0\x9F\x98\x80\""},
     {R"("ab")", "\"\xC3\xA9\xC3\xA9\"", "1"}},
    {"IntegerPlain",
     R"({"type":"integer"})",
     {"0", "-0", "42", "-7", "1234567890123456"},
     {"007", "1.5", R"("1")", "12345678901234567", "+1", "1e3", "-", ""}},
    {"IntegerRangeEdges",
     R"({"type":"integer","minimum":5,"maximum":123})",
     {"5", "6", "9", "10", "99", "100", "119", "120", "123"},
     {"4", "124", "-0", "007", "05", "0", "-5", "1000", "130"}},
    {"IntegerNegativeRange",
     R"({"type":"integer","minimum":-20,"maximum":-3})",
     {"-20", "-3", "-10", "-19", "-9"},
     {"-2", "-21", "3", "-0", "0", "-03"}},
    {"IntegerRangeAcrossZero",
     R"({"type":"integer","minimum":-15,"maximum":7})",
     {"-15", "-1", "0", "7", "-9"},
     {"-16", "8", "-0", "10"}},
    {"IntegerExclusiveBounds",
     R"({"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10})",
     {"1", "9", "5"},
     {"0", "10", "-1"}},
    {"IntegerDraft4ExclusiveBounds",
     R"({"type":"integer","minimum":0,"exclusiveMinimum":true,"maximum":3})",
     {"1", "3"},
     {"0", "4"}},
    {"IntegerMinimumOnly",
     R"({"type":"integer","minimum":10})",
     {"10", "11", "99", "100", "5000000", "9999999999999999"},
     {"9", "0", "-1", "-10", "10000000000000000"}},
    {"IntegerMaximumOnly",
     R"({"type":"integer","maximum":-5})",
     {"-5", "-6", "-100", "-9999999999999999"},
     {"-4", "0", "5", "-0"}},
    {"IntegerFractionalBounds",
     R"({"type":"integer","minimum":1.5,"maximum":3.5})",
     {"2", "3"},
     {"1", "4", "2.5"}},
    {"Number",
     R"({"type":"number"})",
     {"0", "-1.5", "1e10", "2.5E-3", "1.0", "-0.25e+2"},
     {"01", "1.", ".5", "1e", R"("1")", "NaN", "1e1234"}},
    {"BooleanAndNull",
     R"({"type":["boolean","null"]})",
     {"true", "false", "null"},
     {"True", "1", R"("true")", "nul"}},
    {"TypeArray",
     R"({"type":["string","integer"],"maxLength":1})",
     {R"("a")", "12"},
     {R"("ab")", "1.5", "null"}},
    {"EnumOfMixedTypes",
     R"({"enum":["a",1,null,true,{"x":[1,2]},2.5]})",
     {R"("a")", "1", "null", "true", R"({"x":[1,2]})", "2.5"},
     {R"("b")", "2", "false", R"({"x":[1]})", "a"}},
    {"EnumFilteredByType", R"({"type":"string","enum":["a",1]})", {R"("a")"}, {"1"}},
    {"Const", R"({"const":"fixed","description":"d"})", {R"("fixed")"}, {R"("other")", "fixed"}},
    {"ObjectRequiredAndOptional",
     R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},
         "c":{"type":"boolean"}},"required":["b"]})",
     {R"({"b":"x"})", R"({"a":1,"b":"x"})", R"({"b":"x","c":true})",
      R"({"a":1,"b":"x","c":false})"},
     {"{}", R"({"a":1})", R"({"a":1,"b":"x",})", R"({,"b":"x"})", R"({"a":1,,"b":"x"})",
      R"({"b":"x","d":1})", R"({"b":1})", R"({"b":"x","a":1})", R"({"b":"x""c":true})",
      R"({"b":"x",,"c":true})"}},
    {"ObjectAllOptional",
     R"({"properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}}})",
     {"{}", R"({"a":1})", R"({"b":2})", R"({"c":3})", R"({"a":1,"c":3})", R"({"b":2,"c":3})",
      R"({"a":1,"b":2,"c":3})"},
     {"{,}", R"({"a":1,})", R"({,"a":1})", R"({"a":1"b":2})", R"({"d":1})", R"({"a":1,,"c":3})",
      "1"}},
    {"ObjectRequiredAfterOptional",
     R"({"properties":{"a":{"type":"null"},"b":{"type":"null"},"c":{"type":"null"}},
         "required":["c"]})",
     {R"({"c":null})", R"({"a":null,"c":null})", R"({"b":null,"c":null})",
      R"({"a":null,"b":null,"c":null})"},
     {R"({"a":null})", R"({"a":null,"b":null})", R"({,"c":null})", "{}"}},
    {"ObjectStrictByDefault", R"({"type":"object"})", {"{}", "{ }"}, {R"({"a":1})", "[]"}},
    {"ObjectAdditionalTrue",
     R"({"properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":true})",
     {R"({"a":1})", R"({"a":1,"z":[1]})", R"({"a":1,"x":{},"y":null})"},
     {R"({"z":1})", R"({"a":1,})", R"({"a":1,"x"})"}},
    {"ObjectAdditionalSchema",
     R"({"type":"object","additionalProperties":{"type":"integer"}})",
     {"{}", R"({"x":1})", R"({"x":1,"y":2})", R"({ "x": 1 })"},
     {R"({"x":"s"})", R"({"x":1,})", R"({,"x":1})"}},
    {"ObjectUnevaluatedPropertiesAsAdditional",
     R"({"type":"object","unevaluatedProperties":{"type":"null"}})",
     {"{}", R"({"x":null})"},
     {R"({"x":1})"}},
    {"RequiredNameTakesAdditionalSchema",
     R"({"type":"object","required":["id"],"additionalProperties":{"type":"integer"}})",
     {R"({"id":1})", R"({"id":1,"x":2})"},
     {"{}", R"({"id":"a"})"}},
    {"FalsePropertyNeverAppears",
     R"({"properties":{"a":false,"b":{"type":"null"}}})",
     {"{}", R"({"b":null})"},
     {R"({"a":1})", R"({"a":null})"}},
    {"WhitespaceVariants",
     R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"items":{"type":"integer"}}},
         "required":["a","b"]})",
     {R"({"a":1,"b":[]})", R"({ "a": 1, "b": [ 1, 2 ] })",
      "{\n  \"a\": 1,\n  \"b\": [\n    1\n  ]\n}", "{\"a\":1,\"b\":[\n]}"},
     {R"({"a" :1,"b":[]})", R"({"a":1 ,"b":[]})", "\t{\"a\":1,\"b\":[]}", R"( {"a":1,"b":[]})",
      "{\"a\":1,\"b\":[]}\n", "{\"a\":1,\"b\":[]\t}", "{\"a\":1,\n\n\"b\":[]}"}},
    {"ArrayItemsWithBounds",
     R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})",
     {"[1]", "[1,2,3]", "[ 1, 2 ]"},
     {"[]", "[1,2,3,4]", "[1,]", "[,1]", R"(["a"])", "[1 ,2]"}},
    {"NestedArrays",
     R"({"type":"array","items":{"type":"array","items":{"type":"boolean"},"maxItems":2},
         "minItems":2})",
     {"[[],[true]]", "[[true,false],[]]", "[[],[],[]]"},
     {"[[]]", "[[true,true,true],[]]", "[[1],[]]", "[]"}},
    {"ArrayOfAnything", R"({"type":"array"})", {"[]", R"([1,"a",{"b":[null]}])"}, {"[1,]", "{}"}},
    {"TuplePrefixItems",
     R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}]})",
     {R"(["a",1])", R"(["a"])", "[]", R"([ "a", 1 ])"},
     {R"([1,"a"])", R"(["a",1,2])", R"(["a",])", "[1]"}},
    {"TupleThenItemsWithMinItems",
     R"({"prefixItems":[{"type":"string"}],"items":{"type":"integer"},"minItems":2,"maxItems":3})",
     {R"(["a",1])", R"(["a",1,2])"},
     {R"(["a"])", R"(["a","b"])", "[]", R"(["a",1,2,3])"}},
    {"Draft7TupleWithAdditionalItems",
     R"({"items":[{"type":"null"}],"additionalItems":{"type":"boolean"}})",
     {"[]", "[null]", "[null,true,false]"},
     {"[true]", "[null,null]"}},
    {"AnyOf",
     R"({"anyOf":[{"type":"integer","minimum":10},{"type":"string","maxLength":1}]})",
     {"10", "11", R"("a")"},
     {"9", R"("ab")", "null"}},
    {"AnyOfMergesSiblings",
     R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},
         "anyOf":[{"required":["a"]},{"required":["b"]}]})",
     {R"({"a":1})", R"({"b":2})", R"({"a":1,"b":2})"},
     {"{}", R"({"c":1})"}},
    {"AnyOfIntersectsTypes",
     R"({"type":["integer","null"],"anyOf":[{"type":"number"},{"type":"string"}]})",
     {"1"},
     {"null", R"("a")", "1.5"}},
    {"OneOfAsAnyOf",
     R"({"oneOf":[{"type":"null"},{"type":"boolean"},false]})",
     {"null", "true"},
     {"1"}},
    {"AllOfSingleRef",
     R"({"allOf":[{"$ref":"#/$defs/X"}],"description":"d","$defs":{"X":{"type":"integer"}}})",
     {"1"},
     {R"("a")"}},
    {"RecursiveTree",
     R"({"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","properties":{
         "v":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},
         "required":["v"]}}})",
     {R"({"v":1})", R"({"children":[],"v":1})", R"({"children":[{"v":2}],"v":1})",
      R"({"children":[{"children":[{"v":3}],"v":2}],"v":1})"},
     {R"({"children":[{}],"v":1})", R"({"v":1,"children":[]})",
      R"({"children":[{"children":[{"v":"x"}],"v":2}],"v":1})", "{}"}},
    {"RecursiveRoot",
     R"({"type":"object","properties":{"next":{"$ref":"#"}}})",
     {"{}", R"({"next":{}})", R"({"next":{"next":{}}})"},
     {R"({"next":1})", R"({"next":{"next":[]}})"}},
    {"RefPointerUnescaping",
     R"({"$ref":"#/definitions/a~1b~0c","definitions":{"a/b~c":{"type":"null"}}})",
     {"null"},
     {"1"}},
    {"FormatDate",
     R"({"type":"string","format":"date"})",
     {R"("2024-02-29")", R"("1999-12-31")"},
     {R"("2024-13-01")", R"("2024-1-01")", R"("24-01-01")", R"("2024-01-32")", "2024-01-01"}},
    {"FormatDateTime",
     R"({"format":"date-time"})",
     {R"("2024-01-02T03:04:05Z")", R"("2024-01-02T03:04:05.123+05:30")"},
     {R"("2024-01-02 03:04:05Z")", R"("2024-01-02T24:00:00Z")", R"("2024-01-02T03:04:05")"}},
    {"FormatTime",
     R"({"format":"time"})",
     {R"("23:59:60Z")", R"("00:00:00-01:00")"},
     {R"("25:00:00Z")", R"("12:00")"}},
    {"FormatUuid",
     R"({"format":"uuid"})",
     {R"("123e4567-e89b-12d3-a456-426614174000")"},
     {R"("123e4567e89b12d3a456426614174000")", R"("123e4567-e89b-12d3-a456-42661417400g")"}},
    {"FormatIpv4",
     R"({"format":"ipv4"})",
     {R"("192.168.0.1")", R"("255.255.255.0")"},
     {R"("256.1.1.1")", R"("1.2.3")", R"("01.2.3.4")"}},
    {"FormatEmail",
     R"({"format":"email"})",
     {R"("a.b+c@example.com")", R"("x@a-b.io")"},
     {R"("a@b")", R"("@example.com")", R"("a b@c.de")", R"("a@-b.com")"}},
    {"FormatUri",
     R"({"format":"uri"})",
     {R"("https://x.org/a?b=c#d")", R"("urn:isbn:123")"},
     {R"("no scheme")", R"("1http://x")"}},
    {"Pattern",
     R"({"type":"string","pattern":"^[a-z]+\\d$"})",
     {R"("ab1")", R"("z9")"},
     {R"("AB1")", R"("ab")", R"("1")"}},
    {"PatternEscapesQuotesAndControls",
     R"({"pattern":"a\"b|x\\ny|[\\\\]"})",
     {R"("a\"b")", R"("x\ny")", R"("\\")"},
     {R"("a"b")", "\"x\ny\"", R"("\")"}},
    {"AnyValueSchemas",
     R"(true)",
     {"1", R"("x")", R"([1,{"a":null}])", R"({"a":[true]})"},
     {R"({"a":})", "[1,]", " 1"}},
    {"EmptySchemaIsAnyValue",
     R"({"title":"t"})",
     {"null", "{}", R"({"k":{"j":[]}})"},
     {"{", "nul"}},
    {"Nullable", R"({"type":"string","nullable":true})", {R"("a")", "null"}, {"1"}},
    {"TypeInferredFromKeywords",
     R"({"properties":{"a":{"type":"null"}}})",
     {"{}", R"({"a":null})"},
     {"1", R"("a")"}},
    {"VacuousKeywordsOfOtherTypes",
     R"({"type":"string","minimum":3,"properties":{}})",
     {R"("a")"},
     {"3"}},
    {"PydanticModel",
     R"({"$defs":{"Color":{"enum":["red","green"],"title":"Color","type":"string"}},
         "properties":{"age":{"anyOf":[{"type":"integer"},{"type":"null"}],"default":null,
         "title":"Age"},"color":{"$ref":"#/$defs/Color"},"name":{"title":"Name","type":"string"},
         "tags":{"default":[],"items":{"type":"string"},"title":"Tags","type":"array"}},
         "required":["name","color"],"title":"Item","type":"object"})",
     {R"({"color":"red","name":"x"})", R"({"age":3,"color":"green","name":"","tags":["a"]})",
      R"({"age":null,"color":"red","name":"x"})"},
     {R"({"color":"blue","name":"x"})", R"({"name":"x"})",
      R"({"age":"3","color":"red","name":"x"})", R"({"color":"red","name":"x","tags":[1]})"}},
    {"PropertyNamesNeedingEscapes",
     R"({"properties":{"a\"b":{"type":"null"}},"required":["a\"b"]})",
     {R"({"a\"b":null})"},
     {R"({"a"b":null})"}},
};

INSTANTIATE_TEST_SUITE_P(JsonSchema, JsonSchemaMatchTest, ::testing::ValuesIn(kMatchCases),
                         [](const ::testing::TestParamInfo<MatchCase>& info) {
                           return info.param.name;
                         });

// ---------------------------------------------------------------------------------------------
// Refusals: kInvalidArgument naming the keyword (and, where given, where it is).

struct RefusalCase {
  std::string schema;
  std::vector<std::string> message_parts;
};

class JsonSchemaRefusalTest : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(JsonSchemaRefusalTest, RefusesNamingTheKeyword) {
  const RefusalCase& c = GetParam();
  const Result<Grammar> g = CompileJsonSchema(json::parse(c.schema));
  ASSERT_FALSE(g.ok()) << c.schema << " compiled:\n" << ToGbnf(g.value());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  for (const std::string& part : c.message_parts) {
    EXPECT_NE(g.status().message().find(part), std::string::npos)
        << c.schema << " -> " << g.status().message() << " (wanted '" << part << "')";
  }
}

const std::vector<RefusalCase> kRefusalCases = {
    {R"({"properties":{"a":{"type":"object","patternProperties":{"x":{}}}}})",
     {"JSON schema keyword 'patternProperties' at /properties/a is not supported"}},
    {R"({"type":"string","format":"hostname"})", {"'format'", "hostname"}},
    {R"({"type":"number","minimum":0})", {"'minimum'", "number"}},
    {R"({"type":"number","exclusiveMaximum":1})", {"'exclusiveMaximum'"}},
    {R"({"type":"integer","multipleOf":3})", {"'multipleOf'"}},
    {R"({"type":"array","uniqueItems":true})", {"'uniqueItems'"}},
    {R"({"type":"array","contains":{"type":"null"}})", {"'contains'"}},
    {R"({"allOf":[{"type":"object"},{"required":["a"]}]})", {"'allOf'"}},
    {R"({"$ref":"https://example.com/s.json"})", {"'$ref'", "local"}},
    {R"({"$ref":"#foo"})", {"'$ref'", "anchor"}},
    {R"({"$ref":"#/$defs/missing"})", {"'$ref'", "does not resolve"}},
    {R"({"not":{"type":"null"}})", {"JSON schema keyword 'not' at the root is not supported"}},
    {R"({"if":{},"then":{}})", {"'if'"}},
    {R"({"properties":{"x~/y":{"frobnicate":1}}})", {"'frobnicate' at /properties/x~0~1y"}},
    {"false", {"false"}},
    {R"({"properties":{"a":false},"required":["a"]})", {"'required'", "'a'"}},
    {R"({"type":"object","minProperties":1})", {"'minProperties'"}},
    {R"({"type":"object","maxProperties":1,"additionalProperties":true})", {"'maxProperties'"}},
    {R"({"type":"object","propertyNames":{"pattern":"^a"}})", {"'propertyNames'"}},
    {R"({"properties":{"a":{},"b":{}},"dependentRequired":{"a":["b"]}})", {"'dependentRequired'"}},
    {R"({"type":"object","dependentSchemas":{"a":{"required":["b"]}}})", {"'dependentSchemas'"}},
    {R"({"type":"fancy"})", {"'type'", "fancy"}},
    {R"({"type":[]})", {"'type'"}},
    {R"({"type":"string","minLength":5,"maxLength":2})", {"'minLength'"}},
    {R"({"type":"string","maxLength":100000})", {"'maxLength'"}},
    {R"({"type":"string","minLength":-1})", {"'minLength'"}},
    {R"({"type":"string","pattern":"^a$","maxLength":3})", {"'maxLength'", "'pattern'"}},
    {R"({"type":"string","pattern":"(a"})", {"'pattern'"}},
    {R"({"type":"string","pattern":5})", {"'pattern'"}},
    {R"({"type":"integer","minimum":10,"maximum":5})", {"minimum", "admit no integer"}},
    {R"({"type":"integer","minimum":1e20})", {"admit no integer"}},
    {R"({"type":"integer","minimum":"1"})", {"'minimum'"}},
    {R"({"$ref":"#"})", {"'$ref'", "left recursion"}},
    {R"({"anyOf":[{"$ref":"#"},{"type":"null"}]})", {"'$ref'", "left recursion"}},
    {R"({"$ref":"#/$defs/A","$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}}})",
     {"left recursion"}},
    {R"({"$ref":"#/$defs/A","minimum":1,"$defs":{"A":{}}})", {"'minimum'", "$ref"}},
    {R"({"type":"string","maxLength":3,"anyOf":[{"maxLength":1}]})", {"'maxLength'", "anyOf"}},
    {R"({"anyOf":[false]})", {"'anyOf'"}},
    {R"({"anyOf":[{"type":"null"}],"oneOf":[{"type":"null"}]})", {"'oneOf'"}},
    {R"({"enum":[]})", {"'enum'"}},
    {R"({"enum":"a"})", {"'enum'"}},
    {R"({"enum":["a"],"maxLength":3})", {"'maxLength'", "enum"}},
    {R"({"type":"object","required":["x"]})", {"'required'", "'x'"}},
    {R"({"required":"x"})", {"'required'"}},
    {R"({"properties":[]})", {"'properties'"}},
    {R"({"items":3})", {"'items'"}},
    {R"({"prefixItems":{}})", {"'prefixItems'"}},
    {R"({"items":{"type":"null"},"minItems":3,"maxItems":2})", {"'minItems'"}},
    {R"({"prefixItems":[{}],"items":false,"minItems":2})", {"'minItems'"}},
    {R"({"$defs":[]})", {"'$defs'"}},
    {R"({"nullable":"yes"})", {"'nullable'"}},
    {"1", {"must be an object or a boolean"}},
    {R"({"anyOf":[3]})", {"/anyOf/0"}},
};

INSTANTIATE_TEST_SUITE_P(JsonSchema, JsonSchemaRefusalTest, ::testing::ValuesIn(kRefusalCases));

// ---------------------------------------------------------------------------------------------
// Integer ranges: every integer of a window around the bounds, against arithmetic.

TEST(JsonSchemaIntegerRangeTest, MatchesExactlyTheIntegersInRange) {
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {5, 123},     {-20, -3}, {-15, 7},    {0, 0}, {-1, -1}, {99, 101}, {1, 1000},
      {-999, -100}, {10, 19},  {-310, 450}, {7, 7}, {0, 9},   {100, 100}};
  for (const auto& [lo, hi] : ranges) {
    const Grammar g =
        MustCompile(json{{"type", "integer"}, {"minimum", lo}, {"maximum", hi}}.dump());
    for (int64_t v = lo - 25; v <= hi + 25; ++v) {
      EXPECT_EQ(ReferenceMatch(g, std::to_string(v)), v >= lo && v <= hi)
          << v << " in [" << lo << ", " << hi << "]\n"
          << ToGbnf(g);
    }
    EXPECT_FALSE(ReferenceMatch(g, "-0"));
    EXPECT_FALSE(ReferenceMatch(g, "0" + std::to_string(std::max<int64_t>(lo, 1))));
  }
}

TEST(JsonSchemaIntegerRangeTest, PseudoRandomRangesAgreeWithArithmetic) {
  uint64_t state = 12345;
  const auto next = [&](int64_t span) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(span));
  };
  for (int round = 0; round < 12; ++round) {
    int64_t lo = next(4000) - 2000;
    int64_t hi = lo + next(3000);
    const Grammar g =
        MustCompile(json{{"type", "integer"}, {"minimum", lo}, {"maximum", hi}}.dump());
    for (int probe = 0; probe < 150; ++probe) {
      const int64_t v = lo - 50 + next(hi - lo + 101);
      EXPECT_EQ(ReferenceMatch(g, std::to_string(v)), v >= lo && v <= hi)
          << v << " in [" << lo << ", " << hi << "]";
    }
  }
}

TEST(JsonSchemaIntegerRangeTest, LargeBoundsStayWithinSixteenDigits) {
  const Grammar g = MustCompile(R"({"type":"integer","minimum":9999999999999990})");
  EXPECT_TRUE(ReferenceMatch(g, "9999999999999990"));
  EXPECT_TRUE(ReferenceMatch(g, "9999999999999999"));
  EXPECT_FALSE(ReferenceMatch(g, "9999999999999989"));
  EXPECT_FALSE(ReferenceMatch(g, "10000000000000000"));
  // A bound beyond 16 digits clamps; refused only when no integer of 16 digits is left.
  const Grammar huge = MustCompile(R"({"type":"integer","maximum":1e30})");
  EXPECT_TRUE(ReferenceMatch(huge, "-9999999999999999"));
  EXPECT_FALSE(CompileJsonSchema(json::parse(R"({"type":"integer","maximum":-1e30})")).ok());
}

// ---------------------------------------------------------------------------------------------
// Rules, text form, and the json_object grammar.

TEST(JsonSchemaCompilerTest, RecursiveRefBecomesNamedRule) {
  const Grammar g = MustCompile(
      R"({"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","properties":{
          "children":{"type":"array","items":{"$ref":"#/$defs/Node"}}}}}})");
  ASSERT_NE(g.Find("def-Node"), nullptr);
  const std::string gbnf = ToGbnf(g);
  EXPECT_NE(gbnf.find("root ::= def-Node\n"), std::string::npos) << gbnf;
  EXPECT_NE(gbnf.find("\ndef-Node-children ::= "), std::string::npos) << gbnf;
}

TEST(JsonSchemaCompilerTest, WhitespaceRuleIsBounded) {
  const Grammar g = MustCompile(R"({"type":"array"})");
  EXPECT_NE(ToGbnf(g).find("ws ::= (\"\" | \" \" | \"\\n\" [ ]{0,20})\n"), std::string::npos)
      << ToGbnf(g);
  EXPECT_TRUE(ReferenceMatch(g, "[\n" + std::string(20, ' ') + "1]"));
  EXPECT_FALSE(ReferenceMatch(g, "[\n" + std::string(21, ' ') + "1]"));
  EXPECT_FALSE(ReferenceMatch(g, "[  1]"));
}

TEST(JsonSchemaCompilerTest, EmptyingWsRuleLeavesCompactJsonOnly) {
  Grammar g = MustCompile(R"({"properties":{"a":{"items":{"type":"integer"}}},"required":["a"]})");
  for (auto& [name, body] : g.rules) {
    if (name == "ws") body = Empty();
  }
  EXPECT_TRUE(ReferenceMatch(g, R"({"a":[1,2]})"));
  EXPECT_FALSE(ReferenceMatch(g, R"({ "a":[1,2]})"));
  EXPECT_FALSE(ReferenceMatch(g, R"({"a": [1,2]})"));
  EXPECT_FALSE(ReferenceMatch(g, R"({"a":[1, 2]})"));
  EXPECT_FALSE(ReferenceMatch(g, "{\"a\":[1,2]\n}"));
}

TEST(JsonSchemaCompilerTest, OutputIsDeterministic) {
  const std::string schema =
      R"({"properties":{"b":{"type":"integer","minimum":3},"a":{"anyOf":[{"type":"string"},
         {"type":"array","items":{"$ref":"#"}}]}},"required":["b"]})";
  EXPECT_EQ(ToGbnf(MustCompile(schema)), ToGbnf(MustCompile(schema)));
}

TEST(JsonSchemaCompilerTest, ManyOptionalPropertiesStayLinear) {
  json properties = json::object();
  for (int i = 0; i < 300; ++i) properties[std::to_string(1000 + i)] = {{"type", "integer"}};
  const Grammar g = MustCompile(json{{"type", "object"}, {"properties", properties}}.dump());
  EXPECT_LT(ToGbnf(g).size(), 200000u);
  EXPECT_TRUE(ReferenceMatch(g, R"({"1000":1,"1299":2})"));
  EXPECT_FALSE(ReferenceMatch(g, R"({"1299":2,"1000":1})"));
}

TEST(JsonSchemaCompilerTest, DeepNestingIsRefused) {
  json schema = {{"type", "null"}};
  for (int i = 0; i < 200; ++i) schema = {{"type", "array"}, {"items", schema}};
  const Result<Grammar> g = CompileJsonSchema(schema);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("deeper than 128"), std::string::npos)
      << g.status().message();
  json shallow = {{"type", "null"}};
  for (int i = 0; i < 100; ++i) shallow = {{"type", "array"}, {"items", shallow}};
  EXPECT_TRUE(CompileJsonSchema(shallow).ok());
}

TEST(JsonSchemaCompilerTest, ExponentialSiblingMergingIsBounded) {
  // Each level's properties are compiled once per anyOf alternative: 2^60 without a budget.
  json schema = {{"type", "null"}};
  for (int i = 0; i < 60; ++i) {
    schema = {{"properties", {{"x", schema}}},
              {"anyOf", json::array({{{"required", {"x"}}}, json::object()})}};
  }
  const Result<Grammar> g = CompileJsonSchema(schema);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("too large"), std::string::npos) << g.status().message();
}

TEST(JsonSchemaCompilerTest, MalformedSchemasNeverCrash) {
  const std::vector<std::string> inputs = {"null",
                                           R"("x")",
                                           "[]",
                                           R"({"type":null})",
                                           R"({"items":[1]})",
                                           R"({"anyOf":{}})",
                                           R"({"allOf":[]})",
                                           R"({"oneOf":[[]]})",
                                           R"({"$ref":3})",
                                           R"({"$ref":"#/"})",
                                           R"({"$ref":"#/properties/0","properties":[1]})",
                                           R"({"$ref":"#/anyOf/01","anyOf":[{}]})",
                                           R"({"const":{"a":[1,{"b":null}]},"enum":[1]})",
                                           R"({"minItems":1.5})",
                                           R"({"exclusiveMinimum":"x","type":"integer"})",
                                           R"({"format":1})",
                                           R"({"additionalProperties":3})",
                                           R"({"dependentRequired":{"a":3}})",
                                           R"({"uniqueItems":"yes"})",
                                           R"({"type":["integer",3]})"};
  for (const std::string& text : inputs) {
    const Result<Grammar> g = CompileJsonSchema(json::parse(text));
    if (g.ok()) {
      ExpectWellFormed(g.value());
    } else {
      EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument) << text;
    }
  }
  // A string that is not UTF-8 (nlohmann throws when printing it).
  const Result<Grammar> bad = CompileJsonSchema(json{{"enum", {std::string("\xFF")}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("UTF-8"), std::string::npos);
  // A deep enum value is refused, not printed recursively. Built in place as the ordered_json
  // the compiler takes: converting or copying it (an initializer list copies) recurses once
  // per level, which overflowed the stack under ASan's larger frames.
  nlohmann::ordered_json schema = {{"enum", nlohmann::ordered_json::array()}};
  nlohmann::ordered_json* level = &schema["enum"];
  for (int i = 0; i < 5000; ++i) {
    level->push_back(nlohmann::ordered_json::array());
    level = &level->back();
  }
  level->push_back(1);
  EXPECT_FALSE(CompileJsonSchema(schema).ok());
}

TEST(JsonSchemaCompilerTest, JsonObjectGrammarAcceptsAnyObject) {
  const Grammar g = JsonObjectGrammar();
  ExpectWellFormed(g);
  EXPECT_TRUE(ReferenceMatch(g, "{}"));
  EXPECT_TRUE(ReferenceMatch(g, R"({"a":{"b":[1,2.5,"x",null,true]}})"));
  EXPECT_TRUE(ReferenceMatch(g, "{ \"a\": 1,\n  \"b\": {} }"));
  EXPECT_FALSE(ReferenceMatch(g, "[1]"));
  EXPECT_FALSE(ReferenceMatch(g, R"({"a":})"));
  EXPECT_FALSE(ReferenceMatch(g, R"({"a":1,})"));
  EXPECT_FALSE(ReferenceMatch(g, R"("a")"));
}

}  // namespace
}  // namespace tandem::structured
