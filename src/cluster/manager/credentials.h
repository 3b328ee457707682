// Secrets of the manager: passwords (PBKDF2-HMAC-SHA256, salted), API keys
// (`tandem_<16 hex access>_<32 hex secret>`, only a salted SHA-256 of the secret stored, compared
// in constant time), and signed session cookies (HMAC-SHA256 over user id and expiry).
// Randomness from OpenSSL's CSPRNG. Reference: RFC 8018 (PBKDF2), RFC 2104 (HMAC).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tandem::cluster::manager {

// `bytes` random bytes as lower-case hex (2·bytes characters).
std::string RandomHex(size_t bytes);

// "pbkdf2_sha256$ITERATIONS$SALT_HEX$HASH_HEX".
std::string HashPassword(std::string_view password);
// Constant-time check of `password` against HashPassword's output; false on a malformed hash.
bool VerifyPassword(std::string_view password, std::string_view stored);

struct ApiKeyParts {
  std::string access;  // 16 hex: the row's name, shown masked in lists
  std::string secret;  // 32 hex: never stored
};
// A new random key; value() is the plaintext the user gets once.
ApiKeyParts NewApiKey();
std::string ApiKeyValue(const ApiKeyParts& key);
// Splits "tandem_<16 hex>_<32 hex>"; nullopt for anything else.
std::optional<ApiKeyParts> ParseApiKey(std::string_view value);
// Hex SHA-256 of salt‖secret.
std::string HashSecret(std::string_view salt, std::string_view secret);
// Constant-time equality of two hex digests (false when the sizes differ).
bool DigestsEqual(std::string_view a, std::string_view b);

// A session cookie value "USER_ID.EPOCH.EXPIRES_UNIX.HMAC_HEX" signed with `key`. EPOCH is
// the user's session_epoch when it was made: logout and password changes bump it, which
// revokes every earlier cookie of that user.
std::string SignSession(int64_t user_id, int64_t epoch, int64_t expires_unix, std::string_view key);
struct SessionClaims {
  int64_t user_id = 0;
  int64_t epoch = 0;
};
// The claims of a correctly signed, unexpired cookie value; nullopt otherwise.
std::optional<SessionClaims> VerifySession(std::string_view cookie, std::string_view key,
                                           int64_t now_unix);

}  // namespace tandem::cluster::manager
