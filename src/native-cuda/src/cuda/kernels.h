// Launchers of the device code (cuda_kernels.cu). Each returns the launch's cudaError_t.
#pragma once
#include <cuda_runtime.h>

#include "cuda/layout.h"

namespace symmem::cuda {

cudaError_t launch_put_signal(const SigArgs& a, cudaStream_t s);
cudaError_t launch_wait_signal(const SigArgs& a, cudaStream_t s);
cudaError_t launch_signal_value(const SigArgs& a, cudaStream_t s);
cudaError_t launch_wait_signal_value(const SigArgs& a, cudaStream_t s);
cudaError_t launch_barrier(const SigArgs& a, cudaStream_t s);
cudaError_t launch_memset32(uint32_t* p, uint32_t value, uint64_t count, cudaStream_t s);

// The number of blocks/threads a collective would use is fixed by (kind, dtype, count, world), so
// every rank launches the same grid: the per-block barriers rely on it.
cudaError_t launch_all_reduce(CollArgs a, int algo, int dtype, int op, uint64_t count, void* out,
                              cudaStream_t s);
cudaError_t launch_all_gather(CollArgs a, int dtype, uint64_t count, void* out, cudaStream_t s);
cudaError_t launch_reduce_scatter(CollArgs a, int dtype, int op, uint64_t count, void* out,
                                  cudaStream_t s);
// Broadcast, all-to-all and all-to-all-v (no arithmetic: every dtype of one size moves alike).
// In place, the all-to-all's `out` is scratch of world * count elements, copied back once the kernel
// is done; the all-to-all-v's is scratch of splits_at bytes after a header of a2av_scratch_header()
// bytes, and launch_a2av_copy_back then copies what was received (nothing after bad splits).
cudaError_t launch_broadcast(CollArgs a, int dtype, uint64_t count, int root, void* out, cudaStream_t s);
cudaError_t launch_all_to_all(CollArgs a, int dtype, uint64_t count, void* out, cudaStream_t s);
cudaError_t launch_all_to_all_v(CollArgs a, int dtype, uint64_t splits_at, void* out, uint64_t capacity,
                                int64_t* out_splits, bool in_place, cudaStream_t s);
cudaError_t launch_a2av_copy_back(int dtype, void* dst, const void* scratch, uint64_t max_bytes, cudaStream_t s);
uint64_t a2av_scratch_header();
// The copy-engine two-shot's kernels (cuda_kernels.cu, "copy-engine two-shot").
cudaError_t launch_ce_prepare(const CeArgs& a, int chunks, cudaStream_t s);
cudaError_t launch_ce_wait(const CeArgs& a, int kind, int chunk, cudaStream_t s);
cudaError_t launch_ce_reduce(const CeArgs& a, int dtype, int op, void* dst, const void* src,
                             uint64_t count, int chunk, cudaStream_t s);
cudaError_t launch_ce_finish(const CeArgs& a, int chunks, cudaStream_t s);
// Loads the code of every kernel above on the current device (cudaFuncGetAttributes), so that no
// launch loads one lazily while another thread's collective spins (see cuda_kernels.cu).
cudaError_t load_all_kernels();
// In a build with -DSYMMEM_KERNEL_PHASES=ON: the collective kernels' phase times on `device` (made
// current), to stderr (cuda/kernel_phases.cuh); otherwise nothing.
void report_kernel_phases(int device);
// Largest in-place one-shot input in bytes.
uint64_t one_shot_in_place_max_bytes();

// Tuning knobs, read once from the environment (for the bench's sweeps; defaults measured).
struct Tuning {
  int threads;           // per block
  int one_shot_blocks;   // max blocks of one-shot
  int two_shot_blocks;   // max blocks of two-shot / all-gather / reduce-scatter
  int min_threads;       // one-shot: spread small grids over blocks of at least this many threads
                         // (= threads: fill blocks first, the old grids)
  int pdl;               // 1: programmatic dependent launch (launch latency hidden behind the
                         // previous kernel on the stream)
  uint64_t push_max_bytes;  // all-reduces up to this (and the scratch's capacity) push into
                            // peers' scratch: one-shot, and two-shot at world 2; 0: always pull
  int unroll;            // two-shot and push one-shot: items per thread per pass (1 or 2;
                         // two-shot measured slower with 2 at 256 MiB in place and 8 MiB out of
                         // place, so 1)
  int direct_launch;     // 1: cuLaunchKernelEx with the function looked up once per device
  uint64_t ll_max_bytes;  // one-shot sends inputs up to this (and the area's capacity) as
                          // low-latency lines; 0: never
  uint32_t claim_items;   // in-place two-shot: items per thread of a block in one claimed chunk
                          // of the own slice; 0: a fixed share per block
  uint64_t ll128_max_bytes;  // one-shot sends inputs up to this (and the area's capacity) as
                             // 128-byte lines; 0: never
};

// The device whose primary context DeviceBuffer::set_device made current on this thread, before
// every launch: the launchers keep each kernel's driver function per device.
extern thread_local int t_launch_device;
const Tuning& tuning();

// The largest all-reduce in bytes that each push kernel takes, for a push scratch of `scratch_cap`
// bytes per [slot][rank]: the one-shot stores the whole input into a slot, the world-2 two-shot
// half of it (half the items within a slot is the same bound, the slot being a multiple of 256
// bytes). The launcher and AUTO both decide by these.
inline uint64_t push_one_shot_max_bytes(uint64_t scratch_cap) {
  return scratch_cap < tuning().push_max_bytes ? scratch_cap : tuning().push_max_bytes;
}
// The largest all-reduce in bytes that the 128-byte-line one-shot takes, for `ll128_cap` bytes of
// lines per [slot][rank]. At worlds 3 and 4 each rank stores its input into every peer, and from
// 1 MiB the 1/15 more bytes cost more than the fence they save (world 4 on 4 x H100: 128-512 KiB
// 0.4-0.5 us faster than the push one-shot, 1 MiB 0.8 us slower): there up to kLl128WideMaxBytes.
inline uint64_t ll128_one_shot_max_bytes(uint64_t ll128_cap, int world) {
  uint64_t max = ll128_max_input(ll128_cap);
  if (max > tuning().ll128_max_bytes) max = tuning().ll128_max_bytes;
  return world > 2 && max > kLl128WideMaxBytes ? kLl128WideMaxBytes : max;
}
// The largest all-reduce in bytes that the 128-byte-line two-shot takes (worlds 3 and 4 only: at
// world 2 it would move what the one-shot moves).
inline uint64_t ll128_two_shot_max_bytes(uint64_t ll128_cap, int world) {
  if (world < 3) return 0;
  const uint64_t fits = ll128_two_shot_max_input(ll128_cap, world);
  return fits < tuning().ll128_max_bytes ? fits : tuning().ll128_max_bytes;
}
inline uint64_t push_two_shot_max_bytes(uint64_t scratch_cap, int world) {
  if (world != 2) return 0;
  return 2 * scratch_cap < tuning().push_max_bytes ? 2 * scratch_cap : tuning().push_max_bytes;
}

}  // namespace symmem::cuda
