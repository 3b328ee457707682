// TANDEM_CHECK: broken invariants abort with a message naming the condition and the cause.
// Expected failures use Status/Result (status.h), never this.
#pragma once

#include <sstream>
#include <string>

namespace tandem::internal {

class CheckFailure {
 public:
  CheckFailure(const char* cond, const char* file, int line);
  [[noreturn]] ~CheckFailure();
  template <typename T>
  CheckFailure& operator<<(const T& v) {
    stream_ << v;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

// Lets `TANDEM_CHECK(c) << "msg"` be an expression of type void.
struct Voidify {
  void operator&(CheckFailure&) {}
};

}  // namespace tandem::internal

#define TANDEM_CHECK(cond)                 \
  (cond) ? (void)0                         \
         : ::tandem::internal::Voidify() & \
               ::tandem::internal::CheckFailure(#cond, __FILE__, __LINE__)
