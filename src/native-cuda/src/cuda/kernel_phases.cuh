// Where a collective kernel's time goes, block by block: built only with -DSYMMEM_KERNEL_PHASES=ON
// (profile runs), otherwise every mark below compiles to nothing. Included by cuda_kernels.cu alone
// (the table is a __device__ variable of that translation unit).
//
// Why not Nsight: a collective kernel waits for its peer's kernel, so a profiler must start both
// ranks' kernels together and never replay one alone. Neither Nsight Compute's kernel replay nor its
// application replay does that on the GPU hosts (docs/benchmarks-history.md), and Nsight Systems' metrics
// are sampled every 5 us at best, coarser than the phases of a 20 us kernel.
//
// Thread 0 of every block (and the thread that signals the peer) reads %globaltimer at the marks; at
// the kernel's end thread 0 adds the block's phase durations to the block's own row of a per-device
// table (one row per kernel kind, in place or not, size class and block index): no atomics between
// blocks and nothing that crosses the link, a few instructions per mark. symmem_backend_close prints
// the means (report_kernel_phases, cuda backend). The phases, per call, in nanoseconds:
//   gap     the same block's end in the previous call (same kernel and size class) to this call's
//           start of work: what a back-to-back launch costs the GPU between two calls
//   pdl     the block's entry to the end of griddepcontrol.wait (the previous grid still running)
//   work k  start of work (or the end of barrier k-1) to every thread of the block having issued the
//           stores that barrier k publishes (the __syncthreads that opens it)
//   fence k that to the signalling thread's release store returning: its earlier stores acknowledged
//           (world 2: one thread; at larger worlds the last of the signalling threads)
//   wait k  that to the block passing the barrier (the peer's signal seen, then __syncthreads)
//   tail    the last barrier's end to the block's end (after a __syncthreads)
//   total   start of work to the block's end
// %globaltimer may tick more coarsely than a short phase lasts: the means over
// thousands of calls are what to read.
#pragma once
#include <cstdint>
#include <cstdio>
#include <vector>

namespace symmem::cuda {
namespace phases {

enum Kind {
  kOneShot,
  kOneShotPush,
  kOneShotLl,
  kTwoShot,
  kTwoShotPush,
  kOneShotLl128,
  kTwoShotLl128,
  kKinds
};
constexpr const char* kKindNames[kKinds] = {"one_shot",       "one_shot_push", "one_shot_ll",
                                            "two_shot",       "two_shot_push", "one_shot_ll128",
                                            "two_shot_ll128"};
constexpr int kMaxBarriers = 3;
// Marks in shared memory: entry, go, then (issued, released, passed) per barrier, then end.
constexpr int kEntry = 0, kGo = 1, kEnd = 2 + 3 * kMaxBarriers, kMarks = kEnd + 1;
__host__ __device__ constexpr int issued_index(int k) { return 2 + 3 * (k - 1); }
// Fields of a table row: sums over calls, then the counts.
enum Field {
  kGap,
  kPdl,
  kWork1,  // work, fence, wait of barrier k at kWork1 + 3 (k - 1) + 0, 1, 2
  kTail = kWork1 + 3 * kMaxBarriers,
  kTotal,
  kCalls,
  kGapCalls,
  kFields
};
constexpr int kMinClass = 10, kClasses = 20;  // size classes 2^10 .. 2^29 bytes (ceil log2)

#ifdef SYMMEM_KERNEL_PHASES
constexpr int kRows = kKinds * 2 * kClasses * kMaxBlocks;
__device__ unsigned long long g_rows[kRows][kFields];
__device__ unsigned long long g_row_bytes[kKinds * 2 * kClasses];  // the last size seen per class
__device__ unsigned long long g_prev_end[kMaxBlocks];
__device__ int g_prev_key[kMaxBlocks];

__device__ __forceinline__ uint64_t now() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned long long* marks() {
  __shared__ unsigned long long m[kMarks];
  return m;
}
__device__ __forceinline__ int size_class(uint64_t bytes) {
  int c = bytes <= 1 ? 0 : 64 - __clzll(bytes - 1);
  c -= kMinClass;
  return c < 0 ? 0 : c >= kClasses ? kClasses - 1 : c;
}
// Thread 0, before griddepcontrol.wait; the returned time goes to mark_go.
__device__ __forceinline__ uint64_t entry_time() { return threadIdx.x == 0 ? now() : 0; }
__device__ __forceinline__ void mark_go(uint64_t entry) {
  if (threadIdx.x != 0) return;
  unsigned long long* m = marks();
  for (int k = 0; k < kMarks; ++k) m[k] = 0;
  m[kEntry] = entry;
  m[kGo] = now();
}
// Thread 0 after a barrier's opening __syncthreads (issued), the signalling thread after its
// release store (released), thread 0 after the closing __syncthreads (passed).
__device__ __forceinline__ void mark_issued(int k) {
  if (threadIdx.x == 0 && k <= kMaxBarriers) marks()[issued_index(k)] = now();
}
__device__ __forceinline__ void mark_released(int k) {
  if (k <= kMaxBarriers) atomicMax(&marks()[issued_index(k) + 1], static_cast<unsigned long long>(now()));
}
__device__ __forceinline__ void mark_passed(int k) {
  if (threadIdx.x == 0 && k <= kMaxBarriers) marks()[issued_index(k) + 2] = now();
}
// Every thread of the block, at the kernel's normal end.
__device__ __forceinline__ void mark_end(int kind, bool in_place, uint64_t bytes) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned long long* m = marks();
  m[kEnd] = now();
  const int key = (kind * 2 + (in_place ? 1 : 0)) * kClasses + size_class(bytes);
  unsigned long long* row = g_rows[key * kMaxBlocks + blockIdx.x];
  const unsigned b = blockIdx.x;
  if (g_prev_key[b] == key + 1 && m[kGo] > g_prev_end[b]) {
    row[kGap] += m[kGo] - g_prev_end[b];
    row[kGapCalls] += 1;
  }
  g_prev_key[b] = key + 1;
  g_prev_end[b] = m[kEnd];
  row[kPdl] += m[kGo] - m[kEntry];
  unsigned long long from = m[kGo];
  for (int k = 1; k <= kMaxBarriers; ++k) {
    const unsigned long long issued = m[issued_index(k)], released = m[issued_index(k) + 1],
                             passed = m[issued_index(k) + 2];
    if (issued == 0 || passed == 0) continue;
    const int f = kWork1 + 3 * (k - 1);
    row[f] += issued - from;
    const unsigned long long rel = released != 0 ? released : issued;
    row[f + 1] += rel - issued;
    row[f + 2] += passed - rel;
    from = passed;
  }
  row[kTail] += m[kEnd] - from;
  row[kTotal] += m[kEnd] - m[kGo];
  row[kCalls] += 1;
  if (b == 0) g_row_bytes[key] = bytes;
}
#else
__device__ __forceinline__ uint64_t entry_time() { return 0; }
__device__ __forceinline__ void mark_go(uint64_t) {}
__device__ __forceinline__ void mark_issued(int) {}
__device__ __forceinline__ void mark_released(int) {}
__device__ __forceinline__ void mark_passed(int) {}
__device__ __forceinline__ void mark_end(int, bool, uint64_t) {}
#endif

}  // namespace phases

