// The collectives on the host backend, synchronous (stream ignored). Every step between two
// barriers is one job of element work (host_reduce.h) that the rank's threads share; every element
// is reduced in rank order whatever thread runs it, so every rank and every run gets the same bits.
//
// One-shot: barrier (inputs ready), each rank reduces all of every peer's input, barrier (peers
// done reading). Two-shot: barrier, rank r reduces only slice r of every input and writes it where
// the others can copy it, barrier, then (out of place) each rank copies the other slices.
// Two-shot reads each input byte once in total instead of once per rank, so it wins once the data
// no longer fits the caches; AUTO switches at HostSettings::two_shot_min_bytes (docs/host-backend.md).
#include <algorithm>
#include <cstring>
#include <string>

#include "core/abort.h"
#include "core/status.h"
#include "core/validate.h"
#include "host/host_buffer.h"

namespace symmem::host {
namespace {

// Results of at least this many bytes per destination are stored around the caches: they do not
// fit them anyway, and a non-temporal store skips reading the line it overwrites.
constexpr uint64_t kStreamMinBytes = uint64_t{4} << 20;
// Chunks: enough per thread to even out the load, each a multiple of a cache line (no two threads
// write one line) and small enough to stay in L2 while its inputs stream through.
constexpr uint64_t kChunkMinBytes = uint64_t{16} << 10;
constexpr uint64_t kChunkMaxBytes = uint64_t{256} << 10;
constexpr uint64_t kChunksPerThread = 4;
constexpr uint64_t kLine = 64;

uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

// Bytes per chunk for `bytes` of work on `threads` threads (everything in one chunk if alone).
uint64_t chunk_bytes(uint64_t bytes, int threads) {
  if (threads <= 1) return std::max<uint64_t>(bytes, 1);
  const uint64_t even = round_up(bytes / (kChunksPerThread * threads) + 1, kLine);
  return std::clamp(even, kChunkMinBytes, kChunkMaxBytes);
}

void reduce_task(const void* job, uint64_t i) { reduce_chunk(*static_cast<const ReduceJob*>(job), i); }
void copy_task(const void* job, uint64_t i) { copy_chunk(*static_cast<const CopyJob*>(job), i); }

}  // namespace

bool HostBuffer::run(ReduceJob& j) {
  const uint64_t es = element_bytes(j.dtype);
  const int threads =
      j.count * es * j.world >= pool_->settings().parallel_min_bytes ? workers_->threads() : 1;
  j.chunk = chunk_bytes(j.count * es, threads) / es;
  j.streaming = j.count * es >= kStreamMinBytes;
  return workers_->run(j.chunks(), reduce_task, &j, threads > 1);
}

bool HostBuffer::run(CopyJob& j) {
  uint64_t total = 0, longest = 0;
  for (int s = 0; s < j.segments; ++s) {
    total += j.bytes[s];
    longest = std::max(longest, j.bytes[s]);
  }
  const int threads = total >= pool_->settings().parallel_min_bytes ? workers_->threads() : 1;
  j.chunk = threads == 1 ? std::max<uint64_t>(longest, 1) : chunk_bytes(total, threads);
  j.per_segment = std::max<uint64_t>((longest + j.chunk - 1) / j.chunk, 1);
  return workers_->run(j.chunks(), copy_task, &j, threads > 1);
}

symmem_status HostBuffer::sync(int channel, int timeout_ms, const char* what, const char* step) {
  const symmem_status s =
      channel == kCollectiveChannel ? collective_barrier(timeout_ms) : barrier(channel, timeout_ms);
  if (s != SYMMEM_OK) {
    prefix_error((std::string(what) + " (" + step + "): ").c_str());
    return s;
  }
  return SYMMEM_OK;
}

int HostBuffer::auto_algo(int, uint64_t bytes, bool) {
  return world_ > 1 && bytes >= pool_->settings().two_shot_min_bytes ? SYMMEM_ALGO_TWO_SHOT
                                                                     : SYMMEM_ALGO_ONE_SHOT;
}

symmem_status HostBuffer::one_shot(uint64_t at, int ch, int dtype, int op, uint64_t count,
                                   void* out, int timeout_ms, const char* what) {
  const uint64_t bytes = count * element_bytes(dtype);
  if (out == nullptr && scratch_.size() < bytes) scratch_.resize(bytes);
  SYMMEM_TRY(sync(ch, timeout_ms, what, "waiting for inputs"));
  ReduceJob j;
  for (int r = 0; r < world_; ++r) j.src[r] = data_at(r, at);
  j.world = world_;
  j.dst[0] = out != nullptr ? out : scratch_.data();
  j.ndst = 1;
  j.dtype = dtype;
  j.op = op;
  j.count = count;
  if (!run(j)) return fail_aborted(std::string(what) + " (reducing)");
  SYMMEM_TRY(sync(ch, timeout_ms, what, "waiting for peers to finish reading"));
  // In place: nobody reads the own input any more, so the result can replace it.
  if (out == nullptr) {
    CopyJob c;
    c.src[0] = scratch_.data();
    c.dst[0] = data_at(rank_, at);
    c.bytes[0] = bytes;
    c.segments = 1;
    if (!run(c)) return fail_aborted(std::string(what) + " (copying the result in place)");
  }
  return SYMMEM_OK;
}

symmem_status HostBuffer::two_shot(uint64_t at, int dtype, int op, uint64_t count, void* out,
                                   int timeout_ms) {
  const char* what = "all_reduce two-shot";
  const int ch = kCollectiveChannel;
  const uint64_t es = element_bytes(dtype);
  // Slice p = elements [lo(p), lo(p+1)), cut on cache lines so that no two ranks write one line.
  const uint64_t per = round_up((count + world_ - 1) / world_, kLine / es);
  auto lo = [&](int p) { return std::min<uint64_t>(count, per * static_cast<uint64_t>(p)); };
  const uint64_t mine = lo(rank_), mine_end = lo(rank_ + 1);
  SYMMEM_TRY(sync(ch, timeout_ms, what, "barrier 1, waiting for inputs"));
  ReduceJob j;
  for (int r = 0; r < world_; ++r) j.src[r] = data_at(r, at) + mine * es;
  j.world = world_;
  if (out == nullptr) {
    // In place: the reduced slice goes straight into every rank's buffer. Rank p reads only slice
    // p of the buffers, so these writes never meet another rank's reads.
    for (int p = 0; p < world_; ++p) j.dst[p] = data_at(p, at) + mine * es;
    j.ndst = world_;
  } else {
    // Out of place: into out, and into the own exchange area (slice p at the same offset as in
    // the data) where the peers copy it from after barrier 2. The inputs stay as they were.
    //
    // Two barriers are enough, where the inputs themselves would need a third: once this call
    // returns, the caller may overwrite its input, and may call again. The input is safe: every
    // peer has finished reading it (barrier 2 comes after every rank's reduction). The exchange
    // area is still read by the peers after barrier 2, but this rank writes it again only after
    // barrier 1 of its next collective on this buffer, which no peer reaches before it has
    // finished copying from it. test_host_backtoback hammers this: back-to-back calls, inputs changed
    // between them with no other synchronisation, every result checked on every rank.
    j.dst[0] = static_cast<char*>(out) + mine * es;
    j.dst[1] = exchange(rank_) + mine * es;
    j.ndst = 2;
  }
  j.dtype = dtype;
  j.op = op;
  j.count = mine_end - mine;
  if (j.count > 0 && !run(j)) return fail_aborted(std::string(what) + " (reducing the own slice)");
  SYMMEM_TRY(sync(ch, timeout_ms, what, "barrier 2, waiting for the reduced slices"));
  if (out == nullptr) return SYMMEM_OK;
  CopyJob c;
  for (int k = 1; k < world_; ++k) {
    // Start after the own rank so that the ranks spread their reads over the owners.
    const int q = (rank_ + k) % world_;
    c.src[c.segments] = exchange(q) + lo(q) * es;
    c.dst[c.segments] = static_cast<char*>(out) + lo(q) * es;
    c.bytes[c.segments] = (lo(q + 1) - lo(q)) * es;
    ++c.segments;
  }
  if (!run(c)) return fail_aborted(std::string(what) + " (copying the peers' slices)");
  return SYMMEM_OK;
}

symmem_status HostBuffer::memset32(int r, uint64_t offset, uint32_t value, uint64_t count,
                                   void*) {
  uint32_t* p = reinterpret_cast<uint32_t*>(static_cast<char*>(base(r == rank_ ? SYMMEM_RANK_SELF : r)) + offset);
  for (uint64_t i = 0; i < count; ++i) __atomic_store_n(p + i, value, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  return SYMMEM_OK;
}

symmem_status HostBuffer::write_value32(int r, uint64_t offset, uint32_t value, void*) {
  uint32_t* p = reinterpret_cast<uint32_t*>(static_cast<char*>(base(r == rank_ ? SYMMEM_RANK_SELF : r)) + offset);
  __atomic_store_n(p, value, __ATOMIC_RELEASE);
  return SYMMEM_OK;
}

symmem_status HostBuffer::all_reduce(uint64_t at, int algo, int dtype, int op, uint64_t count,
                                     void* out, void*, int timeout_ms) {
  if (algo == SYMMEM_ALGO_TWO_SHOT_CE)
    return fail(SYMMEM_ERR_UNSUPPORTED,
                "all_reduce: TWO_SHOT_CE moves data with a GPU's copy engines, and the host "
                "backend's buffers are host memory; use TWO_SHOT or AUTO");
  if (algo == SYMMEM_ALGO_TWO_SHOT && world_ > 1)
    return two_shot(at, dtype, op, count, out, timeout_ms);
  return one_shot(at, kCollectiveChannel, dtype, op, count, out, timeout_ms, "all_reduce");
}

symmem_status HostBuffer::all_gather(uint64_t at, int dtype, uint64_t count, void* out, void*,
                                     int timeout_ms) {
  const char* what = "all_gather";
  const int ch = kCollectiveChannel;
  const uint64_t bytes = count * element_bytes(dtype);
  SYMMEM_TRY(sync(ch, timeout_ms, what, "waiting for inputs"));
  CopyJob c;
  for (int r = 0; r < world_; ++r) {
    if (out == nullptr && r == rank_) continue;  // in place: the own block is already there
    c.src[c.segments] = out != nullptr ? data_at(r, at) : data_at(r, at) + r * bytes;
    c.dst[c.segments] =
        out != nullptr ? static_cast<char*>(out) + r * bytes : data_at(rank_, at) + r * bytes;
    c.bytes[c.segments] = bytes;
    ++c.segments;
  }
  if (c.segments > 0 && !run(c)) return fail_aborted(std::string(what) + " (copying)");
  return sync(ch, timeout_ms, what, "waiting for peers to finish reading");
}

symmem_status HostBuffer::reduce_scatter(uint64_t at, int dtype, int op, uint64_t count, void* out,
                                         void*, int timeout_ms) {
  const char* what = "reduce_scatter";
  const int ch = kCollectiveChannel;
  const uint64_t es = element_bytes(dtype);
  SYMMEM_TRY(sync(ch, timeout_ms, what, "waiting for inputs"));
  ReduceJob j;
  for (int r = 0; r < world_; ++r) j.src[r] = data_at(r, at) + rank_ * count * es;
  j.world = world_;
  // In place into the own block: only this rank reads it, and each block of elements is read
  // completely before its result is written (host_reduce.cpp).
  j.dst[0] = out != nullptr ? out : data_at(rank_, at) + rank_ * count * es;
  j.ndst = 1;
  j.dtype = dtype;
  j.op = op;
  j.count = count;
  if (!run(j)) return fail_aborted(std::string(what) + " (reducing)");
  return sync(ch, timeout_ms, what, "waiting for peers to finish reading");
}

}  // namespace symmem::host
