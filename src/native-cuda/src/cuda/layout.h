// What the host and the kernels share: the layout of one rank's allocation, the device-side error
// record, and the kernels' argument blocks.
//
// One allocation per rank (one cuMemCreate, one exported fd):
//   [ pad region, rounded up to the allocation granularity ][ data, rounded up likewise ]
// pad region:
//   +0            public signal pad: SYMMEM_SIGNAL_CHANNELS x SYMMEM_MAX_WORLD uint32 (ABI pad)
//   +kFlagsOff    collective flags: kMaxBlocks x kMaxCollWorld uint32, written by peers (epochs)
//   +kEpochsOff   reserved (kMaxBlocks uint32)
//   +kClaimOff    error claim word: uint32, local only (first timeout wins it)
//   +kBarFlagsOff barrier flags: SYMMEM_SIGNAL_CHANNELS x SYMMEM_MAX_WORLD uint32 epochs, written by
//                 peers (symmem_barrier / barrier_on_stream on cuda)
//   +kHeaderOff   Header (magic, sizes, device UUID), written at alloc, read by peers at import
//   +kScratchOff  push one-shot scratch, up to the end of the pad region (2 slots x world ranks x
//                 capacity; none where the pad region is smaller): written by peers, read locally
#pragma once
#include <cstdint>

#include "core/abi.h"

namespace symmem::cuda {

constexpr int kMaxBlocks = 512;    // most blocks any collective launches
constexpr int kMaxCollWorld = 8;   // collectives: world 2..8 (signals/barrier: up to MAX_WORLD)
constexpr uint64_t kPublicPadBytes = uint64_t{SYMMEM_SIGNAL_CHANNELS} * SYMMEM_MAX_WORLD * 4;
constexpr uint64_t kFlagsOff = kPublicPadBytes;
constexpr uint64_t kEpochsOff = kFlagsOff + uint64_t{kMaxBlocks} * kMaxCollWorld * 4;
constexpr uint64_t kClaimOff = kEpochsOff + uint64_t{kMaxBlocks} * 4;
constexpr uint64_t kBarFlagsOff = kClaimOff + 256;  // barrier epochs: CHANNELS x MAX_WORLD uint32
constexpr uint64_t kHeaderOff = kBarFlagsOff + uint64_t{SYMMEM_SIGNAL_CHANNELS} * SYMMEM_MAX_WORLD * 4;
constexpr uint64_t kPadUsedBytes = kHeaderOff + 256;
constexpr uint64_t kScratchOff = 64 * 1024;
static_assert(kPadUsedBytes <= kScratchOff, "pad layout overlaps the scratch");

constexpr uint32_t kMagic = 0x4d4d5953u;  // "SYMM"
struct Header {
  uint32_t magic;
  uint32_t layout_version;
  uint64_t requested_bytes;  // size_bytes given to alloc
  uint64_t total_bytes;      // whole allocation
  uint8_t uuid[16];          // the allocating GPU
  int32_t device;            // its ordinal in the allocating process (for messages)
  int32_t pid;
};

// Host-mapped pinned memory, one per buffer. The first device-side timeout (or abort) wins the claim
// word and fills this (status last); the host turns it into SYMMEM_ERR_TIMEOUT (or _ABORTED).
enum ErrOp : uint32_t {
  kOpBarrier = 1,
  kOpPutSignal = 2,
  kOpWaitSignal = 3,
  kOpAllReduceOneShot = 4,
  kOpAllReduceTwoShot = 5,
  kOpAllGather = 6,
  kOpReduceScatter = 7,
};
constexpr uint32_t kGaveUpTimeout = 1;
constexpr uint32_t kGaveUpAborted = 2;  // symmem_abort: the process's pinned abort word became 1
// A waiting thread reads the abort word (host memory, over the bus) at most this often.
constexpr uint64_t kAbortCheckNs = 20000;
struct ErrorRecord {
  volatile uint32_t status;  // 0 = none, kGaveUpTimeout, kGaveUpAborted
  volatile uint32_t op;
  volatile int32_t channel;  // public channel, or the collective's barrier index (1-based)
  volatile int32_t peer;     // the rank that did not answer
  volatile int32_t nbarriers;
  volatile uint32_t timeout_ms;
};

// Signals and the public barrier (one block, one thread per peer).
struct SigArgs {
  uint32_t* const* pads;  // device array: rank r's public pad, r < world
  uint32_t* claim;
  ErrorRecord* err;       // device alias of the host-mapped record
  const uint32_t* abort;  // device alias of the process's pinned abort word
  int rank, world, peer, channel;
  uint32_t epoch;         // barrier: the epoch this barrier announces and waits for
  uint32_t timeout_ms;
  uint64_t timeout_ns;
};

// Collectives (world <= kMaxCollWorld): everything by value.
struct CollArgs {
  char* data[kMaxCollWorld];       // rank r's data
  uint32_t* flags[kMaxCollWorld];  // rank r's collective flags
  uint32_t epoch;                  // host-kept: barrier k of this call uses epoch + k
  uint32_t* claim;                 // own
  ErrorRecord* err;
  const uint32_t* abort;           // device alias of the process's pinned abort word
  int rank, world;
  uint32_t op;                     // ErrOp, for the record
  uint32_t timeout_ms;
  uint64_t timeout_ns;
};

}  // namespace symmem::cuda
