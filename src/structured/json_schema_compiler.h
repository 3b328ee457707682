// CompileJsonSchema: a JSON Schema (response_format {"type":"json_schema"}, vLLM's guided_json /
// structured_outputs.json) into a Grammar whose root rule matches exactly the JSON texts that are
// valid against the schema, written compactly or lightly spaced. JsonObjectGrammar is the grammar
// of response_format {"type":"json_object"}.
//
// Sources: JSON Schema 2020-12 (Core and Validation) for the meaning of each keyword; vLLM's
// xgrammar backend (xgrammar's JSON schema converter, strict mode) and llama.cpp's
// json-schema-to-grammar as behavioural references (no code taken from either).
//
// Text form. No whitespace before or after the root value. Between tokens,
//   ws ::= "" | " " | "\n" [ ]{0,20}
// (bounded so that a model cannot emit whitespace forever) after `{` `[` `,` `:` and before `}`
// `]`, nowhere else: `{"a":1}`, `{ "a": 1 }` and a pretty-printed object all match. All optional
// whitespace goes through that one rule: emptying its body gives compact JSON only
// (disable_any_whitespace).
//
// Mapping, keyword by keyword:
// - Schema `true` or `{}`: any JSON value. `false`: kInvalidArgument (matches nothing).
// - type: one of string/integer/number/boolean/null/object/array, or an array of them (a choice;
//   "integer" is dropped beside "number", which covers it). Without "type" the types are inferred
//   from the keywords present (properties/required/additionalProperties... -> object,
//   items/prefixItems/minItems... -> array, minLength/pattern/format -> string,
//   minimum/maximum/multipleOf... -> number); with none of them, any JSON value. Keywords of a type
//   the schema does not allow are vacuous (JSON Schema applies them to their type only): ignored.
// - string: `"` char* `"`, char ::= [^"\\ U+0000-U+001F] | "\\" (["\\/bfnrt] | "u" hex{4}).
//   minLength/maxLength -> char{min,max}: a code point or one escape is one character (a
//   surrogate pair \uD83D\uDE00 counts two, unlike JSON Schema's code points).
//   pattern -> CompileRegex (full match, as vLLM's backends do) inside the quotes, escape-aware:
//   the regex matches decoded content, and each code point it allows is matched in its canonical
//   JSON encoding (raw, except `"` `\` as \" \\, controls as \b \f \n \r \t or \u00XX); other
//   escapes of ordinary characters (\u0041 for A) are not accepted there.
//   format: date, time, date-time (RFC 3339, time with a Z or +hh:mm offset), uuid, ipv4, email
//   and uri (regular approximations: dot-atom local part @ dotted host name; scheme ":" URI
//   characters). Any other format is refused by name. pattern, format and minLength/maxLength
//   exclude one another (their intersection is not built): refused.
// - integer: -?(0|[1-9][0-9]{0,15}) (16 digits at most, so that sampling terminates).
//   minimum/maximum/exclusiveMinimum/exclusiveMaximum (numbers, fractional ones rounded inwards;
//   draft-4 boolean exclusiveMinimum/exclusiveMaximum too) -> an exact grammar of the integer
//   range by digit-by-digit decomposition (negative ranges and one-sided bounds included; never
//   "-0" then; a bound beyond 16 digits is clamped, and bounds leaving no integer are refused).
//   multipleOf: only 1 (trivial for integers); else refused.
// - number: -?(0|[1-9][0-9]{0,15})("." [0-9]{1,16})?([eE] [-+]? [0-9]{1,3})?. Bounds and
//   multipleOf on "number" are refused (not supported).
// - boolean, null: the literals.
// - enum / const: a choice of the values' compact JSON texts (nlohmann dump(): no inner
//   whitespace, 1.0 stays "1.0"), filtered by "type" when present; other constraint keywords
//   beside them are refused.
// - object: properties in the schema's order (as xgrammar; the schema is an ordered_json).
//   Required names missing from "properties" come after them. Required properties must appear,
//   optional ones may be omitted, commas right in every combination. additionalProperties absent or
//   false: no other keys (strict, as OpenAI's strict mode and xgrammar's strict mode:
//   {"type":"object"} is `{}` only). additionalProperties true or a schema: any further string keys
//   after the listed ones, with values of that schema (the keys are not kept from equalling the
//   listed names: a documented approximation). unevaluatedProperties stands for
//   additionalProperties when that is absent. A required name missing from properties takes the
//   additionalProperties schema, or is refused when there is none. A property whose schema is false
//   is left out (refused when required).
//   minProperties/maxProperties/patternProperties/propertyNames/
//   dependentRequired/dependentSchemas: refused unless trivially satisfied (e.g. minProperties
//   no more than the required count, patternProperties {}).
// - array: items (a schema; false: none; absent: any values, or none after prefixItems — tuples
//   are strict like objects), prefixItems (a tuple; draft-7 items-as-array with additionalItems
//   also), minItems/maxItems (repetition bounds), unevaluatedItems stands for items when that is
//   absent. uniqueItems true and contains are refused.
// - anyOf / oneOf: a choice (oneOf is treated as anyOf: exclusivity is not enforced). allOf with
//   one schema: that schema; with more: refused. Constraint keywords beside anyOf/oneOf/allOf are
//   merged into each alternative ("type" intersected, "required" united; a keyword present in
//   both with different values is refused); alternatives that cannot match are dropped.
// - $ref: local JSON pointers "#", "#/$defs/NAME", "#/definitions/NAME" or any "#/..." pointer
//   (~0 ~1 unescaped) -> one named rule per target ("root", "def-NAME", "ref-..."), so recursive
//   schemas become recursive rules. A reference cycle that consumes no `{` or `[` (left recursion)
//   is refused, as are remote references, anchors and constraints beside $ref. $defs and
//   definitions are not constraints; only the referenced ones are compiled.
// - nullable (OpenAPI): true adds null; false nothing.
// - Ignored annotations: title, description, default, examples, $schema, $id, $anchor, $comment,
//   deprecated, readOnly, writeOnly, contentEncoding, contentMediaType.
// - Any other keyword (not, if/then/else, $dynamicRef, ...) is refused: a constraint is never
//   silently ignored.
// Limits: schemas nest at most 128 deep; minLength/maxLength/minItems/maxItems above 10000 are
// refused (the bounds are repetitions the matcher unrolls); at most 50000 subschemas are
// compiled in all (siblings of anyOf are compiled once per alternative, which nesting could make
// exponential).
//
// Errors are kInvalidArgument naming the keyword and the JSON pointer of the schema holding it
// ("the root" for the top), e.g. "JSON schema keyword 'patternProperties' at /properties/a is
// not supported". Compiling never throws, crashes or loops, whatever the input. Rule bodies are
// linear in the schema's size (property values, items and optional-property suffixes are named
// rules, not copies).
//
// Rule names: "root"; shared "ws", "char", "string", "integer", "number", "value", "object",
// "array"; per schema "<parent>-<property>", "<parent>-item", "<parent>-additional",
// "<parent>-after-<property>" (what may follow an optional property), "<parent>-<N>" (inside
// anyOf alternative N), "def-NAME"; "-2", "-3"... when a name is taken.
#pragma once

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "structured/grammar.h"

namespace tandem::structured {

// Compiles a JSON Schema into a Grammar whose root rule matches exactly the compact-or-lightly-
// spaced JSON texts valid against it. Errors: kInvalidArgument naming the keyword and the JSON
// pointer where it is.
Result<Grammar> CompileJsonSchema(const nlohmann::ordered_json& schema);

// Any JSON object (response_format {"type":"json_object"}): an object at the top, any values
// inside.
Grammar JsonObjectGrammar();

}  // namespace tandem::structured
