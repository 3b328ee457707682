#include "cluster/manager/auth_cache.h"

#include <strings.h>

#include <algorithm>

#include "cluster/manager/credentials.h"
#include "cluster/manager/rest_util.h"

namespace tandem::cluster::manager {

using nlohmann::json;
using store::Table;
using store::WatchEvent;

bool Principal::HasScope(const std::string& scope) const {
  const auto has = [&](const char* s) {
    return std::find(scopes.begin(), scopes.end(), s) != scopes.end();
  };
  if (scope == "worker") return kind == Kind::kWorker && has("worker");
  if (kind == Kind::kUser) return true;
  return has("*") || has(scope.c_str());
}

bool Principal::MayUseModel(const std::string& model_name) const {
  return allowed_model_names.empty() ||
         std::find(allowed_model_names.begin(), allowed_model_names.end(), model_name) !=
             allowed_model_names.end();
}

AuthCache::~AuthCache() {
  for (int64_t handle : subscriptions_) store_.Unsubscribe(handle);
}

Status AuthCache::Start(std::string session_key, std::string registration_token_hash) {
  session_key_ = std::move(session_key);
  registration_token_hash_ = std::move(registration_token_hash);
  auto users = store_.Subscribe(
      Table::kUsers, [this](const WatchEvent& e) { OnUserEvent(e); }, true);
  if (!users.ok()) return users.status();
  subscriptions_.push_back(*users);
  auto keys = store_.Subscribe(
      Table::kApiKeys, [this](const WatchEvent& e) { OnKeyEvent(e); }, true);
  if (!keys.ok()) return keys.status();
  subscriptions_.push_back(*keys);
  return Status::Ok();
}

void AuthCache::OnKeyEvent(const WatchEvent& event) {
  std::lock_guard lock(mutex_);
  const std::string& access = event.record.name;
  if (event.type == WatchEvent::kDeleted) {
    keys_.erase(access);
    return;
  }
  const json& d = event.record.data;
  Key key;
  key.id = event.record.id;
  key.salt = d.value("salt", "");
  key.hashed_secret = d.value("hashed_secret", "");
  key.expires_at = d.value("expires_at_unix", int64_t{0});
  key.scopes = d.value("scope", std::vector<std::string>{});
  key.allowed_model_names = d.value("allowed_model_names", std::vector<std::string>{});
  key.user_id = d.value("user_id", int64_t{0});
  key.worker_id = d.value("worker_id", int64_t{0});
  keys_[access] = std::move(key);
}

void AuthCache::OnUserEvent(const WatchEvent& event) {
  std::lock_guard lock(mutex_);
  if (event.type == WatchEvent::kDeleted) {
    users_.erase(event.record.id);
    return;
  }
  users_[event.record.id] = {event.record.name, event.record.data.value("is_admin", false),
                             event.record.data.value("session_epoch", int64_t{0})};
}

Principal AuthCache::Resolve(const http::HttpRequest& request, int64_t now_unix) const {
  Principal p;
  std::string_view authorization = request.authorization();
  constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.empty()) {
    if (authorization.size() <= kBearer.size() ||
        strncasecmp(authorization.data(), kBearer.data(), kBearer.size()) != 0) {
      p.failure = "the Authorization header must be 'Bearer <api key>'";
      return p;
    }
    const std::string_view token = authorization.substr(kBearer.size());
    if (auto parts = ParseApiKey(token)) {
      std::lock_guard lock(mutex_);
      auto it = keys_.find(parts->access);
      if (it == keys_.end() ||
          !DigestsEqual(HashSecret(it->second.salt, parts->secret), it->second.hashed_secret)) {
        p.failure = "invalid API key";
        return p;
      }
      const Key& key = it->second;
      if (key.expires_at > 0 && key.expires_at <= now_unix) {
        p.failure = "the API key has expired";
        return p;
      }
      p.kind = key.worker_id ? Principal::Kind::kWorker : Principal::Kind::kApiKey;
      p.api_key_id = key.id;
      p.scopes = key.scopes;
      p.allowed_model_names = key.allowed_model_names;
      p.worker_id = key.worker_id;
      p.user_id = key.user_id;
      if (auto user = users_.find(key.user_id); user != users_.end()) {
        p.username = user->second.username;
        p.is_admin = user->second.is_admin;
      } else if (!key.worker_id) {
        p = Principal{};
        p.failure = "the API key's user no longer exists";
      }
      return p;
    }
    if (!registration_token_hash_.empty() &&
        DigestsEqual(HashSecret("registration", token), registration_token_hash_)) {
      p.kind = Principal::Kind::kRegistration;
      return p;
    }
    p.failure = "invalid API key";
    return p;
  }
  const std::string cookie = CookieValue(request.Header("cookie"), kSessionCookie);
  if (!cookie.empty()) {
    auto claims = VerifySession(cookie, session_key_, now_unix);
    std::lock_guard lock(mutex_);
    auto user = claims ? users_.find(claims->user_id) : users_.end();
    if (user == users_.end() || user->second.session_epoch != claims->epoch) {
      p.failure = "the session is invalid, expired or logged out; log in again";
      return p;
    }
    p.kind = Principal::Kind::kUser;
    p.user_id = claims->user_id;
    p.username = user->second.username;
    p.is_admin = user->second.is_admin;
    p.scopes = {"*"};
  }
  return p;
}

}  // namespace tandem::cluster::manager
