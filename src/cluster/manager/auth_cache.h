// Who is calling: resolves a request's `Authorization: Bearer` (API key, worker key or the
// registration token) or its session cookie to a Principal. Keys and users are cached in
// memory and kept current by the store's watch feed, so a deleted or changed key takes effect
// on the next request (GPUStack caches them for minutes: gpustack#5273).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/store/store.h"
#include "http/types.h"

namespace tandem::cluster::manager {

struct Principal {
  enum class Kind { kAnonymous, kUser, kApiKey, kWorker, kRegistration };
  Kind kind = Kind::kAnonymous;
  int64_t user_id = 0;
  std::string username;
  bool is_admin = false;
  int64_t api_key_id = 0;           // 0 for a session
  std::vector<std::string> scopes;  // "*", "management", "inference" ("worker" for agents)
  std::vector<std::string> allowed_model_names;  // empty = all
  int64_t worker_id = 0;                         // kWorker
  std::string failure;  // why a presented credential was refused ("" = none given)

  bool authenticated() const { return kind != Kind::kAnonymous; }
  // A session, or a key with scope "*" or `scope`.
  bool HasScope(const std::string& scope) const;
  bool MayUseModel(const std::string& model_name) const;
};

// Name of the session cookie.
inline constexpr const char* kSessionCookie = "tandem_session";

class AuthCache {
 public:
  explicit AuthCache(store::Store& store) : store_(store) {}
  ~AuthCache();

  // Subscribes to the api_keys and users tables (replaying their rows).
  Status Start(std::string session_key, std::string registration_token_hash);

  // The caller of `request` at `now_unix`.
  Principal Resolve(const http::HttpRequest& request, int64_t now_unix) const;

  const std::string& session_key() const { return session_key_; }

 private:
  struct Key {
    int64_t id = 0;
    std::string salt;
    std::string hashed_secret;
    int64_t expires_at = 0;  // unix seconds; 0 = never
    std::vector<std::string> scopes;
    std::vector<std::string> allowed_model_names;
    int64_t user_id = 0;
    int64_t worker_id = 0;
  };
  struct User {
    std::string username;
    bool is_admin = false;
    int64_t session_epoch = 0;
  };
  void OnKeyEvent(const store::WatchEvent& event);
  void OnUserEvent(const store::WatchEvent& event);

  store::Store& store_;
  std::string session_key_;
  std::string registration_token_hash_;
  mutable std::mutex mutex_;
  std::map<std::string, Key> keys_;  // by access key
  std::map<int64_t, User> users_;
  std::vector<int64_t> subscriptions_;
};

}  // namespace tandem::cluster::manager
