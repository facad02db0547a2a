// C entry points for signals, barrier and collectives: all checks here, the work in the backend.

#include "core/abort.h"
#include "core/backend.h"
#include "core/one_caller.h"
#include "core/validate.h"

using namespace symmem;

namespace {

symmem_status check_peer(symmem_buffer* buffer, int peer) {
  SYMMEM_REQUIRE(peer >= 0 && peer < buffer->world(), "peer %d is out of range 0..%d (world %d)",
                 peer, buffer->world() - 1, buffer->world());
  SYMMEM_REQUIRE(peer != buffer->rank(), "peer %d is this rank: a rank does not signal itself", peer);
  return SYMMEM_OK;
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
    return one_caller(buffer, "symmem_put_signal", [&] {
      return buffer->put_signal(peer, channel, timeout_ms);
    });
  });
}

symmem_status symmem_wait_signal(symmem_buffer* buffer, int peer, int channel, int timeout_ms) {
  return guarded("symmem_wait_signal", [&]() -> symmem_status {
    SYMMEM_TRY(check_imported(buffer, "symmem_wait_signal"));
    SYMMEM_TRY(check_peer(buffer, peer));
    SYMMEM_TRY(check_channel(channel));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_TRY(refuse_if_aborted("symmem_wait_signal"));
    return one_caller(buffer, "symmem_wait_signal", [&] {
      return buffer->wait_signal(peer, channel, timeout_ms);
    });
  });
}

symmem_status symmem_barrier(symmem_buffer* buffer, int channel, int timeout_ms) {
  return guarded("symmem_barrier", [&]() -> symmem_status {
    SYMMEM_TRY(check_imported(buffer, "symmem_barrier"));
    SYMMEM_TRY(check_channel(channel));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_TRY(refuse_if_aborted("symmem_barrier"));
    return one_caller(buffer, "symmem_barrier", [&] {
      return buffer->barrier(channel, timeout_ms);
    });
  });
}

}  // extern "C"
