#include "core/hot_count.h"

#ifdef SYMMEM_HOT_PATH_COUNTERS
#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace symmem::hot {
namespace {

std::atomic<unsigned long long> g_counts[kCount];
const char* const kNames[kCount] = {"ordered launches", "cudaSetDevice",       "cudaGetDevice",
                                    "cudaStreamIsCapturing", "cudaEventRecord",
                                    "cudaStreamWaitEvent", "streams lock",   "cuLaunchKernelEx",
                                    "runtime launch"};

}  // namespace

void count(Counter c) { g_counts[c].fetch_add(1, std::memory_order_relaxed); }

void report() {
  unsigned long long v[kCount];
  for (int i = 0; i < kCount; ++i) v[i] = g_counts[i].exchange(0, std::memory_order_relaxed);
  std::fprintf(stderr, "symmem hot path (pid %d): %llu %s:", static_cast<int>(getpid()),
               v[kOrderedLaunches], kNames[kOrderedLaunches]);
  for (int i = 1; i < kCount; ++i) std::fprintf(stderr, " %s %llu%s", kNames[i], v[i], i + 1 < kCount ? "," : "");
  std::fprintf(stderr, "\n");
}

}  // namespace symmem::hot
#endif
