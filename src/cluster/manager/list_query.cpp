#include "cluster/manager/list_query.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/hex.h"

namespace tandem::cluster::manager {

using nlohmann::json;

namespace {

// A field's value as filters compare it: strings as they are, other values as JSON text.
std::string FilterText(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Result<std::string> DecodeQueryComponent(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%') {
      const int hi = i + 1 < text.size() ? HexDigitValue(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? HexDigitValue(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return InvalidArgument(fmt::format("bad percent-escape in the query: '{}'", text));
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> ParseQueryString(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    std::string_view part = query.substr(start, end - start);
    if (!part.empty()) {
      const size_t eq = part.find('=');
      auto name = DecodeQueryComponent(part.substr(0, eq));
      if (!name.ok()) return name.status();
      auto value = DecodeQueryComponent(eq == std::string_view::npos ? "" : part.substr(eq + 1));
      if (!value.ok()) return value.status();
      out.emplace_back(std::move(name).value(), std::move(value).value());
    }
    start = end + 1;
  }
  return out;
}

Result<ListQuery> ParseListQuery(std::string_view query_string) {
  auto params = ParseQueryString(query_string);
  if (!params.ok()) return params.status();
  ListQuery query;
  const auto parse_int = [](const std::string& name, const std::string& text,
                            int64_t* out) -> Status {
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, *out);
    if (ec != std::errc() || ptr != end) {
      return InvalidArgument(
          fmt::format("query parameter '{}': '{}' is not an integer", name, text));
    }
    return Status::Ok();
  };
  for (auto& [name, value] : *params) {
    if (name == "page") {
      TANDEM_RETURN_IF_ERROR(parse_int(name, value, &query.page));
      if (query.page == 0 || query.page < -1) {
        return InvalidArgument("query parameter 'page': pages count from 1 (-1 = all)");
      }
    } else if (name == "perPage" || name == "per_page") {
      TANDEM_RETURN_IF_ERROR(parse_int(name, value, &query.per_page));
      if (query.per_page < 1 || query.per_page > 1000) {
        return InvalidArgument(fmt::format("query parameter '{}': must be 1..1000", name));
      }
    } else if (name == "sort_by") {
      size_t start = 0;
      while (start <= value.size()) {
        size_t end = value.find(',', start);
        if (end == std::string::npos) end = value.size();
        std::string field = value.substr(start, end - start);
        bool descending = false;
        if (!field.empty() && field[0] == '-') {
          descending = true;
          field.erase(0, 1);
        }
        if (field.empty()) {
          return InvalidArgument(
              fmt::format("query parameter 'sort_by': empty field in '{}'", value));
        }
        query.sort_by.emplace_back(std::move(field), descending);
        start = end + 1;
      }
    } else if (name == "search") {
      query.search = value;
    } else if (name == "watch") {
      if (value != "true" && value != "false" && value != "1" && value != "0") {
        return InvalidArgument("query parameter 'watch': expected true or false");
      }
      query.watch = value == "true" || value == "1";
    } else {
      query.filters.emplace_back(std::move(name), std::move(value));
    }
  }
  return query;
}

bool MatchesListQuery(const ListQuery& query, const json& item, const std::string& search_field) {
  for (const auto& [field, value] : query.filters) {
    auto it = item.find(field);
    if (it == item.end() || FilterText(*it) != value) return false;
  }
  if (!query.search.empty()) {
    auto it = item.find(search_field);
    if (it == item.end() || !it->is_string()) return false;
    if (Lower(it->get<std::string>()).find(Lower(query.search)) == std::string::npos) return false;
  }
  return true;
}

json ApplyListQuery(const ListQuery& query, std::vector<json> items,
                    const std::string& search_field) {
  std::vector<json> kept;
  kept.reserve(items.size());
  for (json& item : items) {
    if (MatchesListQuery(query, item, search_field)) kept.push_back(std::move(item));
  }
  auto sort_by = query.sort_by;
  if (sort_by.empty()) sort_by.emplace_back("id", false);
  std::stable_sort(kept.begin(), kept.end(), [&](const json& a, const json& b) {
    for (const auto& [field, descending] : sort_by) {
      const json& x = a.contains(field) ? a[field] : json(nullptr);
      const json& y = b.contains(field) ? b[field] : json(nullptr);
      if (x == y) continue;
      return descending ? y < x : x < y;
    }
    return false;
  });
  const int64_t total = static_cast<int64_t>(kept.size());
  json page_items = json::array();
  int64_t per_page = query.per_page;
  int64_t total_page = 1;
  if (query.page == -1) {
    per_page = std::max<int64_t>(total, 1);
    for (json& item : kept) page_items.push_back(std::move(item));
  } else {
    total_page = std::max<int64_t>((total + per_page - 1) / per_page, 1);
    // A page past the end is empty (compared before multiplying: page may be near INT64_MAX).
    if (query.page - 1 < total_page) {
      const int64_t begin = (query.page - 1) * per_page;
      for (int64_t i = begin; i < std::min(total, begin + per_page); ++i) {
        page_items.push_back(std::move(kept[i]));
      }
    }
  }
  return {
      {"items", std::move(page_items)},
      {"pagination",
       {{"page", query.page}, {"perPage", per_page}, {"total", total}, {"totalPage", total_page}}}};
}

}  // namespace tandem::cluster::manager
