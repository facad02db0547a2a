// C entry points for signals, barrier and collectives: all checks here, the work in the backend.

#include "core/abort.h"
#include "core/backend.h"
#include "core/one_caller.h"
#include "core/validate.h"

using namespace symmem;

extern "C" {

symmem_status symmem_put_signal(symmem_buffer* buffer, int peer, int channel, int timeout_ms) {
  return guarded("symmem_put_signal", [&]() -> symmem_status {
    SYMMEM_TRY(check_imported(buffer, "symmem_put_signal"));
    SYMMEM_TRY(check_peer(buffer, peer, "symmem_put_signal"));
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
    SYMMEM_TRY(check_peer(buffer, peer, "symmem_wait_signal"));
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
