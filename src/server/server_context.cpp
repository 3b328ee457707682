#include "server/server_context.h"

#include <fmt/format.h>

#include <random>

namespace tandem::server {

std::string RandomRequestId(const std::string& prefix) {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return fmt::format("{}{:016x}{:016x}", prefix, rng(), rng());
}

}  // namespace tandem::server
