#include "core/hot_count.h"

#ifdef SYMMEM_HOT_PATH_COUNTERS
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>

namespace symmem::hot {
namespace {

std::atomic<unsigned long long> g_counts[kCount];
const char* const kNames[kCount] = {"ordered launches", "cudaSetDevice",       "cudaGetDevice",
                                    "cudaStreamIsCapturing", "cudaEventRecord",
                                    "cudaStreamWaitEvent", "streams lock",   "cuLaunchKernelEx",
                                    "runtime launch"};
std::atomic<unsigned long long> g_time_ns[kTimerCount];
std::atomic<unsigned long long> g_time_n[kTimerCount];
const char* const kTimerNames[kTimerCount] = {"symmem_all_reduce call", "of it in cuLaunchKernelEx"};
thread_local uint64_t t_driver_ns = 0;

}  // namespace

void count(Counter c) { g_counts[c].fetch_add(1, std::memory_order_relaxed); }

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

uint64_t& driver_ns() { return t_driver_ns; }

void add_time(Timer t, uint64_t ns) {
  g_time_ns[t].fetch_add(ns, std::memory_order_relaxed);
  g_time_n[t].fetch_add(1, std::memory_order_relaxed);
}

void report() {
  unsigned long long v[kCount];
  for (int i = 0; i < kCount; ++i) v[i] = g_counts[i].exchange(0, std::memory_order_relaxed);
  std::fprintf(stderr, "symmem hot path (pid %d): %llu %s:", static_cast<int>(getpid()),
               v[kOrderedLaunches], kNames[kOrderedLaunches]);
  for (int i = 1; i < kCount; ++i) std::fprintf(stderr, " %s %llu%s", kNames[i], v[i], i + 1 < kCount ? "," : "");
  std::fprintf(stderr, "\n");
  std::fprintf(stderr, "symmem hot path (pid %d) time:", static_cast<int>(getpid()));
  for (int i = 0; i < kTimerCount; ++i) {
    const unsigned long long ns = g_time_ns[i].exchange(0, std::memory_order_relaxed);
    const unsigned long long n = g_time_n[i].exchange(0, std::memory_order_relaxed);
    std::fprintf(stderr, " %s %llu calls, %.3f us each%s", kTimerNames[i], n, n > 0 ? ns / 1e3 / n : 0.0,
                 i + 1 < kTimerCount ? ";" : "");
  }
  std::fprintf(stderr, "\n");
}

}  // namespace symmem::hot
#endif
