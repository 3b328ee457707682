#include "server/auth.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

namespace tandem::server {

ApiKeyAuth::ApiKeyAuth(const std::vector<std::string>& api_keys) {
  for (const std::string& key : api_keys) {
    if (!key.empty()) key_digests_.push_back(Sha256(key));
  }
}

ApiKeyAuth::Digest ApiKeyAuth::Sha256(std::string_view data) {
  Digest digest{};
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest.data());
  return digest;
}

bool ApiKeyAuth::Check(std::string_view authorization_header) const {
  if (!enabled()) return true;
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization_header.substr(0, kBearer.size()) != kBearer) return false;
  return CheckKey(authorization_header.substr(kBearer.size()));
}

bool ApiKeyAuth::CheckKey(std::string_view key) const {
  if (!enabled()) return true;
  const Digest presented = Sha256(key);
  int matched = 0;
  for (const Digest& digest : key_digests_) {
    matched |= CRYPTO_memcmp(presented.data(), digest.data(), digest.size()) == 0 ? 1 : 0;
  }
  return matched != 0;
}

}  // namespace tandem::server
