// C entry points for stream variants of the signals, memset/write, and the
// collectives with dtype/op/algo. Every argument is checked here, with a message that names it;
// the backends only do the work.
#include <cstdint>
#include <cstring>
#include <string>

#include "core/abort.h"
#include "core/backend.h"
#include "core/hot_count.h"
#include "core/one_caller.h"
#include "core/validate.h"

using namespace symmem;

// Defaults of the optional backend methods: "this backend cannot".
symmem_status symmem_buffer::memset32(int, uint64_t, uint32_t, uint64_t, void*) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "memset32 is not supported by this backend");
}
symmem_status symmem_buffer::write_value32(int, uint64_t, uint32_t, void*) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "stream_write_value32 is not supported by this backend");
}
symmem_status symmem_buffer::all_reduce(uint64_t, int, int, int, uint64_t, void*, void*, int) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "all_reduce is not supported by this backend");
}
symmem_status symmem_buffer::all_gather(uint64_t, int, uint64_t, void*, void*, int) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "all_gather is not supported by this backend");
}
symmem_status symmem_buffer::reduce_scatter(uint64_t, int, int, uint64_t, void*, void*, int) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "reduce_scatter is not supported by this backend");
}
symmem_status symmem_buffer::broadcast(uint64_t, int, uint64_t, int, void*, void*, int) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "broadcast is not supported by this backend");
}
symmem_status symmem_buffer::all_to_all(uint64_t, int, uint64_t, void*, void*, int) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "all_to_all is not supported by this backend");
}
symmem_status symmem_buffer::all_to_all_v(uint64_t, int, uint64_t, void*, uint64_t, int64_t*, void*, int) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "all_to_all_v is not supported by this backend");
}
symmem_status symmem_buffer::device_uuid(int, uint8_t*) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "this backend has no GPU, so no device UUID");
}

namespace {

template <class E>
int as_int(const E* e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized on the supported ABIs");
  int v;
  std::memcpy(&v, e, sizeof v);
  return v;
}

const char* dtype_name(int d) {
  switch (d) {
    case SYMMEM_FLOAT32: return "float32";
    case SYMMEM_BFLOAT16: return "bfloat16";
    case SYMMEM_FLOAT16: return "float16";
    default: return "?";
  }
}

size_t dtype_bytes(int d) {
  switch (d) {
    case SYMMEM_FLOAT32: return 4;
    case SYMMEM_BFLOAT16:
    case SYMMEM_FLOAT16: return 2;
    default: return 0;
  }
}

symmem_status check_dtype(int d, const char* what) {
  SYMMEM_REQUIRE(dtype_bytes(d) != 0,
                 "%s: dtype %d is unknown (SYMMEM_FLOAT32 = 0, SYMMEM_BFLOAT16 = 1, "
                 "SYMMEM_FLOAT16 = 2)",
                 what, d);
  return SYMMEM_OK;
}

symmem_status check_op(int op, const char* what) {
  SYMMEM_REQUIRE(op >= SYMMEM_SUM && op <= SYMMEM_MIN,
                 "%s: op %d is unknown (SYMMEM_SUM = 0, SYMMEM_AVG = 1, SYMMEM_MAX = 2, "
                 "SYMMEM_MIN = 3)",
                 what, op);
  return SYMMEM_OK;
}

// n elements of dtype d starting at byte `offset` must fit in the buffer; sets *bytes.
symmem_status check_fits(symmem_buffer* b, const char* what, const char* arg, uint64_t n, int d,
                         uint64_t factor, uint64_t* bytes) {
  const uint64_t es = dtype_bytes(d);
  const uint64_t limit = b->size() / es;
  SYMMEM_REQUIRE(n <= limit && (factor == 1 || n <= limit / factor),
                 "%s: %s %llu%s %s elements need %llu bytes but the symmetric buffer has %llu", what,
                 arg, static_cast<unsigned long long>(n),
                 factor == 1 ? "" : (" x world " + std::to_string(factor)).c_str(), dtype_name(d),
                 static_cast<unsigned long long>(n > UINT64_MAX / es / factor ? UINT64_MAX
                                                                              : n * es * factor),
                 static_cast<unsigned long long>(b->size()));
  *bytes = n * es * factor;
  return SYMMEM_OK;
}

symmem_status check_out(symmem_buffer* b, const char* what, void* out, uint64_t bytes, int d) {
  if (out == nullptr) return SYMMEM_OK;
  SYMMEM_REQUIRE(reinterpret_cast<uintptr_t>(out) % dtype_bytes(d) == 0,
                 "%s: out %p is not aligned to the %zu-byte %s element", what, out, dtype_bytes(d),
                 dtype_name(d));
  SYMMEM_REQUIRE(!b->overlaps(out, bytes),
                 "%s: out %p (+%llu bytes) overlaps the symmetric buffer; pass NULL for in place, "
                 "or local memory",
                 what, out, static_cast<unsigned long long>(bytes));
  return SYMMEM_OK;
}

// r for memset/write: SYMMEM_RANK_SELF or (after import) 0..world-1; returns the resolved rank
// (-1 = own, before import).
symmem_status check_target(symmem_buffer* b, int r, const char* what, int* resolved) {
  SYMMEM_REQUIRE(b != nullptr, "%s: buffer is NULL", what);
  if (r == SYMMEM_RANK_SELF) {
    *resolved = b->imported() ? b->rank() : SYMMEM_RANK_SELF;
    return SYMMEM_OK;
  }
  if (!b->imported())
    return fail(SYMMEM_ERR_STATE, "%s: rank %d is not mapped before import (use SYMMEM_RANK_SELF)",
                what, r);
  SYMMEM_REQUIRE(r >= 0 && r < b->world(), "%s: rank %d is out of range 0..%d (world %d)", what, r,
                 b->world() - 1, b->world());
  *resolved = r;
  return SYMMEM_OK;
}

}  // namespace

