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
class Backoff {
 public:
  void pause();
  void reset() { n_ = 0; }

 private:
  unsigned n_ = 0;
};

void sleep_ns(int64_t ns);

}  // namespace symmem
