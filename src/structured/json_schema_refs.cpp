// JSON Schema compiler: "$ref" and the definitions it points into. A local reference ("#",
// "#/$defs/NAME", "#/definitions/NAME" or any "#/..." JSON pointer) is resolved within the root
// schema and compiled once into a named rule ("root", "def-NAME", "ref-..."), so that recursive
// schemas become recursive rules; a cycle of references that consumes no `{` or `[` on the way
// (left recursion, it would match nothing) is refused, as are remote references and anchors.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "structured/json_schema_compiler_internal.h"

namespace tandem::structured::json_schema_detail {
namespace {

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

}  // namespace

Result<Expr> Compiler::RefSchema(const json& s, const std::string& ptr, int depth) {
  const json& ref = s["$ref"];
  if (!ref.is_string()) return BadKeyword("$ref", ptr, "must be a string");
  const std::vector<std::string> beside = ConstraintKeys(s, {"$ref"});
  if (!beside.empty()) return Unsupported(beside.front(), ptr, "beside '$ref'");
  return Ref(ref.get<std::string>(), ptr, depth);
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

}  // namespace tandem::structured::json_schema_detail
