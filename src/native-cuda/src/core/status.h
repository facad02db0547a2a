// Failure reporting: every failing call stores a message for symmem_last_error() on the calling
// thread and returns its status, so call sites read `return fail(...)`.
#pragma once
#include <exception>
#include <new>

#include "core/abi.h"

namespace symmem {

symmem_status fail(symmem_status status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// SYMMEM_ERR_SYSTEM with ": <strerror(err)>" appended; fmt names the call and its subject.
symmem_status fail_errno(int err, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// Prepends context ("all_reduce_one_shot: ") to the message a nested call has just stored.
void prefix_error(const char* prefix);
const char* last_error();

// No C++ exception may cross the C ABI: entry points run their body through this.
template <class F>
symmem_status guarded(const char* what, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(SYMMEM_ERR_SYSTEM, "%s: out of memory", what);
  } catch (const std::exception& e) {
    return fail(SYMMEM_ERR_SYSTEM, "%s: %s", what, e.what());
  } catch (...) {
    return fail(SYMMEM_ERR_SYSTEM, "%s: unknown C++ exception", what);
  }
}

}  // namespace symmem
