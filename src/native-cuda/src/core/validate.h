// Argument checks shared by the C entry points. Each message names the argument and its value, so
// a Java stack trace alone says what was wrong.
#pragma once
#include "core/status.h"

// Returns SYMMEM_ERR_INVALID_ARGUMENT from the enclosing function unless cond holds.
#define SYMMEM_REQUIRE(cond, ...)                                        \
  do {                                                                   \
    if (!(cond)) return ::symmem::fail(SYMMEM_ERR_INVALID_ARGUMENT, __VA_ARGS__); \
  } while (0)

#define SYMMEM_REQUIRE_NOT_NULL(arg) SYMMEM_REQUIRE((arg) != nullptr, "%s is NULL", #arg)

// Propagates a failed status (its message is already stored).
#define SYMMEM_TRY(expr)                              \
  do {                                                \
    symmem_status symmem_try_status_ = (expr);        \
    if (symmem_try_status_ != SYMMEM_OK) return symmem_try_status_; \
  } while (0)

namespace symmem {

inline symmem_status check_timeout(int timeout_ms) {
  SYMMEM_REQUIRE(timeout_ms > 0, "timeout_ms %d must be > 0 (no call waits forever)", timeout_ms);
  return SYMMEM_OK;
}

inline symmem_status check_world_rank(int world, int rank) {
  SYMMEM_REQUIRE(world >= 1 && world <= SYMMEM_MAX_WORLD, "world %d is out of range 1..%d", world,
                 SYMMEM_MAX_WORLD);
  SYMMEM_REQUIRE(rank >= 0 && rank < world, "rank %d is out of range 0..%d (world %d)", rank,
                 world - 1, world);
  return SYMMEM_OK;
}

inline symmem_status check_channel(int channel) {
  SYMMEM_REQUIRE(channel >= 0 && channel < SYMMEM_SIGNAL_CHANNELS,
                 "channel %d is out of range 0..%d", channel, SYMMEM_SIGNAL_CHANNELS - 1);
  return SYMMEM_OK;
}

}  // namespace symmem
