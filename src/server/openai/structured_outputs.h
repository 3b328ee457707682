// Structured outputs in a request: which constraint it asks for, compiled (structured/) and
// checked here, at the edge, and carried to the workers as GBNF text
// (SamplingParams::structured_grammar). Design: docs/design/structured-outputs.md.
//
// Accepted, as vLLM does (one kind per request; two → 400):
//   response_format {"type": "json_schema", "json_schema": {"schema": {...}}} | {"type":
//   "json_object"} | {"type": "text"};
//   structured_outputs {"json" | "regex" | "choice" | "grammar" | "json_object"}, with
//   disable_any_whitespace (honoured: no optional whitespace in JSON), disable_fallback and
//   disable_additional_properties (no effect: one backend, strict objects by default);
//   the older guided_json / guided_regex / guided_choice / guided_grammar fields.
// Refused with a 400 naming the field: structural_tag, whitespace_pattern,
// guided_whitespace_pattern, and any schema keyword, regex construct or grammar the compilers
// do not handle. guided_decoding_backend / structured_outputs.backend are logged as having no
// effect (tandem has one backend).
// Chat's tool_choice "required" / {named function} is enforced the same way, by vLLM's schemas:
// a JSON array of {"name", "parameters"} objects, or the named tool's parameters.
//
// Reference: vLLM entrypoints/openai/protocol.py (StructuredOutputsParams, the guided_* fields,
// _get_json_schema_from_tool) and sampling_params.py StructuredOutputsParams.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "server/errors.h"

namespace tandem::server::openai {

// The GBNF text of the request's constraint, "" when it has none. Errors: 400 naming the
// field (param) for a wrong type, two constraints at once, an unsupported option, or a
// schema / regex / grammar that does not compile (the compiler's message).
// `body` keeps the request's key order: a schema's properties are generated in that order.
ApiResult<std::string> ParseStructuredOutputs(const nlohmann::ordered_json& body);

// The GBNF for chat's tool_choice: "required" → an array of one or more {"name": one of the
// tools, "parameters": its schema} (at most `max_calls` of them; -1 = no limit; 1 with
// parallel_tool_calls false); a named function → that function's parameters; "" for
// "auto"/"none". `tools`: the request's OpenAI tools array. Errors: 400 (param "tools") when a
// tool's parameters schema does not compile.
ApiResult<std::string> ForcedToolCallGrammar(const nlohmann::ordered_json& tools, bool required,
                                             const std::string& named_function, int32_t max_calls);

}  // namespace tandem::server::openai
