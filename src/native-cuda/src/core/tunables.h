// The environment variables the native library reads itself, in one table: each with its range,
// its default in words and what it changes. Backends read their values through read_tunable, and
// the C ABI (symmem_tunable_*) lists the table so that `symmem config` shows and checks them with
// the variables the Java side reads.
#pragma once
#include <cstdint>

#include "core/abi.h"

namespace symmem {

enum class Tunable : int {
  kHostThreads,
  kHostTwoShotMinBytes,
  kHostParallelMinBytes,
  kCudaThreads,
  kCudaOneShotBlocks,
  kCudaTwoShotBlocks,
  kCudaMinThreads,
  kCudaPdl,
  kCudaUnroll,
  kCudaPushMaxBytes,
  kCudaPushScratchBytes,
  kCudaTwoShotMinBytes,
  kCudaTwoShotIpMinBytes,
  kCudaLoadKernels,
  kCudaDirectLaunch,
  kCudaCeSlotBytes,
  kCudaCeMinBytes,
  kCudaLlMaxBytes,
  kCudaTwoShotClaimItems,
  kCudaLl128MaxBytes,
  kCount
};

// A value whose default the backend works out (from the machine or the buffer) instead of a number.
inline constexpr uint64_t kComputed = UINT64_MAX;
inline constexpr uint64_t kUnbounded = UINT64_MAX;

struct TunableSpec {
  const char* name;
  const char* backend;   // "host" or "cuda" (the nccl backend runs the cuda kernels)
  uint64_t lo, hi;       // a value is a whole decimal number in [lo, hi]
  uint64_t fallback;     // the value when unset, or kComputed
  const char* meaning;   // what it changes; for kComputed also how the default is found
};

constexpr int kTunableCount = static_cast<int>(Tunable::kCount);

// Index = Tunable value (asserted below). The cuda block ranges are the kernels' limits
// (cuda/cuda_kernels.cu asserts that they agree with its constants).
inline constexpr TunableSpec kTunableSpecs[] = {
    {"SYMMEM_HOST_THREADS", "host", 1, 1024, kComputed,
     "threads per rank, the caller included (unset: the CPUs this process may use divided by the "
     "local ranks)"},
    {"SYMMEM_HOST_TWO_SHOT_MIN_BYTES", "host", 0, kUnbounded, uint64_t{64} << 10,
     "bytes: AUTO all-reduces of at least this size run two-shot"},
    {"SYMMEM_HOST_PARALLEL_MIN_BYTES", "host", 0, kUnbounded, uint64_t{4} << 20,
     "bytes: a step that reads at least this many bytes is shared with the rank's worker threads"},
    {"SYMMEM_CUDA_THREADS", "cuda", 64, 512, 512, "threads per block of the collectives"},
    {"SYMMEM_CUDA_ONE_SHOT_BLOCKS", "cuda", 1, 512, 132,
     "most blocks of a one-shot all-reduce; a program that runs large collectives at once from "
     "several threads or streams (more than two at world 2, more than one at world 3 to 8) lowers "
     "this and SYMMEM_CUDA_TWO_SHOT_BLOCKS so that their grids fit on the GPU together "
     "(docs/cuda-backend.md, concurrency)"},
    {"SYMMEM_CUDA_TWO_SHOT_BLOCKS", "cuda", 1, 512, 132,
     "most blocks of two-shot, all-gather and reduce-scatter"},
    {"SYMMEM_CUDA_MIN_THREADS", "cuda", 32, 512, 128,
     "fewest threads per block when a one-shot grid spreads over more blocks"},
    {"SYMMEM_CUDA_PDL", "cuda", 0, 1, 1, "1 launches with programmatic dependent launch, 0 without"},
    {"SYMMEM_CUDA_UNROLL", "cuda", 1, 2, 1,
     "items per thread per pass in two-shot and in a push one-shot of more than one item per "
     "thread"},
    {"SYMMEM_CUDA_PUSH_MAX_BYTES", "cuda", 0, kUnbounded, kComputed,
     "bytes: largest all-reduce that pushes into the peers' scratch instead of reading their "
     "buffers: one-shot (its whole input) and, at world 2, two-shot (the half the peer reduces) "
     "(unset: whatever fits the scratch); must be the same on every rank (import fails otherwise)"},
    {"SYMMEM_CUDA_PUSH_SCRATCH_BYTES", "cuda", 0, uint64_t{1} << 30, uint64_t{4} << 20,
     "bytes: push one-shot scratch per slot and rank that a buffer's pad region is sized for at "
     "allocation, so that one-shot pushes (and AUTO in place runs one-shot) up to this size at "
     "world 2 (at world w up to 2/w of it); memory: a buffer of B bytes gets a pad region of "
     "1088 KiB (the pad layout and the low-latency area) + 4 x min(B, this) + the 128-byte-line "
     "area (SYMMEM_CUDA_LL128_MAX_BYTES) rounded up to the allocation granularity (2 MiB: this "
     "scratch adds up to 16 MiB per buffer at 4 MiB; with both at 0 every pad region is 2 MiB); "
     "must be the same on every rank (import fails otherwise); 0: no more than the pad region's "
     "spare room"},
    {"SYMMEM_CUDA_TWO_SHOT_MIN_BYTES", "cuda", 0, kUnbounded, kComputed,
     "bytes: AUTO out-of-place all-reduces of at least this size run two-shot (unset: world 1 runs "
     "one-shot at every size, world 2 too except where only the push two-shot fits the scratch; "
     "worlds 3 and 4 two-shot from 1 MiB at sizes the 128-byte-line two-shot takes, else, as at 5 "
     "to 8, from 8 MiB / world)"},
    {"SYMMEM_CUDA_TWO_SHOT_IP_MIN_BYTES", "cuda", 0, kUnbounded, kComputed,
     "bytes: AUTO in-place all-reduces of at least this size run two-shot (unset: from just above "
     "the push scratch's capacity or the 128-byte lines' bound, whichever is larger, and at worlds "
     "3 to 8 from 1 MiB at sizes the 128-byte-line two-shot takes, else from 4 MiB / world, at "
     "most)"},
    {"SYMMEM_CUDA_LOAD_KERNELS", "cuda", 0, 1, 1,
     "1 loads every kernel at the process's first buffer on a device, 0 leaves each to its first "
     "launch (CUDA's lazy loading, which can then wait for other threads' spinning collectives)"},
    {"SYMMEM_CUDA_DIRECT_LAUNCH", "cuda", 0, 1, 1,
     "1 launches each kernel through the driver (cuLaunchKernelEx) with its function looked up "
     "once per device, 0 through the runtime's cudaLaunchKernelEx"},
    {"SYMMEM_CUDA_CE_SLOT_BYTES", "cuda", 0, uint64_t{1} << 30, 0,
     "bytes: the largest chunk of the copy-engine two-shot (SYMMEM_ALGO_TWO_SHOT_CE, opt-in: not "
     "yet faster than two-shot on 2 x H100); a buffer of B >= SYMMEM_CUDA_CE_MIN_BYTES bytes gets 2 "
     "slots of min(this, B / 8) in its pad region (a quarter more memory up to 256 MiB buffers at "
     "32 MiB), of the cuda and nccl backends only; must be the same on every rank (import fails "
     "otherwise); 0: no such scratch, no copy-engine two-shot"},
    {"SYMMEM_CUDA_CE_MIN_BYTES", "cuda", 0, kUnbounded, uint64_t{64} << 20,
     "bytes: buffers of at least this size get the copy-engine scratch, and AUTO runs in-place "
     "all-reduces of at least this size at world 2 as the copy-engine two-shot; must be the "
     "same on every rank"},
    {"SYMMEM_CUDA_LL_MAX_BYTES", "cuda", 0, kUnbounded, kComputed,
     "bytes: largest one-shot that sends its input as low-latency lines (each 4 bytes with the "
     "call's flag in one store: no fence, no separate signal) instead of through the push scratch "
     "(unset: whatever fits the 1 MiB low-latency area: 128 KiB at world 2, 64 KiB at 4, 32 KiB "
     "at 8; on 2 x H100 the lines were faster at every size up to 128 KiB); 0: never; must be the "
     "same on every rank (import fails otherwise)"},
    {"SYMMEM_CUDA_TWO_SHOT_CLAIM_ITEMS", "cuda", 0, 64, 1,
     "items (16 bytes each) per thread in one chunk that a block of an in-place two-shot (above "
     "the push scratch) takes from its rank's slice, chunk after chunk, so that the blocks the "
     "link serves faster take more (on 2 x H100 1 was 3 % faster than a fixed share from 32 to "
     "256 MiB, 2 and 4 less); 0: a fixed share per block"},
    {"SYMMEM_CUDA_LL128_MAX_BYTES", "cuda", 0, uint64_t{1} << 30, uint64_t{4} << 20,
     "bytes: largest all-reduce above the low-latency lines that sends its input as 128-byte lines "
     "(120 data bytes and the call's flag, one warp's store each: no fence, no separate signal, "
     "the receiver reduces each line as it lands): the one-shot at world 2, the one-shot up to "
     "512 KiB and the two-shot at worlds 3 and 4, each with a GPU for each rank (elsewhere: the "
     "push one-shot, the pull two-shot); a buffer's pad region gets room for 2 slots x 2 ranks of "
     "lines for min(its size, this) and 16 KiB (about 4.3 x that many bytes: up to 18 MiB more per "
     "buffer at 4 MiB); relies on a 128-byte line crossing NVLink whole, as NCCL's LL128 does; 0: "
     "never, no such room; must be the same on every rank (import fails otherwise)"},
};
static_assert(sizeof kTunableSpecs / sizeof kTunableSpecs[0] == kTunableCount,
              "one spec per Tunable, in order");

constexpr const TunableSpec& tunable_spec(Tunable t) { return kTunableSpecs[static_cast<int>(t)]; }
// The spec's default, for a tunable that has a number for it.
constexpr uint64_t tunable_default(Tunable t) { return tunable_spec(t).fallback; }
// Range, default and meaning in one line, as `symmem config` and the error messages show them.
const char* tunable_allowed(Tunable t);


// A whole decimal number in [lo, hi], nothing else (no sign, space, unit or trailing text).
bool parse_whole(const char* v, uint64_t lo, uint64_t hi, uint64_t* out);

// *is_set false (and *out untouched) when the variable is unset or empty; SYMMEM_ERR_INVALID_ARGUMENT
// with one line naming the variable, its value and what is allowed when the value is not valid.
symmem_status read_tunable(Tunable t, uint64_t* out, bool* is_set);
// For readers that run after the backend was opened (the open checked every value of its backend
// with check_tunables): the value, or `fallback` when unset.
uint64_t tunable_or(Tunable t, uint64_t fallback);
// Whether the variable holds a valid value (unset, empty or invalid: false).
bool tunable_is_set(Tunable t);
// The value, or the spec's default when unset (for tunables whose default is a number).
inline uint64_t tunable_value(Tunable t) { return tunable_or(t, tunable_default(t)); }
// The first invalid value among the tunables of `backend`, as read_tunable reports it.
symmem_status check_tunables(const char* backend);

}  // namespace symmem
