// Time helpers for the "every wait has a deadline" rule.
#pragma once
#include <cstdint>

namespace symmem {

int64_t now_ns();  // CLOCK_MONOTONIC: immune to wall-clock jumps

class Deadline {
 public:
  explicit Deadline(int timeout_ms);
  bool expired() const { return now_ns() >= end_ns_; }
  int64_t end_ns() const { return end_ns_; }
  int timeout_ms() const { return timeout_ms_; }

 private:
  int timeout_ms_;
  int64_t end_ns_;
};

// Waiting on shared memory: spin first (a peer that is already there answers in nanoseconds),
// then yield, then sleep in growing steps up to ~50 us, so that many ranks sharing few cores
// still make progress and an idle wait costs little CPU.
// yield_for_ns > 0: yield (rather than sleep) until that long after the wait began or was last
// reset. For waits that are usually short, such as the host backend's barriers: a sleep of a few
// microseconds wakes tens of microseconds late (timer slack), while a yield gives the CPU to any
// thread that needs it and returns at once when none does.
class Backoff {
 public:
  Backoff() = default;
  explicit Backoff(int64_t yield_for_ns) : yield_for_ns_(yield_for_ns) {}
  void pause();
  void reset() {
    n_ = 0;
    yield_until_ns_ = 0;
  }

 private:
  unsigned n_ = 0;
  int64_t yield_for_ns_ = 0;
  int64_t yield_until_ns_ = 0;  // set at the first yield when yield_for_ns_ > 0
};

void sleep_ns(int64_t ns);

}  // namespace symmem