extern "C" {

size_t symmem_dtype_size(symmem_dtype dtype) { return dtype_bytes(as_int(&dtype)); }

symmem_status symmem_put_signal_on_stream(symmem_buffer* buffer, int peer, int channel,
                                          void* stream, int timeout_ms) {
  return guarded("symmem_put_signal_on_stream", [&]() -> symmem_status {
    const char* what = "symmem_put_signal_on_stream";
    SYMMEM_TRY(check_imported(buffer, what));
    SYMMEM_TRY(check_peer(buffer, peer, what));
    SYMMEM_TRY(check_channel(channel));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_TRY(refuse_if_aborted("symmem_put_signal_on_stream"));
    return one_caller(buffer, "symmem_put_signal_on_stream", [&] {
      return buffer->put_signal_on_stream(peer, channel, stream, timeout_ms);
    });
  });
}

symmem_status symmem_wait_signal_on_stream(symmem_buffer* buffer, int peer, int channel,
                                           void* stream, int timeout_ms) {
  return guarded("symmem_wait_signal_on_stream", [&]() -> symmem_status {
    const char* what = "symmem_wait_signal_on_stream";
    SYMMEM_TRY(check_imported(buffer, what));
    SYMMEM_TRY(check_peer(buffer, peer, what));
    SYMMEM_TRY(check_channel(channel));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_TRY(refuse_if_aborted("symmem_wait_signal_on_stream"));
    return one_caller(buffer, "symmem_wait_signal_on_stream", [&] {
      return buffer->wait_signal_on_stream(peer, channel, stream, timeout_ms);
    });
  });
}

symmem_status symmem_barrier_on_stream(symmem_buffer* buffer, int channel, void* stream,
                                       int timeout_ms) {
  return guarded("symmem_barrier_on_stream", [&]() -> symmem_status {
    SYMMEM_TRY(check_imported(buffer, "symmem_barrier_on_stream"));
    SYMMEM_TRY(check_channel(channel));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_TRY(refuse_if_aborted("symmem_barrier_on_stream"));
    return one_caller(buffer, "symmem_barrier_on_stream", [&] {
      return buffer->barrier_on_stream(channel, stream, timeout_ms);
    });
  });
}

symmem_status symmem_memset32(symmem_buffer* buffer, int r, uint64_t offset_bytes, uint32_t value,
                              uint64_t count, void* stream) {
  return guarded("symmem_memset32", [&]() -> symmem_status {
    const char* what = "symmem_memset32";
    int target = SYMMEM_RANK_SELF;
    SYMMEM_TRY(check_target(buffer, r, what, &target));
    SYMMEM_REQUIRE(offset_bytes % 4 == 0, "%s: offset_bytes %llu is not a multiple of 4", what,
                   static_cast<unsigned long long>(offset_bytes));
    SYMMEM_REQUIRE(offset_bytes <= buffer->size() && count <= (buffer->size() - offset_bytes) / 4,
                   "%s: offset_bytes %llu + count %llu words (x4 bytes) exceed the buffer's %llu "
                   "bytes",
                   what, static_cast<unsigned long long>(offset_bytes),
                   static_cast<unsigned long long>(count),
                   static_cast<unsigned long long>(buffer->size()));
    if (count == 0) return SYMMEM_OK;
    return buffer->memset32(target, offset_bytes, value, count, stream);
  });
}

symmem_status symmem_stream_write_value32(symmem_buffer* buffer, int r, uint64_t offset_bytes,
                                          uint32_t value, void* stream) {
  return guarded("symmem_stream_write_value32", [&]() -> symmem_status {
    const char* what = "symmem_stream_write_value32";
    int target = SYMMEM_RANK_SELF;
    SYMMEM_TRY(check_target(buffer, r, what, &target));
    SYMMEM_REQUIRE(offset_bytes % 4 == 0, "%s: offset_bytes %llu is not a multiple of 4", what,
                   static_cast<unsigned long long>(offset_bytes));
    SYMMEM_REQUIRE(buffer->size() >= 4 && offset_bytes <= buffer->size() - 4,
                   "%s: offset_bytes %llu + 4 exceeds the buffer's %llu bytes", what,
                   static_cast<unsigned long long>(offset_bytes),
                   static_cast<unsigned long long>(buffer->size()));
    return buffer->write_value32(target, offset_bytes, value, stream);
  });
}

symmem_status symmem_stream_synchronize(symmem_buffer* buffer, void* stream) {
  return guarded("symmem_stream_synchronize", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(buffer);
    return buffer->synchronize(stream);
  });
}

