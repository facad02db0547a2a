// C entry points for symmetric buffers: validate, then dispatch to the buffer's backend.
#include "core/backend.h"
#include "core/validate.h"

using namespace symmem;

extern "C" {

symmem_status symmem_buffer_alloc(symmem_backend* backend, uint64_t size_bytes,
                                  symmem_buffer** out) {
  return guarded("symmem_buffer_alloc", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(backend);
    SYMMEM_REQUIRE_NOT_NULL(out);
    *out = nullptr;
    SYMMEM_REQUIRE(size_bytes > 0, "size_bytes 0: a symmetric buffer must not be empty");
    return backend->alloc(size_bytes, out);
  });
}

symmem_status symmem_buffer_export_fd(symmem_buffer* buffer, int* out_fd) {
  SYMMEM_REQUIRE_NOT_NULL(buffer);
  SYMMEM_REQUIRE_NOT_NULL(out_fd);
  return buffer->export_fd(out_fd);
}

symmem_status symmem_buffer_import(symmem_buffer* buffer, int rank, int world, const int* fds) {
  return guarded("symmem_buffer_import", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(buffer);
    SYMMEM_REQUIRE_NOT_NULL(fds);
    SYMMEM_TRY(check_world_rank(world, rank));
    if (buffer->imported())
      return fail(SYMMEM_ERR_STATE, "buffer is already imported (rank %d of world %d)",
                  buffer->rank(), buffer->world());
    for (int r = 0; r < world; ++r)
      SYMMEM_REQUIRE(r == rank || fds[r] >= 0, "fds[%d] is %d, not a file descriptor", r, fds[r]);
    return buffer->import(rank, world, fds);
  });
}

symmem_status symmem_buffer_import_pes(symmem_buffer* buffer, int rank, int world,
                                       const int* pes) {
  return guarded("symmem_buffer_import_pes", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(buffer);
    SYMMEM_REQUIRE_NOT_NULL(pes);
    SYMMEM_TRY(check_world_rank(world, rank));
    if (buffer->imported())
      return fail(SYMMEM_ERR_STATE, "buffer is already bound (rank %d of world %d)",
                  buffer->rank(), buffer->world());
    return buffer->import_pes(rank, world, pes);
  });
}

symmem_status symmem_buffer_free(symmem_buffer* buffer) {
  if (buffer == nullptr) return SYMMEM_OK;
  // Views borrow this buffer's mappings and pads: freeing it under them would leave them pointing
  // at unmapped memory, so it is refused and the buffer stays as it was.
  const int views = buffer->live_views.load(std::memory_order_acquire);
  if (views > 0)
    return fail(SYMMEM_ERR_STATE,
                "symmem_buffer_free: the buffer (%llu bytes) still has %d live view%s (pool "
                "blocks); free the views first",
                static_cast<unsigned long long>(buffer->size()), views, views == 1 ? "" : "s");
  if (buffer->nccl_windows.load() > 0)
    return fail(SYMMEM_ERR_STATE,
                "symmem_buffer_free: %d NCCL window(s) are still registered on this buffer; "
                "deregister them first (symmem_nccl_window_deregister)",
                buffer->nccl_windows.load());
  const int graphs = buffer->graphs.load(std::memory_order_acquire);
  if (graphs > 0)
    return fail(SYMMEM_ERR_STATE,
                "symmem_buffer_free: %d CUDA graph%s captured with this buffer's work (or being "
                "captured) still exist%s; a replay would write freed memory: free the graph%s first "
                "(symmem_graph_free)",
                graphs, graphs == 1 ? "" : "s", graphs == 1 ? "s" : "", graphs == 1 ? "" : "s");
  delete buffer;  // unmaps and closes everything it owns
  return SYMMEM_OK;
}

uint64_t symmem_buffer_size(symmem_buffer* buffer) {
  if (buffer == nullptr) {
    fail(SYMMEM_ERR_INVALID_ARGUMENT, "buffer is NULL");
    return 0;
  }
  return buffer->size();
}

int symmem_buffer_rank(symmem_buffer* buffer) {
  if (buffer == nullptr) {
    fail(SYMMEM_ERR_INVALID_ARGUMENT, "buffer is NULL");
    return -1;
  }
  return buffer->rank();
}

int symmem_buffer_world(symmem_buffer* buffer) {
  if (buffer == nullptr) {
    fail(SYMMEM_ERR_INVALID_ARGUMENT, "buffer is NULL");
    return 0;
  }
  return buffer->world();
}

}  // extern "C"

symmem_status symmem_buffer::own_allocation(void**, uint64_t*, uint64_t*) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "this buffer is not in GPU memory: only GPU buffers (cuda, "
              "nccl and nvshmem backends) can be registered as NCCL windows");
}

symmem_status symmem_buffer::import_pes(int, int, const int*) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "symmem_buffer_import_pes is for nvshmem buffers; this "
              "buffer's peers are imported from fds (symmem_buffer_import)");
}

namespace {

// Shared by ptr and signal_pad: which ranks can be asked for, and why not (as last error).
bool rank_addressable(symmem_buffer* buffer, int r, const char* what) {
  if (buffer == nullptr) {
    fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: buffer is NULL", what);
    return false;
  }
  if (r == SYMMEM_RANK_SELF || (buffer->imported() && r == buffer->rank())) return true;
  if (!buffer->imported()) {
    fail(SYMMEM_ERR_STATE, "%s: rank %d is not mapped before import (use SYMMEM_RANK_SELF)", what, r);
    return false;
  }
  if (r < 0 || r >= buffer->world()) {
    fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: rank %d is out of range 0..%d (world %d)", what, r,
         buffer->world() - 1, buffer->world());
    return false;
  }
  return true;
}

}  // namespace

extern "C" {

void* symmem_buffer_ptr(symmem_buffer* buffer, int r) {
  return rank_addressable(buffer, r, "symmem_buffer_ptr") ? buffer->ptr(r) : nullptr;
}

void* symmem_buffer_signal_pad(symmem_buffer* buffer, int r) {
  return rank_addressable(buffer, r, "symmem_buffer_signal_pad") ? buffer->signal_pad(r) : nullptr;
}

}  // extern "C"
