#pragma once

namespace tandem::apps {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace tandem::apps
