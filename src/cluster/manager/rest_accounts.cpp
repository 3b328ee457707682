// /v2/api-keys, /v2/users and /v2/usage.
#include "cluster/manager/rest_api.h"

#include <fmt/format.h>

#include <ctime>
#include <set>

#include "cluster/manager/credentials.h"
#include "cluster/manager/list_query.h"
#include "cluster/manager/resources.h"

namespace tandem::cluster::manager {

using nlohmann::json;
using store::Record;
using store::Table;

Result<json> RestApi::CreateApiKey(const json& body, const Principal& who) {
  auto request = ValidateApiKeyRequest(body);
  if (!request.ok()) return request.status();
  json& k = *request;
  auto keys = store_.List(Table::kApiKeys);
  if (!keys.ok()) return keys.status();
  for (const Record& r : *keys) {
    if (r.data.value("user_id", int64_t{0}) == who.user_id &&
        r.data.value("name", "") == k["name"] && r.data.value("worker_id", int64_t{0}) == 0) {
      return Conflict(
          fmt::format("you already have an API key named '{}'", k["name"].get<std::string>()));
    }
  }
  const ApiKeyParts key = NewApiKey();
  const std::string salt = RandomHex(16);
  const int64_t expires_in = k["expires_in"];
  k["salt"] = salt;
  k["hashed_secret"] = HashSecret(salt, key.secret);
  k["user_id"] = who.user_id;
  k["worker_id"] = 0;
  k["access_key"] = key.access;
  k["expires_at_unix"] = expires_in > 0 ? NowUnix() + expires_in : 0;
  k["expires_at"] = nullptr;
  if (expires_in > 0) {
    const std::time_t at = NowUnix() + expires_in;
    std::tm utc{};
    gmtime_r(&at, &utc);
    k["expires_at"] = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900,
                                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
  }
  auto record = store_.Create(Table::kApiKeys, key.access, std::move(k));
  if (!record.ok()) return record.status();
  json out = PublicView(Table::kApiKeys, *record);
  out["value"] = ApiKeyValue(key);  // shown once
  return out;
}

Result<json> RestApi::CreateUser(const json& body) {
  auto user = ValidateUserRequest(body, /*create=*/true);
  if (!user.ok()) return user.status();
  json data = {{"username", (*user)["username"]},
               {"full_name", (*user)["full_name"]},
               {"is_admin", (*user)["is_admin"]},
               {"password_hash", HashPassword((*user)["password"].get<std::string>())}};
  auto record = store_.Create(Table::kUsers, (*user)["username"], std::move(data));
  if (!record.ok()) return record.status();
  return PublicView(Table::kUsers, *record);
}

Status RestApi::CheckNotLastAdmin(int64_t id, const char* what) {
  auto users = store_.List(Table::kUsers);
  if (!users.ok()) return users.status();
  int admins = 0;
  for (const Record& u : *users) admins += u.id != id && u.data.value("is_admin", false) ? 1 : 0;
  if (admins == 0) {
    return Conflict(
        fmt::format("the last admin cannot be {}: make another user admin first", what));
  }
  return Status::Ok();
}

Result<json> RestApi::UpdateUser(int64_t id, const json& body) {
  auto current = store_.Get(Table::kUsers, id);
  if (!current.ok()) return current.status();
  auto user = ValidateUserRequest(body, /*create=*/false);
  if (!user.ok()) return user.status();
  if (current->data.value("is_admin", false) && !(*user)["is_admin"].get<bool>()) {
    TANDEM_RETURN_IF_ERROR(CheckNotLastAdmin(id, "demoted"));
  }
  json data = current->data;
  data["username"] = (*user)["username"];
  data["full_name"] = (*user)["full_name"];
  data["is_admin"] = (*user)["is_admin"];
  if (!(*user)["password"].get<std::string>().empty()) {
    data["password_hash"] = HashPassword((*user)["password"].get<std::string>());
    // A new password logs out the sessions made with the old one.
    data["session_epoch"] = current->data.value("session_epoch", int64_t{0}) + 1;
  }
  auto expected = ExpectedVersion(body);
  if (!expected.ok()) return expected.status();
  auto record = store_.Update(Table::kUsers, id, (*user)["username"], std::move(data), *expected);
  if (!record.ok()) return record.status();
  return PublicView(Table::kUsers, *record);
}

Result<json> RestApi::ListUsage(const http::HttpRequest& request, const Principal& who) {
  auto query = ParseListQuery(request.query);
  if (!query.ok()) return query.status();
  auto usage = store_.ListUsage();
  if (!usage.ok()) return usage.status();
  std::set<int64_t> own_keys;
  if (!who.is_admin) {
    auto keys = store_.List(Table::kApiKeys);
    if (!keys.ok()) return keys.status();
    for (const Record& k : *keys) {
      if (k.data.value("user_id", int64_t{0}) == who.user_id) own_keys.insert(k.id);
    }
  }
  std::vector<json> items;
  for (const store::UsageRow& u : *usage) {
    if (!who.is_admin && !own_keys.count(u.api_key_id)) continue;
    items.push_back({{"id", static_cast<int64_t>(items.size()) + 1},
                     {"api_key_id", u.api_key_id},
                     {"model_name", u.model_name},
                     {"date", u.date},
                     {"prompt_tokens", u.prompt_tokens},
                     {"completion_tokens", u.completion_tokens},
                     {"total_tokens", u.prompt_tokens + u.completion_tokens},
                     {"request_count", u.request_count}});
  }
  return ApplyListQuery(*query, std::move(items), "model_name");
}

}  // namespace tandem::cluster::manager
