// List parameters of the /v2 API, as GPUStack takes them: `page` (1-based; -1 = everything),
// `perPage`, `sort_by=f1,-f2` (a leading '-' sorts descending), `search` (a substring of the
// name), `watch=true`, and every other parameter an exact-match filter on a top-level field.
// The response is {"items": [...], "pagination": {"page", "perPage", "total", "totalPage"}}.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tandem::cluster::manager {

struct ListQuery {
  int64_t page = 1;  // -1 = all
  int64_t per_page = 100;
  std::vector<std::pair<std::string, bool>> sort_by;         // (field, descending); default id asc
  std::vector<std::pair<std::string, std::string>> filters;  // field = value (as text)
  std::string search;  // substring of `search_field`, case-insensitive
  bool watch = false;
};

// Percent-decodes a query component ('+' is a space). Errors: kInvalidArgument on a bad escape.
Result<std::string> DecodeQueryComponent(std::string_view text);

// All (name, value) pairs of a raw query string, decoded, in order.
Result<std::vector<std::pair<std::string, std::string>>> ParseQueryString(std::string_view query);

// Parses a list request's query string. Errors: kInvalidArgument naming the parameter (page 0
// or not a number, perPage < 1 or > 1000, an empty sort field, a bad escape).
Result<ListQuery> ParseListQuery(std::string_view query);

// Whether `item` passes the filters and the search (on `search_field`).
bool MatchesListQuery(const ListQuery& query, const nlohmann::json& item,
                      const std::string& search_field);

// Filters, sorts (stable; by id when no sort_by) and pages `items`.
nlohmann::json ApplyListQuery(const ListQuery& query, std::vector<nlohmann::json> items,
                              const std::string& search_field);

}  // namespace tandem::cluster::manager
