// C entry points for signals, barrier and collectives: all checks here, the work in the backend.
#include <cstring>

#include "core/abort.h"
#include "core/backend.h"
#include "core/validate.h"

using namespace symmem;

namespace {

symmem_status check_imported(symmem_buffer* buffer, const char* what) {
  SYMMEM_REQUIRE(buffer != nullptr, "%s: buffer is NULL", what);
  if (!buffer->imported())
    return fail(SYMMEM_ERR_STATE, "%s: the buffer is not imported yet (call symmem_buffer_import)",
                what);
  return SYMMEM_OK;
}

symmem_status check_peer(symmem_buffer* buffer, int peer) {
  SYMMEM_REQUIRE(peer >= 0 && peer < buffer->world(), "peer %d is out of range 0..%d (world %d)",
                 peer, buffer->world() - 1, buffer->world());
  SYMMEM_REQUIRE(peer != buffer->rank(), "peer %d is this rank: a rank does not signal itself", peer);
  return SYMMEM_OK;
}

// The enum parameters come from C or Java as plain ints; reading an out-of-range value through the
// C++ enum type would be undefined behaviour, so look at the int representation instead.
template <class E>
int as_int(const E* e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized on the supported ABIs");
  int v;
  std::memcpy(&v, e, sizeof v);
  return v;
}

}  // namespace

extern "C" {

symmem_status symmem_put_signal(symmem_buffer* buffer, int peer, int channel, int timeout_ms) {
  return guarded("symmem_put_signal", [&]() -> symmem_status {
    SYMMEM_TRY(check_imported(buffer, "symmem_put_signal"));
    SYMMEM_TRY(check_peer(buffer, peer));
    SYMMEM_TRY(check_channel(channel));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_TRY(refuse_if_aborted("symmem_put_signal"));
    return buffer->put_signal(peer, channel, timeout_ms);
  });
}

symmem_status symmem_wait_signal(symmem_buffer* buffer, int peer, int channel, int timeout_ms) {
  return guarded("symmem_wait_signal", [&]() -> symmem_status {
    SYMMEM_TRY(check_imported(buffer, "symmem_wait_signal"));
    SYMMEM_TRY(check_peer(buffer, peer));
    SYMMEM_TRY(check_channel(channel));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_TRY(refuse_if_aborted("symmem_wait_signal"));
    return buffer->wait_signal(peer, channel, timeout_ms);
  });
}

symmem_status symmem_barrier(symmem_buffer* buffer, int channel, int timeout_ms) {
  return guarded("symmem_barrier", [&]() -> symmem_status {
    SYMMEM_TRY(check_imported(buffer, "symmem_barrier"));
    SYMMEM_TRY(check_channel(channel));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_TRY(refuse_if_aborted("symmem_barrier"));
    return buffer->barrier(channel, timeout_ms);
  });
}

symmem_status symmem_all_reduce_one_shot(symmem_buffer* buffer, symmem_dtype dtype,
                                         symmem_reduce_op op, uint64_t count, void* out,
                                         int channel, int timeout_ms) {
  return guarded("symmem_all_reduce_one_shot", [&]() -> symmem_status {
    SYMMEM_TRY(check_imported(buffer, "symmem_all_reduce_one_shot"));
    SYMMEM_REQUIRE(as_int(&dtype) == SYMMEM_FLOAT32,
                   "dtype %d is not supported (only SYMMEM_FLOAT32 = %d)", as_int(&dtype),
                   static_cast<int>(SYMMEM_FLOAT32));
    SYMMEM_REQUIRE(as_int(&op) == SYMMEM_SUM, "op %d is not supported (only SYMMEM_SUM = %d)",
                   as_int(&op), static_cast<int>(SYMMEM_SUM));
    SYMMEM_REQUIRE_NOT_NULL(out);
    SYMMEM_REQUIRE(count <= buffer->size() / sizeof(float),
                   "count %llu float32 elements need %llu bytes but the buffer has %llu",
                   static_cast<unsigned long long>(count),
                   static_cast<unsigned long long>(count) * sizeof(float),
                   static_cast<unsigned long long>(buffer->size()));
    SYMMEM_REQUIRE(!buffer->overlaps(out, count * sizeof(float)),
                   "out %p (+%llu bytes) overlaps the symmetric buffer; peers may still read it, "
                   "so out must be local memory",
                   out, static_cast<unsigned long long>(count * sizeof(float)));
    SYMMEM_TRY(check_channel(channel));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_TRY(refuse_if_aborted("symmem_all_reduce_one_shot"));
    return buffer->all_reduce_sum_f32(0, count, static_cast<float*>(out), channel, timeout_ms);
  });
}

}  // extern "C"
