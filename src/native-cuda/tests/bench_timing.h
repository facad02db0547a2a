// The timing of the forked-rank benches (nccl_bench, movers_bench): every rank times the same number
// of back-to-back calls on one stream, started together, and the slowest rank's time per call is
// reported. Needs a Shared (below) in memory the forked ranks share, made before the fork.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "cuda_test_util.h"

namespace bench {

constexpr int kMaxWorld = 8;

struct Shared {
  std::atomic<int> arrived;
  std::atomic<int> generation;
  std::atomic<long> iters;
  double us[kMaxWorld], host_us[kMaxWorld];
};

inline double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Result {
  double us, host_us;  // per call: to the stream's end, and on the host alone (what a call costs the caller)
  long iters;
  int slowest;  // the rank whose us is reported
};

// Five warm-up calls, ten to calibrate (rank 0 picks the count for about 100 ms: 10 to 20 000), then the
// count on every rank at once; us = steady clock around the calls + cudaStreamSynchronize, / count.
template <class F>
Result measure(Shared* shared, int rank, int world, cudaStream_t stream, F call) {
  for (int i = 0; i < 5; ++i) call();
  CUDA_OK(cudaStreamSynchronize(stream));
  shm_barrier(shared, world);
  double t0 = now_us();
  for (int i = 0; i < 10; ++i) call();
  CUDA_OK(cudaStreamSynchronize(stream));
  const double per = (now_us() - t0) / 10;
  if (rank == 0) shared->iters.store(std::clamp(static_cast<long>(100000.0 / std::max(per, 1.0)), 10L, 20000L));
  shm_barrier(shared, world);
  const long iters = shared->iters.load();
  shm_barrier(shared, world);
  t0 = now_us();
  for (long i = 0; i < iters; ++i) call();
  const double t1 = now_us();
  CUDA_OK(cudaStreamSynchronize(stream));
  const double t2 = now_us();
  shared->us[rank] = (t2 - t0) / iters;
  shared->host_us[rank] = (t1 - t0) / iters;
  shm_barrier(shared, world);
  Result r{0, 0, iters, 0};
  for (int i = 0; i < world; ++i) {
    if (shared->us[i] > r.us) r.slowest = i;
    r.us = std::max(r.us, shared->us[i]);
    r.host_us = std::max(r.host_us, shared->host_us[i]);
  }
  shm_barrier(shared, world);  // nobody overwrites us[] before everyone has read it
  return r;
}

// A --sizes list: positive byte counts, multiples of `multiple`, at most max_bytes; K and M suffixes
// are KiB and MiB (4K,512K,8M).
inline std::vector<uint64_t> parse_sizes(const char* list, uint64_t multiple, uint64_t max_bytes) {
  std::vector<uint64_t> sizes;
  for (const char* p = list; *p != '\0';) {
    char* end = nullptr;
    uint64_t v = std::strtoull(p, &end, 10);
    if (end == p) TEST_FAIL("--sizes %s: expected a number at \"%s\" (bytes, K or M suffix: 4K,512K,8M)", list, p);
    if (*end == 'K') v <<= 10, ++end;
    else if (*end == 'M') v <<= 20, ++end;
    if (v == 0 || v % multiple != 0 || v > max_bytes)
      TEST_FAIL("--sizes %s: %llu bytes must be a multiple of %llu within %llu..%llu", list,
                static_cast<unsigned long long>(v), static_cast<unsigned long long>(multiple),
                static_cast<unsigned long long>(multiple), static_cast<unsigned long long>(max_bytes));
    sizes.push_back(v);
    if (*end == ',') ++end;
    else if (*end != '\0') TEST_FAIL("--sizes %s: unexpected \"%s\"", list, end);
    p = end;
  }
  return sizes;
}

}  // namespace bench
