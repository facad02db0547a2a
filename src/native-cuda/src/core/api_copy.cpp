// C entry points for data movement: host <-> symmetric buffer copies and the backend's local
// (non-symmetric) memory. Every argument is checked here, with a message that names it; the
// backends only copy.
#include <cstdlib>
#include <cstring>

#include "core/backend.h"
#include "core/validate.h"

using namespace symmem;

// Defaults: host memory.
symmem_status symmem_buffer::copy_in(int r, uint64_t offset, const void* src, uint64_t bytes) {
  std::memcpy(static_cast<char*>(ptr(r)) + offset, src, bytes);
  return SYMMEM_OK;
}
symmem_status symmem_buffer::copy_out(int r, uint64_t offset, void* dst, uint64_t bytes) {
  std::memcpy(dst, static_cast<const char*>(ptr(r)) + offset, bytes);
  return SYMMEM_OK;
}

symmem_status symmem_backend::local_alloc(uint64_t bytes, void** out) {
  const uint64_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr)
    return fail(SYMMEM_ERR_SYSTEM, "symmem_local_alloc: aligned_alloc of %llu bytes failed",
                static_cast<unsigned long long>(rounded));
  std::memset(p, 0, rounded);
  *out = p;
  return SYMMEM_OK;
}
void symmem_backend::local_free(void* p) { std::free(p); }
symmem_status symmem_backend::local_copy_in(void* dst, const void* src, uint64_t bytes) {
  std::memcpy(dst, src, bytes);
  return SYMMEM_OK;
}
symmem_status symmem_backend::local_copy_out(void* dst, const void* src, uint64_t bytes) {
  std::memcpy(dst, src, bytes);
  return SYMMEM_OK;
}

namespace {

// r: SYMMEM_RANK_SELF or (after import) 0..world-1; the range must lie inside the buffer.
symmem_status check_copy(symmem_buffer* b, const char* what, int r, uint64_t offset,
                         const void* host, const char* host_arg, uint64_t bytes, int* resolved) {
  SYMMEM_REQUIRE(b != nullptr, "%s: buffer is NULL", what);
  SYMMEM_REQUIRE(host != nullptr || bytes == 0, "%s: %s is NULL", what, host_arg);
  if (r == SYMMEM_RANK_SELF) {
    *resolved = b->imported() ? b->rank() : SYMMEM_RANK_SELF;
  } else {
    if (!b->imported())
      return fail(SYMMEM_ERR_STATE,
                  "%s: rank %d is not mapped before import (use SYMMEM_RANK_SELF)", what, r);
    SYMMEM_REQUIRE(r >= 0 && r < b->world(), "%s: rank %d is out of range 0..%d (world %d)", what,
                   r, b->world() - 1, b->world());
    *resolved = r;
  }
  SYMMEM_REQUIRE(offset <= b->size() && bytes <= b->size() - offset,
                 "%s: offset %llu + bytes %llu exceed the symmetric buffer's %llu bytes", what,
                 static_cast<unsigned long long>(offset), static_cast<unsigned long long>(bytes),
                 static_cast<unsigned long long>(b->size()));
  return SYMMEM_OK;
}

// `local` must be a live allocation of this backend and [offset, offset + bytes) inside it.
symmem_status check_local(symmem_backend* be, const char* what, const void* local,
                          uint64_t offset, const void* host, const char* host_arg,
                          uint64_t bytes) {
  SYMMEM_REQUIRE(be != nullptr, "%s: backend is NULL", what);
  SYMMEM_REQUIRE(local != nullptr, "%s: local is NULL", what);
  SYMMEM_REQUIRE(host != nullptr || bytes == 0, "%s: %s is NULL", what, host_arg);
  uint64_t size = 0;
  {
    std::lock_guard<std::mutex> lock(be->locals_mutex);
    auto it = be->locals.find(local);
    SYMMEM_REQUIRE(it != be->locals.end(),
                   "%s: local %p was not allocated by symmem_local_alloc on this backend (or is "
                   "already freed)",
                   what, local);
    size = it->second;
  }
  SYMMEM_REQUIRE(offset <= size && bytes <= size - offset,
                 "%s: offset %llu + bytes %llu exceed the local allocation's %llu bytes", what,
                 static_cast<unsigned long long>(offset), static_cast<unsigned long long>(bytes),
                 static_cast<unsigned long long>(size));
  return SYMMEM_OK;
}

}  // namespace

