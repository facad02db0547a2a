// Counters of what the hot path of a signal, barrier or collective asks of the CUDA runtime and
// driver, and of the process-wide locks it takes: built only with -DSYMMEM_HOT_PATH_COUNTERS=ON
// (for the launch-cost runs), so the real path pays nothing. With them, symmem_backend_close
// prints the process's counts to stderr, one line, and the number of ordered launches they
// belong to (cuda/device_buffer.cu, ordered()); and the host time of the all-reduce calls against
// the time spent inside the driver's launch of them, which splits a call's cost into the
// driver's and symmem's own (each timer adds two clock reads, about 40 ns, to what it times).
#pragma once

#include <cstdint>

namespace symmem::hot {

enum Counter {
  kOrderedLaunches,  // launches of signals, barriers and collectives (the calls counted against)
  kSetDevice,        // cudaSetDevice
  kGetDevice,        // cudaGetDevice
  kIsCapturing,      // cudaStreamIsCapturing
  kEventRecord,      // cudaEventRecord (buffer order)
  kStreamWaitEvent,  // cudaStreamWaitEvent (buffer order)
  kStreamsLock,      // the process-wide lock of symmem's streams
  kLaunchDriver,     // cuLaunchKernelEx with a cached function
  kLaunchRuntime,    // cudaLaunchKernelEx or <<<>>> (the runtime's way)
  kCount
};

enum Timer {
  kTimeAllReduceCall,    // symmem_all_reduce, entry to return
  kTimeAllReduceDriver,  // the part of it spent inside cuLaunchKernelEx
  kTimerCount
};

#ifdef SYMMEM_HOT_PATH_COUNTERS
void count(Counter c);
uint64_t now_ns();
void add_time(Timer t, uint64_t ns);
// This thread's time inside cuLaunchKernelEx so far (cuda_kernels.cu adds to it).
uint64_t& driver_ns();
// Times one all-reduce call and the driver's share of it.
class AllReduceTime {
 public:
  AllReduceTime() : start_(now_ns()), driver_start_(driver_ns()) {}
  ~AllReduceTime() {
    add_time(kTimeAllReduceCall, now_ns() - start_);
    add_time(kTimeAllReduceDriver, driver_ns() - driver_start_);
  }
  AllReduceTime(const AllReduceTime&) = delete;
  AllReduceTime& operator=(const AllReduceTime&) = delete;

 private:
  uint64_t start_;
  uint64_t driver_start_;
};
// "symmem hot path (pid N): 1000 ordered launches: ..." to stderr, then zero.
void report();
#define SYMMEM_HOT_COUNT(c) ::symmem::hot::count(::symmem::hot::c)
#define SYMMEM_HOT_TIME_ALL_REDUCE() ::symmem::hot::AllReduceTime symmem_hot_all_reduce_time
#else
inline void report() {}
#define SYMMEM_HOT_COUNT(c) \
  do {                      \
  } while (0)
#define SYMMEM_HOT_TIME_ALL_REDUCE() \
  do {                               \
  } while (0)
#endif

}  // namespace symmem::hot