// Prints the table of `device` to stderr, a line per kernel kind and size that ran (in a build
// without SYMMEM_KERNEL_PHASES: nothing).
void report_kernel_phases(int device) {
#ifdef SYMMEM_KERNEL_PHASES
  using namespace phases;
  std::vector<unsigned long long> rows(size_t(kRows) * kFields);
  std::vector<unsigned long long> bytes(kKinds * 2 * kClasses);
  if (cudaSetDevice(device) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  if (cudaMemcpyFromSymbol(rows.data(), g_rows, rows.size() * sizeof(rows[0])) != cudaSuccess ||
      cudaMemcpyFromSymbol(bytes.data(), g_row_bytes, bytes.size() * sizeof(bytes[0])) != cudaSuccess) {
    cudaGetLastError();
    std::fprintf(stderr, "symmem kernel phases: device %d: the table could not be read\n", device);
    return;
  }
  static const char* kNames[kFields] = {"gap", "pdl", "work1", "fence1", "wait1", "work2", "fence2",
                                        "wait2", "work3", "fence3", "wait3", "tail", "total"};
  for (int key = 0; key < kKinds * 2 * kClasses; ++key) {
    const unsigned long long* first = &rows[size_t(key) * kMaxBlocks * kFields];
    if (first[kCalls] == 0) continue;
    int blocks = 0;
    double mean[kFields] = {}, worst[kFields] = {};
    for (int b = 0; b < kMaxBlocks; ++b) {
      const unsigned long long* r = first + size_t(b) * kFields;
      if (r[kCalls] == 0) continue;
      ++blocks;
      for (int f = 0; f < kCalls; ++f) {
        const double n = f == kGap ? double(r[kGapCalls]) : double(r[kCalls]);
        const double v = n > 0 ? r[f] / n / 1000.0 : 0.0;
        mean[f] += v;
        if (v > worst[f]) worst[f] = v;
      }
    }
    const int kind = key / (2 * kClasses), in_place = (key / kClasses) % 2;
    std::fprintf(stderr,
                 "symmem kernel phases (device %d): %s%s %llu bytes, %llu calls x %d blocks, us per call "
                 "(block mean / slowest block):",
                 device, kKindNames[kind], in_place ? " in place" : "", bytes[key], first[kCalls], blocks);
    for (int f = 0; f < kCalls; ++f) {
      if (worst[f] == 0.0 && f != kTotal) continue;
      std::fprintf(stderr, " %s %.2f/%.2f", kNames[f], mean[f] / blocks, worst[f]);
    }
    std::fprintf(stderr, "\n");
  }
#else
  (void)device;
#endif
}

}  // namespace symmem::cuda