symmem_status symmem_cuda_check(symmem_buffer* buffer) {
  return guarded("symmem_cuda_check", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(buffer);
    return buffer->check();
  });
}

symmem_status symmem_all_reduce(symmem_buffer* buffer, symmem_algo algo, symmem_dtype dtype,
                                symmem_reduce_op op, uint64_t count, void* out, void* stream,
                                int timeout_ms) {
  SYMMEM_HOT_TIME_ALL_REDUCE();
  return guarded("symmem_all_reduce", [&]() -> symmem_status {
    const char* what = "symmem_all_reduce";
    SYMMEM_TRY(check_imported(buffer, what));
    const int a = as_int(&algo), d = as_int(&dtype), o = as_int(&op);
    SYMMEM_REQUIRE(a >= SYMMEM_ALGO_AUTO && a <= SYMMEM_ALGO_TWO_SHOT_CE,
                   "%s: algo %d is unknown (SYMMEM_ALGO_AUTO = 0, SYMMEM_ALGO_ONE_SHOT = 1, "
                   "SYMMEM_ALGO_TWO_SHOT = 2, SYMMEM_ALGO_TWO_SHOT_CE = 3)",
                   what, a);
    SYMMEM_TRY(check_dtype(d, what));
    SYMMEM_TRY(check_op(o, what));
    SYMMEM_TRY(check_timeout(timeout_ms));
    uint64_t bytes;
    SYMMEM_TRY(check_fits(buffer, what, "count", count, d, 1, &bytes));
    SYMMEM_TRY(check_out(buffer, what, out, bytes, d));
    if (count == 0) return SYMMEM_OK;
    int chosen = a == SYMMEM_ALGO_AUTO ? buffer->auto_algo(d, bytes, out == nullptr) : a;
    if (chosen == SYMMEM_ALGO_ONE_SHOT && out == nullptr &&
        bytes > buffer->one_shot_in_place_max_bytes())
      return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                  "%s: out is NULL (in place) but ONE_SHOT reduces in place only up to %llu bytes "
                  "(count %llu is %llu bytes); use TWO_SHOT, AUTO or an out buffer",
                  what, static_cast<unsigned long long>(buffer->one_shot_in_place_max_bytes()),
                  static_cast<unsigned long long>(count), static_cast<unsigned long long>(bytes));
    SYMMEM_TRY(refuse_if_aborted("symmem_all_reduce"));
    return one_caller(buffer, "symmem_all_reduce", [&] {
      return buffer->all_reduce(0, chosen, d, o, count, out, stream, timeout_ms);
    });
  });
}

