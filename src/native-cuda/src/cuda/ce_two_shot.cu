// The copy-engine two-shot all-reduce (SYMMEM_ALGO_TWO_SHOT_CE), world 2, in place.
//
// Why: on NVLink the SMs of two H100s load from the peer at about 335 GB/s per direction and store
// into it at about 363, while the copy engines move 391 (docs/benchmarks-history.md, link probe). The SM
// two-shot pulls, so it stops at the load limit (330 GB/s of bus bandwidth at 256 MiB). Here the
// copy engines move every byte that crosses the link and the SMs only add, locally.
//
// Rank r reduces half r of the data; the peer q reduces half q. Each half goes in C chunks of at
// most one scratch slot; both ranks use the same C, and chunk k (k = 1..C) has the sequence number
// epoch + k, epoch being PadRegion::ce_epoch, which the call's last kernel advances by C. A first
// kernel writes the C sequence numbers into PadRegion::ce_seq; a signal is a 4-byte copy from there
// into the peer's flag, on the stream of the data it announces, so the copy engines both move the
// data and say so. Per chunk:
//   push stream:   copy own values of half q, chunk k, into the peer's scratch slot (k - 1) % 2;
//                  signal the peer's PUSHED = k; before the next push, a wait kernel until the own
//                  CONSUMED >= k - 1 (the peer has read the slot that push k + 1 reuses);
//   caller's s:    wait kernel until the own PUSHED >= k; reduce kernel: add the scratch slot into
//                  half r, chunk k; its last block stores the peer's CONSUMED = k;
//   return stream: after the reduce (event), copy the reduced chunk into the peer's data; signal
//                  the peer's RETURNED = k.
// Then s waits for both streams, and a last kernel waits for the own RETURNED >= C and advances the
// epoch. Every wait is a one-thread kernel with the call's deadline that watches the abort word,
// like every other wait of the buffer; its record names the peer, the chunk and what was awaited.
// No signal needs an SM, the wide reduce kernels never wait, and none of these kernels is launched
// early (PDL): with several calls in flight (threads, buffers, other collectives spinning in the
// peer), a signal that needed room on a full GPU could be the one that every spinning block there
// waits for, and nothing would move until the deadlines.
//
// Why it needs no opening barrier: this rank writes only into its own half r (after the peer's push
// of that chunk, which the peer issued after all of its earlier work on the buffer), into the peer's
// scratch (free: the previous call ended only after the peer had returned, so read, every chunk),
// and into the peer's half r (after the peer pushed that chunk from there, so it has done with it).
// A flag lands after the data it announces: the two copies are on one stream, the second starts
// once the first is complete.
#include <cuda_runtime.h>

#include <algorithm>

#include "core/status.h"
#include "core/tunables.h"
#include "cuda/device_buffer.h"
#include "cuda/graph.h"
#include "cuda/kernels.h"

namespace symmem::cuda {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The elements [lo, hi) of half `p`, chunk k (0-based) of `chunks`, in units of 16-byte items so
// that every chunk starts 16-byte aligned (the reduce kernel's vector path), as the SM two-shot
// splits its slices.
struct ChunkPlan {
  uint64_t count, per_item, items, chunk_items;
  int n;  // elements per item
  int chunks;
  void range(int p, int k, uint64_t* lo, uint64_t* hi) const {
    const uint64_t half_lo = per_item * p, half_hi = std::min(items, half_lo + per_item);
    const uint64_t a = std::min(half_hi, half_lo + chunk_items * k);
    const uint64_t b = std::min(half_hi, a + chunk_items);
    *lo = std::min(count, a * n);
    *hi = std::min(count, b * n);
  }
};

ChunkPlan plan(uint64_t count, size_t elem, uint64_t slot_bytes) {
  ChunkPlan c;
  c.count = count;
  c.n = static_cast<int>(16 / elem);
  c.items = ceil_div(count, c.n);
  c.per_item = ceil_div(c.items, 2);
  // As many chunks as the slots need, and at least one per 2 MiB of a half up to 4: the first push
  // and the last return cannot overlap anything, so a half in one piece leaves the link idle
  // while the SMs add; each chunk costs a few microseconds of copy-engine set-up, so not more.
  const uint64_t slot_items = slot_bytes / 16;
  const uint64_t pipelined = std::min<uint64_t>(4, c.per_item * 16 / (2 << 20));
  const uint64_t chunks = std::max<uint64_t>({1, pipelined, ceil_div(c.per_item, slot_items)});
  c.chunks = static_cast<int>(std::min<uint64_t>(chunks, kCeMaxChunks + 1));  // more: refused
  c.chunk_items = ceil_div(c.per_item, c.chunks);
  return c;
}

}  // namespace

