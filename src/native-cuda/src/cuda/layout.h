// What the host and the kernels share: the layout of one rank's allocation, the device-side error
// record, and the kernels' argument blocks.
//
// One allocation per rank (one cuMemCreate, one exported fd):
//   [ pad region, rounded up to the allocation granularity ][ data, rounded up likewise ]
// The pad region starts with a PadRegion (below); from kLlOff lies the low-latency one-shot's area
// (kLlAreaBytes: 2 slots x world ranks of 8-byte lines), from kScratchOff the push one-shot scratch
// (2 slots x world ranks x capacity; none where the region is smaller), then the 128-byte-line
// one-shot's area (Header::ll128_area_bytes: 2 slots x world ranks of lines; none when 0), and at
// the region's end the copy-engine two-shot's scratch (2 slots of Header::ce_slot_bytes; none when
// 0). All are written by peers and read locally. Kernels find a peer's scratch from their own pad
// region's size, so every rank's pad region has the same size (the header carries it; import
// checks it).
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/abi.h"

namespace symmem::cuda {

constexpr int kMaxBlocks = 512;    // most blocks any collective launches
constexpr int kMaxCollWorld = 8;   // collectives: world 2..8 (signals/barrier: up to MAX_WORLD)

constexpr uint32_t kMagic = 0x4d4d5953u;  // "SYMM"
// 2: the epochs live in the pad region (kEpochsOff), advanced by the kernels themselves.
// 3: the header carries the pad region's size and the push scratch setting it was sized with.
// 4: the copy-engine two-shot's flags, epoch and scratch (Header::ce_slot_bytes).
// 5: the low-latency one-shot's area (kLlOff) before the push scratch, which starts later; the
//    header carries the one-shot's path settings.
// 6: the 128-byte-line one-shot's area before the copy-engine scratch; the header carries its size
//    and SYMMEM_CUDA_LL128_MAX_BYTES.
constexpr uint32_t kLayoutVersion = 7;
struct Header {
  uint32_t magic;
  uint32_t layout_version;
  uint64_t requested_bytes;  // size_bytes given to alloc
  uint64_t total_bytes;      // whole allocation
  uint8_t uuid[16];          // the allocating GPU
  int32_t device;            // its ordinal in the allocating process (for messages)
  int32_t pid;
  uint64_t pad_region_bytes;    // bytes before the data: equal on every rank (push scratch)
  uint64_t push_scratch_bytes;  // SYMMEM_CUDA_PUSH_SCRATCH_BYTES's value at alloc, for messages
  uint64_t ce_slot_bytes;       // one copy-engine scratch slot (two at the region's end); 0: none
  // The one-shot's paths in effect (SYMMEM_CUDA_LL_MAX_BYTES, SYMMEM_CUDA_PUSH_MAX_BYTES; all ones:
  // unset): a rank that sends lines waits for lines, so every rank must choose alike.
  uint64_t ll_max_bytes;
  uint64_t push_max_bytes;
  uint64_t ll128_max_bytes;   // SYMMEM_CUDA_LL128_MAX_BYTES at alloc
  uint64_t ll128_area_bytes;  // the 128-byte-line area (before the copy-engine scratch); 0: none
};

// The copy-engine two-shot's flags (PadRegion::ce_flags), each written by the one peer on a line
// of its own: the last chunk sequence number it pushed into this rank's scratch, the last it
// finished reading from this rank's pushes (their slot is free), the last reduced chunk it
// pushed back into this rank's data.
enum CeFlag : int { kCePushed = 0, kCeConsumed = 1, kCeReturned = 2, kCeFlagCount = 3 };
constexpr int kCeFlagStride = 32;  // uint32 words: 128 bytes
constexpr int kCeMaxChunks = 4096;  // chunks per half in one call (at 32 MiB slots: 128 GiB halves)

// The head of every rank's pad region. Peers in other processes read and write it at these
// offsets, so it is the format between processes: a change of any member's place must change
// kLayoutVersion (the asserts below hold the places of version 1).
struct PadRegion {
  // The ABI's public signal pad (symmem_signal_pad): slot [channel][rank], 0/1.
  uint32_t signals[SYMMEM_SIGNAL_CHANNELS][SYMMEM_MAX_WORLD];
  // Collectives: epochs written by peers, per launched block and sending rank.
  uint32_t coll_flags[kMaxBlocks][kMaxCollWorld];
  // Local only (peers never touch it): every rank's public pad as mapped in this process, for the
  // signal kernels. Kept in the buffer's own memory, so that neither binding nor freeing a buffer
  // needs cudaMalloc/cudaFree, which wait for the whole device (other buffers' collectives too).
  uint64_t pad_table[SYMMEM_MAX_WORLD];
  // The copy-engine two-shot's flags (CeFlag), written by the peer.
  uint32_t ce_flags[kCeFlagCount * kCeFlagStride];
  uint32_t reserved[kMaxBlocks - 2 * SYMMEM_MAX_WORLD - kCeFlagCount * kCeFlagStride];
  // Local only: the first device-side timeout (or abort) wins this word and fills the error record.
  uint32_t claim;
  // The claim alone in its 256 bytes: peers' flags never share its lines. Word kAbortCheckedWord
  // of them (local only, a line of its own) holds when a waiting thread last read the process's
  // abort word (globaltimer >> 10).
  uint32_t claim_line[63];
  // Barrier epochs (symmem_barrier / barrier_on_stream), [channel][arriving rank], written by peers.
  uint32_t barrier_flags[SYMMEM_SIGNAL_CHANNELS][SYMMEM_MAX_WORLD];
  Header header;  // written at alloc, read by peers at import
  // Local only: the epochs this rank's kernels use next, kept in device memory and advanced by the
  // kernels themselves, so that a kernel replayed from a CUDA graph reads the current epoch instead
  // of the one its arguments held at capture. One word per collective block (each block reads and
  // advances its own, so no block overwrites a word another block of the same grid has yet to
  // read; block 0 also advances the words of the blocks a grid leaves out, so all stay equal), and
  // one per barrier channel.
  alignas(256) uint32_t coll_epochs[kMaxBlocks];
  uint32_t barrier_epochs[SYMMEM_SIGNAL_CHANNELS];
  // Local only: the copy-engine two-shot's chunk sequence number before its next call (advanced on
  // the device by the call's last kernel, so a replayed graph reads the current one), and the
  // count of a reduce kernel's blocks that have finished (its last block signals the peer).
  uint32_t ce_epoch;
  uint32_t ce_blocks_done;
  // Local only: chunk k's sequence number (epoch + k + 1) at [k], written at the start of each call
  // on the device; the copy engines copy the peer's flags from here (a signal that needs no SM).
  uint32_t ce_seq[kCeMaxChunks];
  // Local only: the in-place two-shot's next chunk of the own slice to claim, and the count of its
  // blocks that have finished claiming (the last one zeroes both for the next call).
  uint32_t two_shot_next;
  uint32_t two_shot_done;
  // The value signals (symmem_signal_value): [channel][sending rank], written by the sender.
  uint64_t values[SYMMEM_VALUE_CHANNELS][SYMMEM_MAX_WORLD];
};

constexpr uint64_t kFlagsOff = offsetof(PadRegion, coll_flags);
constexpr uint64_t kPadTableOff = offsetof(PadRegion, pad_table);
constexpr uint64_t kClaimOff = offsetof(PadRegion, claim);
// Words after the claim: the last read of the abort word (PadRegion::claim_line), 128 bytes on.
constexpr int kAbortCheckedWord = 32;
static_assert(kAbortCheckedWord >= 1 && kAbortCheckedWord <= 63, "within claim_line");
constexpr uint64_t kBarFlagsOff = offsetof(PadRegion, barrier_flags);
constexpr uint64_t kHeaderOff = offsetof(PadRegion, header);
constexpr uint64_t kEpochsOff = offsetof(PadRegion, coll_epochs);
constexpr uint64_t kBarEpochsOff = offsetof(PadRegion, barrier_epochs);
constexpr uint64_t kCeFlagsOff = offsetof(PadRegion, ce_flags);
constexpr uint64_t kCeEpochOff = offsetof(PadRegion, ce_epoch);
constexpr uint64_t kCeBlocksDoneOff = offsetof(PadRegion, ce_blocks_done);
constexpr uint64_t kCeSeqOff = offsetof(PadRegion, ce_seq);
constexpr uint64_t kTwoShotClaimOff = offsetof(PadRegion, two_shot_next);  // and two_shot_done after it
// The low-latency one-shot's lines are kept apart from the push scratch: a line counts as arrived
// when its flag word equals the call's, and a push one-shot's raw data there could hold that value.
constexpr uint64_t kLlOff = 64 * 1024;
constexpr uint64_t kLlAreaBytes = 1024 * 1024;
constexpr uint64_t kScratchOff = kLlOff + kLlAreaBytes;

// Low-latency one-shot: bytes of lines per [slot][rank] at `world` ranks (an input of B bytes takes
// 2 x B rounded up to 16, as 8-byte lines of 4 data bytes and a flag).
constexpr uint64_t ll_capacity(int world) {
  return kLlAreaBytes / (2 * uint64_t(world < 1 ? 1 : world)) / 256 * 256;
}

// The 128-byte-line one-shot: a warp moves a chunk of kLl128ChunkWords 8-byte words of input as
// four 128-byte lines, each 15 data words and the call's flag in the last word (kLl128ChunkBytes of
// lines per chunk).
constexpr uint64_t kLl128ChunkWords = 60;
constexpr uint64_t kLl128ChunkBytes = 512;
// Bytes of lines that an input of `bytes` bytes takes.
constexpr uint64_t ll128_lines_bytes(uint64_t bytes) {
  return ((bytes + 7) / 8 + kLl128ChunkWords - 1) / kLl128ChunkWords * kLl128ChunkBytes;
}
// AUTO at worlds 3 to 8: in place two-shot from this / world, out of place from twice that; at sizes
// the 128-byte-line two-shot takes, from kAutoLl128TwoShotMinBytes (DeviceBuffer::auto_algo).
constexpr uint64_t kAutoOneShotTraffic = 4 * 1024 * 1024;
constexpr uint64_t kAutoLl128TwoShotMinBytes = 1024 * 1024;
// The largest one-shot that takes the lines at worlds 3 and 4 (kernels.h).
constexpr uint64_t kLl128WideMaxBytes = 512 * 1024;
// The area's room beyond 2 slots x 2 ranks of lines for an input: a chunk for each [slot][rank] of
// the two-shot's two areas at up to 8 ranks, which whole slices of chunks need beyond the input's
// own lines (at world 4 a 4 MiB two-shot takes 2185 chunks a slice; without it 2184 fit).
constexpr uint64_t kLl128AreaSlack = 2 * 2 * 8 * kLl128ChunkBytes;
// Bytes of lines per [slot][rank] in an area of `area` bytes at `world` ranks (whole chunks).
constexpr uint64_t ll128_capacity(uint64_t area, int world) {
  return area / (2 * uint64_t(world < 1 ? 1 : world)) / kLl128ChunkBytes * kLl128ChunkBytes;
}
// The largest input whose lines fit `cap` bytes.
constexpr uint64_t ll128_max_input(uint64_t cap) {
  return cap / kLl128ChunkBytes * kLl128ChunkWords * 8;
}
// The two-shot's reduce area in the first half of each [slot][rank] region of `cap` bytes, its
// gather area in the second, from this offset (whole chunks).
constexpr uint64_t ll128_gather_off(uint64_t cap) { return cap / 2 / kLl128ChunkBytes * kLl128ChunkBytes; }
// The largest input of the two-shot at `world` ranks: `world` slices of whole chunks, one slice in
// each half of a region.
constexpr uint64_t ll128_two_shot_max_input(uint64_t cap, int world) {
  return uint64_t(world) * (ll128_gather_off(cap) / kLl128ChunkBytes) * kLl128ChunkWords * 8;
}
static_assert(ll128_two_shot_max_input(2 * 8 * kLl128ChunkBytes, 4) == 4 * 8 * kLl128ChunkWords * 8,
              "a slice of 8 chunks in each half");
static_assert(ll128_lines_bytes(ll128_max_input(4 * kLl128ChunkBytes)) == 4 * kLl128ChunkBytes,
              "the largest input of a capacity fits it exactly");

// Push one-shot scratch per [slot][rank] in a pad region of `pad_region` bytes at `world` ranks.
constexpr uint64_t push_capacity(uint64_t pad_region, int world) {
  return pad_region > kScratchOff ? (pad_region - kScratchOff) / (2 * uint64_t(world)) / 256 * 256 : 0;
}

static_assert(std::is_standard_layout_v<PadRegion>, "offsetof needs a standard-layout struct");
static_assert(offsetof(PadRegion, signals) == 0, "symmem_signal_pad returns the start of the region");
static_assert(sizeof(PadRegion::signals) == uint64_t{SYMMEM_SIGNAL_CHANNELS} * SYMMEM_MAX_WORLD * 4,
              "the public pad is SYMMEM_SIGNAL_CHANNELS x SYMMEM_MAX_WORLD uint32 (symmem.h)");
static_assert(kFlagsOff == 8192 && kClaimOff == 26624 && kBarFlagsOff == 26880 && kHeaderOff == 35072,
              "layout places peers rely on; moving a member means a new kLayoutVersion");
static_assert(kEpochsOff > kHeaderOff && kBarEpochsOff == kEpochsOff + kMaxBlocks * 4,
              "the device-kept epochs follow the header (local only: zeroed at alloc)");
static_assert(kPadTableOff % 8 == 0, "the pad table holds device pointers");
static_assert(offsetof(PadRegion, values) % 8 == 0, "the values are 8-byte words");
static_assert(sizeof(PadRegion) <= kLlOff, "the pad region's head ends before the low-latency lines");
static_assert(kHeaderOff % alignof(Header) == 0, "the header is naturally aligned");
static_assert(kHeaderOff + sizeof(Header) <= kEpochsOff, "the header ends before the epochs");
static_assert(kCeFlagsOff % 128 == 0 && kCeFlagsOff + sizeof(PadRegion::ce_flags) <= kClaimOff,
              "the copy-engine flags start a line and end before the claim");
static_assert(sizeof(PadRegion) <= kLlOff, "the pad layout overlaps the low-latency area");
static_assert(offsetof(PadRegion, two_shot_done) == kTwoShotClaimOff + 4, "one 8-byte reset clears both");

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
  kOpAllReduceCe = 8,  // channel = the CeFlag waited for + 1, nbarriers = the chunk (1-based)
  kOpBroadcast = 9,
  kOpAllToAll = 10,
  kOpAllToAllV = 11,
  kOpWaitSignalValue = 12,  // value_wanted, value_seen, cmp
};
// An all-to-all-v whose splits do not fit (ErrorRecord::bad_splits): every rank reaches the same
// verdict from the same rows, writes nothing and stays in step, so it is reported apart from the
// claim (a claimed record makes every other wait of the buffer give up).
constexpr uint32_t kSplitNegative = 1;   // rank `from`'s split for rank `to` is `n` (< 0)
constexpr uint32_t kSplitInput = 2;      // rank `from`'s part for `to` (n elements from `at`) ends past `limit`
constexpr uint32_t kSplitOutput = 3;     // rank `to` would receive `total`; the part from `from` (n at `at`) passes `limit`
constexpr uint32_t kGaveUpTimeout = 1;
constexpr uint32_t kGaveUpAborted = 2;  // symmem_abort: the process's pinned abort word became 1
// The abort word (host memory, over the bus) is read by one waiting thread of a buffer at most this
// often (cuda_kernels.cu, Waiter).
constexpr uint64_t kAbortCheckNs = 20000;
struct ErrorRecord {
  volatile uint32_t status;  // 0 = none, kGaveUpTimeout, kGaveUpAborted
  volatile uint32_t op;
  volatile int32_t channel;  // public channel, or the collective's barrier index (1-based)
  volatile int32_t peer;     // the rank that did not answer
  volatile int32_t nbarriers;
  volatile uint32_t timeout_ms;
  // Splits that do not fit (kSplit*; 0 = none), written by block 0 of the all-to-all-v alone.
  volatile uint32_t bad_splits;
  volatile int32_t split_from, split_to;
  volatile int64_t split_n;
  volatile uint64_t split_at, split_limit, split_total;
  // A value wait that gave up: what it waited for and what it saw last.
  volatile uint64_t value_wanted, value_seen;
  volatile int32_t cmp;
};