symmem_status symmem_all_gather(symmem_buffer* buffer, symmem_dtype dtype, uint64_t count,
                                void* out, void* stream, int timeout_ms) {
  return guarded("symmem_all_gather", [&]() -> symmem_status {
    const char* what = "symmem_all_gather";
    SYMMEM_TRY(check_imported(buffer, what));
    const int d = as_int(&dtype);
    SYMMEM_TRY(check_dtype(d, what));
    SYMMEM_TRY(check_timeout(timeout_ms));
    uint64_t bytes;
    SYMMEM_TRY(check_fits(buffer, what, "count", count, d, out == nullptr ? buffer->world() : 1,
                          &bytes));
    if (out != nullptr) {
      const uint64_t es = dtype_bytes(d);
      SYMMEM_REQUIRE(count <= UINT64_MAX / es / buffer->world(), "%s: count %llu is too large",
                     what, static_cast<unsigned long long>(count));
      SYMMEM_TRY(check_out(buffer, what, out, count * es * buffer->world(), d));
    }
    if (count == 0) return SYMMEM_OK;
    SYMMEM_TRY(refuse_if_aborted("symmem_all_gather"));
    return one_caller(buffer, "symmem_all_gather", [&] {
      return buffer->all_gather(0, d, count, out, stream, timeout_ms);
    });
  });
}

symmem_status symmem_reduce_scatter(symmem_buffer* buffer, symmem_dtype dtype,
                                    symmem_reduce_op op, uint64_t count, void* out, void* stream,
                                    int timeout_ms) {
  return guarded("symmem_reduce_scatter", [&]() -> symmem_status {
    const char* what = "symmem_reduce_scatter";
    SYMMEM_TRY(check_imported(buffer, what));
    const int d = as_int(&dtype), o = as_int(&op);
    SYMMEM_TRY(check_dtype(d, what));
    SYMMEM_TRY(check_op(o, what));
    SYMMEM_TRY(check_timeout(timeout_ms));
    uint64_t bytes;
    SYMMEM_TRY(check_fits(buffer, what, "count", count, d, buffer->world(), &bytes));
    SYMMEM_TRY(check_out(buffer, what, out, count * dtype_bytes(d), d));
    if (count == 0) return SYMMEM_OK;
    SYMMEM_TRY(refuse_if_aborted("symmem_reduce_scatter"));
    return one_caller(buffer, "symmem_reduce_scatter", [&] {
      return buffer->reduce_scatter(0, d, o, count, out, stream, timeout_ms);
    });
  });
}

symmem_status symmem_broadcast(symmem_buffer* buffer, symmem_dtype dtype, uint64_t count, int root,
                               void* out, void* stream, int timeout_ms) {
  return guarded("symmem_broadcast", [&]() -> symmem_status {
    const char* what = "symmem_broadcast";
    SYMMEM_TRY(check_imported(buffer, what));
    const int d = as_int(&dtype);
    SYMMEM_TRY(check_dtype(d, what));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_REQUIRE(root >= 0 && root < buffer->world(), "%s: root %d is out of range 0..%d (world %d)",
                   what, root, buffer->world() - 1, buffer->world());
    uint64_t bytes;
    SYMMEM_TRY(check_fits(buffer, what, "count", count, d, 1, &bytes));
    SYMMEM_TRY(check_out(buffer, what, out, bytes, d));
    if (count == 0) return SYMMEM_OK;
    SYMMEM_TRY(refuse_if_aborted(what));
    return one_caller(buffer, what, [&] {
      return buffer->broadcast(0, d, count, root, out, stream, timeout_ms);
    });
  });
}

symmem_status symmem_all_to_all(symmem_buffer* buffer, symmem_dtype dtype, uint64_t count, void* out,
                                void* stream, int timeout_ms) {
  return guarded("symmem_all_to_all", [&]() -> symmem_status {
    const char* what = "symmem_all_to_all";
    SYMMEM_TRY(check_imported(buffer, what));
    const int d = as_int(&dtype);
    SYMMEM_TRY(check_dtype(d, what));
    SYMMEM_TRY(check_timeout(timeout_ms));
    uint64_t bytes;
    SYMMEM_TRY(check_fits(buffer, what, "count", count, d, buffer->world(), &bytes));
    SYMMEM_TRY(check_out(buffer, what, out, bytes, d));
    if (count == 0) return SYMMEM_OK;
    SYMMEM_TRY(refuse_if_aborted(what));
    return one_caller(buffer, what, [&] {
      return buffer->all_to_all(0, d, count, out, stream, timeout_ms);
    });
  });
}

