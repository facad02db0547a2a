// Counters of what the hot path of a signal, barrier or collective asks of the CUDA runtime and
// driver, and of the process-wide locks it takes: built only with -DSYMMEM_HOT_PATH_COUNTERS=ON
// (for the launch-cost runs), so the real path pays nothing. With them, symmem_backend_close
// prints the process's counts to stderr, one line, and the number of ordered launches they
// belong to (cuda/device_buffer.cu, ordered()).
#pragma once

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

#ifdef SYMMEM_HOT_PATH_COUNTERS
void count(Counter c);
// "symmem hot path (pid N): 1000 ordered launches: ..." to stderr, then zero.
void report();
#define SYMMEM_HOT_COUNT(c) ::symmem::hot::count(::symmem::hot::c)
#else
inline void report() {}
#define SYMMEM_HOT_COUNT(c) \
  do {                      \
  } while (0)
#endif

}  // namespace symmem::hot
