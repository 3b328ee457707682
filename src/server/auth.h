// API-key check for /v1/* (vLLM --api-key): the client sends `Authorization: Bearer <key>`, or
// `x-api-key: <key>` as Anthropic's clients do.
// Keys are kept only as SHA-256 digests and compared in constant time (CRYPTO_memcmp), so the
// time to reject does not reveal how many leading bytes matched.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::server {

class ApiKeyAuth {
 public:
  // `api_keys` empty: authentication off, every request passes.
  explicit ApiKeyAuth(const std::vector<std::string>& api_keys);

  bool enabled() const { return !key_digests_.empty(); }

  // True when auth is off or `authorization_header` is "Bearer <k>" for a configured key.
  // Every configured key is compared (no early exit). Thread-safe (const).
  bool Check(std::string_view authorization_header) const;

  // True when auth is off or `key` (an x-api-key header's value) is a configured key. Same
  // comparison as Check. Thread-safe (const).
  bool CheckKey(std::string_view key) const;

 private:
  using Digest = std::array<unsigned char, 32>;
  static Digest Sha256(std::string_view data);
  std::vector<Digest> key_digests_;
};

}  // namespace tandem::server