symmem_status symmem_all_to_all_v(symmem_buffer* buffer, symmem_dtype dtype, uint64_t splits_offset,
                                  void* out, uint64_t out_capacity, int64_t* out_splits, void* stream,
                                  int timeout_ms) {
  return guarded("symmem_all_to_all_v", [&]() -> symmem_status {
    const char* what = "symmem_all_to_all_v";
    SYMMEM_TRY(check_imported(buffer, what));
    const int d = as_int(&dtype);
    SYMMEM_TRY(check_dtype(d, what));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_REQUIRE(out_splits != nullptr, "%s: out_splits is NULL (it receives 2 x world int64: the counts "
                   "received from each rank, then where each rank's part starts)", what);
    const uint64_t world = static_cast<uint64_t>(buffer->world());
    const uint64_t slots = (world + 1) * sizeof(int64_t);
    SYMMEM_REQUIRE(splits_offset % sizeof(int64_t) == 0, "%s: splits_offset %llu is not a multiple of 8",
                   what, static_cast<unsigned long long>(splits_offset));
    SYMMEM_REQUIRE(splits_offset <= buffer->size() && slots <= buffer->size() - splits_offset,
                   "%s: splits_offset %llu + %llu bytes (world + 1 = %llu int64 slots) exceed the "
                   "buffer's %llu bytes",
                   what, static_cast<unsigned long long>(splits_offset), static_cast<unsigned long long>(slots),
                   static_cast<unsigned long long>(world + 1), static_cast<unsigned long long>(buffer->size()));
    SYMMEM_REQUIRE(reinterpret_cast<uintptr_t>(out_splits) % sizeof(int64_t) == 0,
                   "%s: out_splits %p is not aligned to 8 bytes", what, static_cast<void*>(out_splits));
    // The own buffer after the slots is no peer's to read: out_splits may lie there.
    const char* own = static_cast<const char*>(buffer->ptr(buffer->rank()));
    const char* counts = reinterpret_cast<const char*>(out_splits);
    const uint64_t counts_bytes = 2 * world * sizeof(int64_t);
    const bool in_own_tail = counts >= own + splits_offset + slots && counts <= own + buffer->size() &&
                             counts_bytes <= static_cast<uint64_t>(own + buffer->size() - counts);
    SYMMEM_REQUIRE(in_own_tail || !buffer->overlaps(out_splits, counts_bytes),
                   "%s: out_splits %p overlaps the symmetric buffer, and not in this rank's part after the "
                   "splits' slots (from byte %llu); pass local memory, or a place there", what,
                   static_cast<void*>(out_splits), static_cast<unsigned long long>(splits_offset + slots));
    if (out != nullptr) {
      const uint64_t es = dtype_bytes(d);
      SYMMEM_REQUIRE(out_capacity <= UINT64_MAX / es, "%s: out_capacity %llu is too large", what,
                     static_cast<unsigned long long>(out_capacity));
      SYMMEM_TRY(check_out(buffer, what, out, out_capacity * es, d));
    }
    SYMMEM_TRY(refuse_if_aborted(what));
    return one_caller(buffer, what, [&] {
      return buffer->all_to_all_v(0, d, splits_offset, out, out_capacity, out_splits, stream, timeout_ms);
    });
  });
}

symmem_status symmem_all_reduce_auto_algo(symmem_buffer* buffer, symmem_dtype dtype,
                                          uint64_t count, int in_place, symmem_algo* out_algo) {
  return guarded("symmem_all_reduce_auto_algo", [&]() -> symmem_status {
    const char* what = "symmem_all_reduce_auto_algo";
    SYMMEM_REQUIRE_NOT_NULL(out_algo);
    SYMMEM_TRY(check_imported(buffer, what));
    const int d = as_int(&dtype);
    SYMMEM_TRY(check_dtype(d, what));
    uint64_t bytes;
    SYMMEM_TRY(check_fits(buffer, what, "count", count, d, 1, &bytes));
    *out_algo = static_cast<symmem_algo>(buffer->auto_algo(d, bytes, in_place != 0));
    return SYMMEM_OK;
  });
}

uint64_t symmem_one_shot_in_place_max_bytes(symmem_buffer* buffer) {
  if (buffer == nullptr) {
    fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_one_shot_in_place_max_bytes: buffer is NULL");
    return 0;
  }
  return buffer->one_shot_in_place_max_bytes();
}

symmem_status symmem_buffer_device_uuid(symmem_buffer* buffer, int r, uint8_t out_uuid[16]) {
  return guarded("symmem_buffer_device_uuid", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(out_uuid);
    int target = SYMMEM_RANK_SELF;
    SYMMEM_TRY(check_target(buffer, r, "symmem_buffer_device_uuid", &target));
    return buffer->device_uuid(target, out_uuid);
  });
}

symmem_status symmem_cuda_topology(symmem_topology* out) {
  return guarded("symmem_cuda_topology", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(out);
    std::memset(out, 0, sizeof *out);
    return cuda_topology(out);
  });
}

}  // extern "C"