// Signals and the public barrier (one block, one thread per peer).
struct SigArgs {
  uint32_t* const* pads;  // device array: rank r's public pad, r < world
  uint32_t* epochs;       // own barrier epochs (PadRegion::barrier_epochs), advanced on the device
  uint32_t* claim;
  ErrorRecord* err;       // device alias of the host-mapped record
  const uint32_t* abort;  // device alias of the process's pinned abort word
  int rank, world, peer, channel;
  uint32_t timeout_ms;
  uint64_t timeout_ns;
  uint64_t value;  // value signals: the value set, added or waited for
  int op;          // value signals: symmem_signal_op, or symmem_signal_cmp for a wait
};

// Collectives (world <= kMaxCollWorld): everything by value.
struct CollArgs {
  char* data[kMaxCollWorld];       // rank r's data
  uint32_t* flags[kMaxCollWorld];  // rank r's collective flags
  uint32_t* epochs;                 // own per-block epochs (PadRegion::coll_epochs): block b's
                                   // barrier k uses epochs[b] + k, and the block advances it by 3
  uint32_t* claim;                 // own
  ErrorRecord* err;
  const uint32_t* abort;           // device alias of the process's pinned abort word
  int rank, world;
  uint32_t op;                     // ErrOp, for the record
  uint32_t timeout_ms;
  uint64_t timeout_ns;
  // Push one-shot scratch: own scratch base minus own data[rank] (the same for every rank, whose
  // pad regions are equal), and bytes per [slot][rank] (0: none). From the pad region's size, not
  // from data[rank]: a view's data lie further in, and its scratch is the segment's.
  int64_t scratch_delta;
  uint64_t scratch_cap;
  // Low-latency one-shot area: own area minus own data[rank], and bytes of lines per [slot][rank].
  int64_t ll_delta;
  uint64_t ll_cap;
  // 128-byte-line one-shot area: own area minus own data[rank], and bytes of lines per
  // [slot][rank] (0: none, or not every rank has a GPU of its own).
  int64_t ll128_delta;
  uint64_t ll128_cap;
};

// The copy-engine two-shot's kernels (world 2): chunk sequence numbers are *epoch + k, k from 1.
struct CeArgs {
  uint32_t* mine;          // own pad region (flags at kCeFlagsOff)
  uint32_t* peer;          // the peer's pad region
  uint32_t* epoch;         // own PadRegion::ce_epoch
  uint32_t* blocks_done;   // own PadRegion::ce_blocks_done
  uint32_t* seq;           // own PadRegion::ce_seq
  uint32_t* claim;
  ErrorRecord* err;
  const uint32_t* abort;
  int peer_rank;
  uint32_t timeout_ms;
  uint64_t timeout_ns;
};

}  // namespace symmem::cuda