symmem_status DeviceBuffer::ce_refusal(bool in_place) const {
  if (world_ != 2)
    return fail(SYMMEM_ERR_UNSUPPORTED,
                "all_reduce: TWO_SHOT_CE runs at world 2 only (world is %d); use TWO_SHOT or AUTO",
                world_);
  if (!in_place)
    return fail(SYMMEM_ERR_UNSUPPORTED,
                "all_reduce: TWO_SHOT_CE reduces in place only (out must be NULL; the peer's copies "
                "land in the symmetric buffer); use TWO_SHOT, ONE_SHOT or AUTO for an out buffer");
  if (ce_slot_ == 0)
    return fail(SYMMEM_ERR_UNSUPPORTED,
                "all_reduce: TWO_SHOT_CE needs the buffer's copy-engine scratch, and this %llu-byte "
                "buffer has none: buffers of the cuda and nccl backends get it from "
                "SYMMEM_CUDA_CE_MIN_BYTES=%llu bytes up while SYMMEM_CUDA_CE_SLOT_BYTES is not 0 "
                "(both as they were at its allocation); use TWO_SHOT or AUTO",
                static_cast<unsigned long long>(requested_),
                static_cast<unsigned long long>(tunable_value(Tunable::kCudaCeMinBytes)));
  return SYMMEM_OK;
}

symmem_status DeviceBuffer::ce_streams(CeStreams* out) {
  for (const CeStreams& p : ce_streams_) {
    bool push_capturing = false, back_capturing = false;
    SYMMEM_TRY(stream_capturing(p.push, &push_capturing, "all_reduce two-shot-ce"));
    SYMMEM_TRY(stream_capturing(p.back, &back_capturing, "all_reduce two-shot-ce"));
    if (!push_capturing && !back_capturing) {
      *out = p;
      return SYMMEM_OK;
    }
  }
  for (cudaEvent_t* e : {&ce_fork_, &ce_reduced_, &ce_pushes_done_, &ce_returns_done_})
    if (*e == nullptr)
      SYMMEM_RT(cudaEventCreateWithFlags(e, cudaEventDisableTiming),
                "all_reduce two-shot-ce: cudaEventCreateWithFlags");
  CeStreams p;
  SYMMEM_RT(cudaStreamCreateWithFlags(&p.push, cudaStreamNonBlocking),
            "all_reduce two-shot-ce: cudaStreamCreateWithFlags (push stream)");
  const cudaError_t e = cudaStreamCreateWithFlags(&p.back, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    cudaStreamDestroy(p.push);
    return fail_rt(e, "all_reduce two-shot-ce: cudaStreamCreateWithFlags (return stream)");
  }
  ce_streams_.push_back(p);
  *out = p;
  return SYMMEM_OK;
}

