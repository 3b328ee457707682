#include "cluster/manager/credentials.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <charconv>
#include <stdexcept>
#include <vector>

namespace tandem::cluster::manager {

namespace {

constexpr int kPbkdf2Iterations = 60000;

std::string Hex(const unsigned char* data, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 15];
  }
  return out;
}

bool IsHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string Pbkdf2(std::string_view password, std::string_view salt, int iterations) {
  unsigned char out[32];
  PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                    reinterpret_cast<const unsigned char*>(salt.data()),
                    static_cast<int>(salt.size()), iterations, EVP_sha256(), sizeof(out), out);
  return Hex(out, sizeof(out));
}

std::string Hmac(std::string_view key, std::string_view message) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &size);
  return Hex(out, size);
}

}  // namespace

std::string RandomHex(size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  if (RAND_bytes(buf.data(), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("OpenSSL RAND_bytes failed");  // no entropy: nothing safe to do
  }
  return Hex(buf.data(), bytes);
}

std::string HashPassword(std::string_view password) {
  const std::string salt = RandomHex(16);
  return fmt::format("pbkdf2_sha256${}${}${}", kPbkdf2Iterations, salt,
                     Pbkdf2(password, salt, kPbkdf2Iterations));
}

bool VerifyPassword(std::string_view password, std::string_view stored) {
  constexpr std::string_view kPrefix = "pbkdf2_sha256$";
  if (stored.substr(0, kPrefix.size()) != kPrefix) return false;
  std::string_view rest = stored.substr(kPrefix.size());
  const size_t a = rest.find('$');
  if (a == std::string_view::npos) return false;
  const size_t b = rest.find('$', a + 1);
  if (b == std::string_view::npos) return false;
  int iterations = 0;
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + a, iterations);
  if (ec != std::errc() || ptr != rest.data() + a || iterations < 1 || iterations > 10000000) {
    return false;
  }
  const std::string_view salt = rest.substr(a + 1, b - a - 1);
  return DigestsEqual(Pbkdf2(password, salt, iterations), rest.substr(b + 1));
}

ApiKeyParts NewApiKey() { return {RandomHex(8), RandomHex(16)}; }

std::string ApiKeyValue(const ApiKeyParts& key) {
  return "tandem_" + key.access + "_" + key.secret;
}

std::optional<ApiKeyParts> ParseApiKey(std::string_view value) {
  constexpr std::string_view kPrefix = "tandem_";
  if (value.size() != kPrefix.size() + 16 + 1 + 32) return std::nullopt;
  if (value.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  const std::string_view access = value.substr(kPrefix.size(), 16);
  if (value[kPrefix.size() + 16] != '_') return std::nullopt;
  const std::string_view secret = value.substr(kPrefix.size() + 17);
  if (!IsHex(access) || !IsHex(secret)) return std::nullopt;
  return ApiKeyParts{std::string(access), std::string(secret)};
}

std::string HashSecret(std::string_view salt, std::string_view secret) {
  std::string message;
  message.reserve(salt.size() + secret.size());
  message.append(salt).append(secret);
  unsigned char out[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(message.data()), message.size(), out);
  return Hex(out, sizeof(out));
}

bool DigestsEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string SignSession(int64_t user_id, int64_t epoch, int64_t expires_unix,
                        std::string_view key) {
  const std::string payload = fmt::format("{}.{}.{}", user_id, epoch, expires_unix);
  return payload + "." + Hmac(key, payload);
}

std::optional<SessionClaims> VerifySession(std::string_view cookie, std::string_view key,
                                           int64_t now_unix) {
  const size_t last = cookie.rfind('.');
  if (last == std::string_view::npos) return std::nullopt;
  const std::string_view payload = cookie.substr(0, last);
  if (!DigestsEqual(Hmac(key, payload), cookie.substr(last + 1))) return std::nullopt;
  int64_t fields[3] = {0, 0, 0};
  const char* p = payload.data();
  const char* end = payload.data() + payload.size();
  for (int i = 0; i < 3; ++i) {
    auto [next, ec] = std::from_chars(p, end, fields[i]);
    if (ec != std::errc()) return std::nullopt;
    if (i < 2) {
      if (next == end || *next != '.') return std::nullopt;
      ++next;
    } else if (next != end) {
      return std::nullopt;
    }
    p = next;
  }
  if (fields[2] <= now_unix) return std::nullopt;
  return SessionClaims{fields[0], fields[1]};
}

}  // namespace tandem::cluster::manager