extern "C" {

symmem_status symmem_buffer_copy_in(symmem_buffer* buffer, int r, uint64_t offset,
                                    const void* src, uint64_t bytes) {
  return guarded("symmem_buffer_copy_in", [&]() -> symmem_status {
    int target = SYMMEM_RANK_SELF;
    SYMMEM_TRY(check_copy(buffer, "symmem_buffer_copy_in", r, offset, src, "src", bytes, &target));
    if (bytes == 0) return SYMMEM_OK;
    return buffer->copy_in(target, offset, src, bytes);
  });
}

symmem_status symmem_buffer_copy_out(symmem_buffer* buffer, int r, uint64_t offset, void* dst,
                                     uint64_t bytes) {
  return guarded("symmem_buffer_copy_out", [&]() -> symmem_status {
    int target = SYMMEM_RANK_SELF;
    SYMMEM_TRY(check_copy(buffer, "symmem_buffer_copy_out", r, offset, dst, "dst", bytes, &target));
    if (bytes == 0) return SYMMEM_OK;
    return buffer->copy_out(target, offset, dst, bytes);
  });
}

symmem_status symmem_put_on_stream(symmem_buffer* buffer, int r, uint64_t offset, const void* src,
                                   uint64_t bytes, void* stream) {
  return guarded("symmem_put_on_stream", [&]() -> symmem_status {
    int target = SYMMEM_RANK_SELF;
    SYMMEM_TRY(check_copy(buffer, "symmem_put_on_stream", r, offset, src, "src", bytes, &target));
    if (bytes == 0) return SYMMEM_OK;
    return buffer->put_on_stream(target, offset, src, bytes, stream);
  });
}

symmem_status symmem_get_on_stream(symmem_buffer* buffer, int r, uint64_t offset, void* dst,
                                   uint64_t bytes, void* stream) {
  return guarded("symmem_get_on_stream", [&]() -> symmem_status {
    int target = SYMMEM_RANK_SELF;
    SYMMEM_TRY(check_copy(buffer, "symmem_get_on_stream", r, offset, dst, "dst", bytes, &target));
    if (bytes == 0) return SYMMEM_OK;
    return buffer->get_on_stream(target, offset, dst, bytes, stream);
  });
}

symmem_status symmem_local_alloc(symmem_backend* backend, uint64_t bytes, void** out) {
  return guarded("symmem_local_alloc", [&]() -> symmem_status {
    SYMMEM_REQUIRE(backend != nullptr, "symmem_local_alloc: backend is NULL");
    SYMMEM_REQUIRE(out != nullptr, "symmem_local_alloc: out is NULL");
    *out = nullptr;
    SYMMEM_REQUIRE(bytes > 0, "symmem_local_alloc: bytes 0: a local allocation must not be empty");
    void* p = nullptr;
    SYMMEM_TRY(backend->local_alloc(bytes, &p));
    std::lock_guard<std::mutex> lock(backend->locals_mutex);
    backend->locals[p] = bytes;
    *out = p;
    return SYMMEM_OK;
  });
}

symmem_status symmem_local_free(symmem_backend* backend, void* local) {
  return guarded("symmem_local_free", [&]() -> symmem_status {
    if (local == nullptr) return SYMMEM_OK;
    SYMMEM_REQUIRE(backend != nullptr, "symmem_local_free: backend is NULL");
    {
      std::lock_guard<std::mutex> lock(backend->locals_mutex);
      auto it = backend->locals.find(local);
      SYMMEM_REQUIRE(it != backend->locals.end(),
                     "symmem_local_free: local %p was not allocated by symmem_local_alloc on this "
                     "backend (or is already freed)",
                     local);
      backend->locals.erase(it);
    }
    backend->local_free(local);
    return SYMMEM_OK;
  });
}

symmem_status symmem_local_copy_in(symmem_backend* backend, void* local, uint64_t offset,
                                   const void* src, uint64_t bytes) {
  return guarded("symmem_local_copy_in", [&]() -> symmem_status {
    SYMMEM_TRY(check_local(backend, "symmem_local_copy_in", local, offset, src, "src", bytes));
    if (bytes == 0) return SYMMEM_OK;
    return backend->local_copy_in(static_cast<char*>(local) + offset, src, bytes);
  });
}

symmem_status symmem_local_copy_out(symmem_backend* backend, const void* local, uint64_t offset,
                                    void* dst, uint64_t bytes) {
  return guarded("symmem_local_copy_out", [&]() -> symmem_status {
    SYMMEM_TRY(check_local(backend, "symmem_local_copy_out", local, offset, dst, "dst", bytes));
    if (bytes == 0) return SYMMEM_OK;
    return backend->local_copy_out(dst, static_cast<const char*>(local) + offset, bytes);
  });
}

}  // extern "C"