symmem_status DeviceBuffer::all_reduce_ce(uint64_t at, int dtype, int op, uint64_t count,
                                          cudaStream_t s, int timeout_ms) {
  const size_t es = symmem_dtype_size(static_cast<symmem_dtype>(dtype));
  const ChunkPlan c = plan(count, es, ce_slot_);
  const int q = 1 - rank_;
  if (c.chunks > kCeMaxChunks)
    return fail(SYMMEM_ERR_UNSUPPORTED,
                "all_reduce: TWO_SHOT_CE: count %llu needs more than %d chunks of this buffer's "
                "%llu-byte scratch slots per half; raise SYMMEM_CUDA_CE_SLOT_BYTES or use TWO_SHOT",
                static_cast<unsigned long long>(count), kCeMaxChunks,
                static_cast<unsigned long long>(ce_slot_));
  CeStreams st;
  SYMMEM_TRY(ce_streams(&st));

  CeArgs a;
  a.mine = reinterpret_cast<uint32_t*>(local_);
  a.peer = reinterpret_cast<uint32_t*>(bases_[q]);
  a.epoch = reinterpret_cast<uint32_t*>(local_ + kCeEpochOff);
  a.blocks_done = reinterpret_cast<uint32_t*>(local_ + kCeBlocksDoneOff);
  a.seq = reinterpret_cast<uint32_t*>(local_ + kCeSeqOff);
  a.claim = reinterpret_cast<uint32_t*>(local_ + kClaimOff);
  a.err = err_dev_;
  a.abort = abort_dev_;
  a.peer_rank = q;
  a.timeout_ms = static_cast<uint32_t>(timeout_ms);
  a.timeout_ns = static_cast<uint64_t>(timeout_ms) * 1000000ull;

  char* const own_data = reinterpret_cast<char*>(local_ + pad_region_ + at);
  char* const peer_data = reinterpret_cast<char*>(bases_[q] + pad_region_ + at);
  const uint64_t scratch_off = pad_region_ - 2 * ce_slot_;
  auto own_slot = [&](int k) { return reinterpret_cast<char*>(local_ + scratch_off + (k % 2) * ce_slot_); };
  auto peer_flag = [&](int kind) { return reinterpret_cast<uint32_t*>(bases_[q] + kCeFlagsOff) + kind * kCeFlagStride; };
  auto peer_slot = [&](int k) { return reinterpret_cast<char*>(bases_[q] + scratch_off + (k % 2) * ce_slot_); };

  SYMMEM_RT(launch_ce_prepare(a, c.chunks, s), "all_reduce two-shot-ce: prepare kernel launch");
  SYMMEM_RT(cudaEventRecord(ce_fork_, s), "all_reduce two-shot-ce: cudaEventRecord (fork)");
  SYMMEM_RT(cudaStreamWaitEvent(st.push, ce_fork_, 0), "all_reduce two-shot-ce: cudaStreamWaitEvent (fork)");
  SYMMEM_RT(cudaStreamWaitEvent(st.back, ce_fork_, 0), "all_reduce two-shot-ce: cudaStreamWaitEvent (fork)");
  auto signal = [&](int flag, int seq, cudaStream_t on) -> symmem_status {
    SYMMEM_RT(cudaMemcpyAsync(peer_flag(flag), a.seq + (seq - 1), 4, cudaMemcpyDefault, on),
              "all_reduce two-shot-ce: signal of chunk %d to rank %d", seq, q);
    return SYMMEM_OK;
  };
  for (int k = 0; k < c.chunks; ++k) {
    const int seq = k + 1;
    uint64_t lo = 0, hi = 0;
    c.range(q, k, &lo, &hi);
    if (seq >= 3)  // this push reuses the slot of chunk seq - 2: once the peer has read that one
      SYMMEM_RT(launch_ce_wait(a, kCeConsumed, seq - 2, st.push),
                "all_reduce two-shot-ce: wait kernel launch (slot of chunk %d)", seq);
    if (hi > lo)
      SYMMEM_RT(cudaMemcpyAsync(peer_slot(k), own_data + lo * es, (hi - lo) * es, cudaMemcpyDefault, st.push),
                "all_reduce two-shot-ce: push of chunk %d (%llu bytes) to rank %d", seq,
                static_cast<unsigned long long>((hi - lo) * es), q);
    SYMMEM_TRY(signal(kCePushed, seq, st.push));

    c.range(rank_, k, &lo, &hi);
    SYMMEM_RT(launch_ce_wait(a, kCePushed, seq, s), "all_reduce two-shot-ce: wait kernel launch (chunk %d)", seq);
    SYMMEM_RT(launch_ce_reduce(a, dtype, op, own_data + lo * es, own_slot(k), hi - lo, seq, s),
              "all_reduce two-shot-ce: reduce kernel launch (chunk %d)", seq);
    SYMMEM_RT(cudaEventRecord(ce_reduced_, s), "all_reduce two-shot-ce: cudaEventRecord (chunk %d)", seq);
    SYMMEM_RT(cudaStreamWaitEvent(st.back, ce_reduced_, 0),
              "all_reduce two-shot-ce: cudaStreamWaitEvent (chunk %d)", seq);
    if (hi > lo)
      SYMMEM_RT(cudaMemcpyAsync(peer_data + lo * es, own_data + lo * es, (hi - lo) * es, cudaMemcpyDefault,
                                st.back),
                "all_reduce two-shot-ce: return of chunk %d (%llu bytes) to rank %d", seq,
                static_cast<unsigned long long>((hi - lo) * es), q);
    SYMMEM_TRY(signal(kCeReturned, seq, st.back));
  }
  SYMMEM_RT(cudaEventRecord(ce_pushes_done_, st.push), "all_reduce two-shot-ce: cudaEventRecord (join)");
  SYMMEM_RT(cudaEventRecord(ce_returns_done_, st.back), "all_reduce two-shot-ce: cudaEventRecord (join)");
  SYMMEM_RT(cudaStreamWaitEvent(s, ce_pushes_done_, 0), "all_reduce two-shot-ce: cudaStreamWaitEvent (join)");
  SYMMEM_RT(cudaStreamWaitEvent(s, ce_returns_done_, 0), "all_reduce two-shot-ce: cudaStreamWaitEvent (join)");
  SYMMEM_RT(launch_ce_finish(a, c.chunks, s), "all_reduce two-shot-ce: finish kernel launch");
  return SYMMEM_OK;
}

}  // namespace symmem::cuda
