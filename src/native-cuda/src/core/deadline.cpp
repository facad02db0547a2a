#include "core/deadline.h"

#include <sched.h>
#include <time.h>

#include <cerrno>

namespace symmem {

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

Deadline::Deadline(int timeout_ms)
    : timeout_ms_(timeout_ms), end_ns_(now_ns() + static_cast<int64_t>(timeout_ms) * 1000000) {}

void sleep_ns(int64_t ns) {
  if (ns <= 0) return;
  timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void Backoff::pause() {
  constexpr unsigned kSpins = 64, kYields = 64 + 32;
  if (n_ < kSpins) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  } else if (n_ < kYields) {
    sched_yield();
  } else if (yield_for_ns_ > 0 && (yield_until_ns_ == 0 || now_ns() < yield_until_ns_)) {
    if (yield_until_ns_ == 0) yield_until_ns_ = now_ns() + yield_for_ns_;
    sched_yield();
    return;  // n_ stays: the sleeps below start once the yielding time is over
  } else {
    // 1, 2, 4 ... 32 us, then stay at 50 us.
    unsigned step = n_ - kYields;
    int64_t us = step < 6 ? (int64_t{1} << step) : 50;
    sleep_ns(us * 1000);
  }
  if (n_ < 1000) ++n_;
}

}  // namespace symmem
