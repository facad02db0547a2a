// C entry points for the value signals (symmem.h): every argument checked here, with a message that
// names it; the backends only do the work.
#include <cstdint>
#include <cstring>

#include "core/abort.h"
#include "core/backend.h"
#include "core/one_caller.h"
#include "core/validate.h"

using namespace symmem;

symmem_status symmem_buffer::signal_value(int, int, uint64_t, int) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "signal_value is not supported by this backend");
}
symmem_status symmem_buffer::wait_signal_value(int, int, int, uint64_t, int) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "wait_signal_value is not supported by this backend");
}

namespace {

// An enum argument as the int the caller passed (a C caller may pass any value).
template <class E>
int as_int(E e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized on the supported ABIs");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

symmem_status check_value_args(symmem_buffer* buffer, int peer, int channel, const char* what) {
  SYMMEM_TRY(check_imported(buffer, what));
  SYMMEM_TRY(check_peer(buffer, peer, what));
  SYMMEM_REQUIRE(channel >= 0 && channel < SYMMEM_VALUE_CHANNELS,
                 "%s: channel %d is out of range 0..%d (SYMMEM_VALUE_CHANNELS)", what, channel,
                 SYMMEM_VALUE_CHANNELS - 1);
  return SYMMEM_OK;
}

symmem_status check_signal_op(int op, const char* what) {
  SYMMEM_REQUIRE(op == SYMMEM_SIGNAL_SET || op == SYMMEM_SIGNAL_ADD,
                 "%s: op %d is unknown (SYMMEM_SIGNAL_SET = 0, SYMMEM_SIGNAL_ADD = 1)", what, op);
  return SYMMEM_OK;
}

symmem_status check_cmp(int cmp, const char* what) {
  SYMMEM_REQUIRE(cmp == SYMMEM_CMP_EQ || cmp == SYMMEM_CMP_GE,
                 "%s: cmp %d is unknown (SYMMEM_CMP_EQ = 0, SYMMEM_CMP_GE = 1)", what, cmp);
  return SYMMEM_OK;
}

}  // namespace

extern "C" {

symmem_status symmem_signal_value(symmem_buffer* buffer, int peer, int channel, uint64_t value,
                                  symmem_signal_op op) {
  const char* what = "symmem_signal_value";
  return guarded(what, [&]() -> symmem_status {
    SYMMEM_TRY(check_value_args(buffer, peer, channel, what));
    SYMMEM_TRY(check_signal_op(as_int(op), what));
    SYMMEM_TRY(refuse_if_aborted(what));
    return one_caller(buffer, what, [&] { return buffer->signal_value(peer, channel, value, as_int(op)); });
  });
}

symmem_status symmem_wait_signal_value(symmem_buffer* buffer, int peer, int channel,
                                       symmem_signal_cmp cmp, uint64_t value, int timeout_ms) {
  const char* what = "symmem_wait_signal_value";
  return guarded(what, [&]() -> symmem_status {
    SYMMEM_TRY(check_value_args(buffer, peer, channel, what));
    SYMMEM_TRY(check_cmp(as_int(cmp), what));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_TRY(refuse_if_aborted(what));
    return one_caller(buffer, what, [&] {
      return buffer->wait_signal_value(peer, channel, as_int(cmp), value, timeout_ms);
    });
  });
}

symmem_status symmem_signal_value_on_stream(symmem_buffer* buffer, int peer, int channel,
                                            uint64_t value, symmem_signal_op op, void* stream) {
  const char* what = "symmem_signal_value_on_stream";
  return guarded(what, [&]() -> symmem_status {
    SYMMEM_TRY(check_value_args(buffer, peer, channel, what));
    SYMMEM_TRY(check_signal_op(as_int(op), what));
    SYMMEM_TRY(refuse_if_aborted(what));
    return one_caller(buffer, what, [&] {
      return buffer->signal_value_on_stream(peer, channel, value, as_int(op), stream);
    });
  });
}

symmem_status symmem_wait_signal_value_on_stream(symmem_buffer* buffer, int peer, int channel,
                                                 symmem_signal_cmp cmp, uint64_t value, void* stream,
                                                 int timeout_ms) {
  const char* what = "symmem_wait_signal_value_on_stream";
  return guarded(what, [&]() -> symmem_status {
    SYMMEM_TRY(check_value_args(buffer, peer, channel, what));
    SYMMEM_TRY(check_cmp(as_int(cmp), what));
    SYMMEM_TRY(check_timeout(timeout_ms));
    SYMMEM_TRY(refuse_if_aborted(what));
    return one_caller(buffer, what, [&] {
      return buffer->wait_signal_value_on_stream(peer, channel, as_int(cmp), value, stream, timeout_ms);
    });
  });
}

}  // extern "C"
