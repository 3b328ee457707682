// Jinja built-ins the chat templates use: filters (| name), tests (is name), methods on values
// (.strip(), .items(), ...) and global functions (raise_exception, namespace, range,
// strftime_now).
// Each throws TemplateError positioned at `at` for an unknown name or bad arguments, and for a
// result past `limits` (range() longer than max_loop_iterations; a string from replace, join,
// tojson past max_output_bytes), checked before the result is built.
// Reference: jinja2/filters.py, jinja2/tests.py; Python str/dict methods.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "text/jinja/ast.h"
#include "text/jinja/render_limits.h"
#include "text/jinja/value.h"

namespace tandem::text::jinja {

using Kwargs = std::vector<std::pair<std::string, Value>>;

// args[0] is the filtered value.
Value ApplyFilter(const std::string& name, const std::vector<Value>& args, const Kwargs& kwargs,
                  const Expr& at, const RenderLimits& limits);

// args[0] is the tested value.
bool ApplyTest(const std::string& name, const std::vector<Value>& args, const Expr& at);

// object.method(args...).
Value CallMethod(const Value& object, const std::string& method, const std::vector<Value>& args,
                 const Kwargs& kwargs, const Expr& at, const RenderLimits& limits);

// True when `name` is a global function CallFunction knows.
bool IsGlobalFunction(const std::string& name);
Value CallFunction(const std::string& name, const std::vector<Value>& args, const Kwargs& kwargs,
                   const Expr& at, const RenderLimits& limits);

// Fails at `at` naming --chat-template-max-output-bytes when `bytes` exceeds the limit.
void CheckStringSize(int64_t bytes, const RenderLimits& limits, const Expr& at);

}  // namespace tandem::text::jinja
