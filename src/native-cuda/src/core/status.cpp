#include "core/status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

namespace symmem {
namespace {

// Per thread, so concurrent callers (Java threads) never see each other's messages.
thread_local std::string t_last_error;

std::string vformat(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  char small[512];
  int n = std::vsnprintf(small, sizeof small, fmt, copy);
  va_end(copy);
  if (n < 0) return fmt;
  if (static_cast<size_t>(n) < sizeof small) return std::string(small, n);
  std::string big(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(&big[0], big.size(), fmt, args);
  big.resize(n);
  return big;
}

}  // namespace

symmem_status fail(symmem_status status, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  t_last_error = vformat(fmt, args);
  va_end(args);
  return status;
}

symmem_status fail_errno(int err, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string msg = vformat(fmt, args);
  va_end(args);
  char buf[256];
  // GNU strerror_r: thread-safe, returns the text (maybe not in buf).
  msg += ": ";
  msg += strerror_r(err, buf, sizeof buf);
  t_last_error = std::move(msg);
  return SYMMEM_ERR_SYSTEM;
}

void prefix_error(const char* prefix) { t_last_error.insert(0, prefix); }

const char* last_error() { return t_last_error.c_str(); }

}  // namespace symmem
