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
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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

symmem_status HostBuffer::copy_in_place(uint64_t at, uint64_t bytes, const char* what) {
  CopyJob c;
  c.src[0] = scratch_.data();
  c.dst[0] = data_at(rank_, at);
  c.bytes[0] = bytes;
  c.segments = 1;
  if (bytes > 0 && !run(c)) return fail_aborted(std::string(what) + " (copying the result in place)");
  return SYMMEM_OK;
}

symmem_status HostBuffer::broadcast(uint64_t at, int dtype, uint64_t count, int root, void* out, void*,
                                    int timeout_ms) {
  const char* what = "broadcast";
  const int ch = kCollectiveChannel;
  SYMMEM_TRY(sync(ch, timeout_ms, what, "waiting for the root's data"));
  if (out != nullptr || rank_ != root) {
    CopyJob c;
    c.src[0] = data_at(root, at);
    c.dst[0] = out != nullptr ? out : data_at(rank_, at);
    c.bytes[0] = count * element_bytes(dtype);
    c.segments = 1;
    if (!run(c)) return fail_aborted(std::string(what) + " (copying from the root)");
  }
  // The root may change its data once this returns: every peer has read it by then.
  return sync(ch, timeout_ms, what, "waiting for peers to finish reading");
}

symmem_status HostBuffer::all_to_all(uint64_t at, int dtype, uint64_t count, void* out, void*,
                                     int timeout_ms) {
  const char* what = "all_to_all";
  const int ch = kCollectiveChannel;
  const uint64_t block = count * element_bytes(dtype);
  const uint64_t total = block * static_cast<uint64_t>(world_);
  if (out == nullptr && scratch_.size() < total) scratch_.resize(total);
  char* dst = out != nullptr ? static_cast<char*>(out) : scratch_.data();
  SYMMEM_TRY(sync(ch, timeout_ms, what, "waiting for inputs"));
  CopyJob c;
  for (int k = 0; k < world_; ++k) {
    // Start after the own rank so that the ranks spread their reads over the owners.
    const int q = (rank_ + k) % world_;
    c.src[c.segments] = data_at(q, at) + static_cast<uint64_t>(rank_) * block;
    c.dst[c.segments] = dst + static_cast<uint64_t>(q) * block;
    c.bytes[c.segments] = block;
    ++c.segments;
  }
  if (!run(c)) return fail_aborted(std::string(what) + " (copying the blocks)");
  SYMMEM_TRY(sync(ch, timeout_ms, what, "waiting for peers to finish reading"));
  return out == nullptr ? copy_in_place(at, total, what) : SYMMEM_OK;
}

namespace {

// Every rank's splits row (world counts, then its capacity), as every rank reads them after the
// first barrier: each rank reaches the same verdict, so a bad split fails every rank the same way.
// Empty when they fit; otherwise what is wrong, naming the rank, the peer and the sizes.
std::string check_splits(const std::vector<int64_t>& rows, int world, uint64_t room, uint64_t at_byte) {
  char msg[320];
  auto row = [&](int q) { return &rows[static_cast<size_t>(q) * (world + 1)]; };
  for (int q = 0; q < world; ++q) {
    uint64_t sent = 0;
    for (int p = 0; p < world; ++p) {
      const int64_t n = row(q)[p];
      if (n < 0) {
        std::snprintf(msg, sizeof msg, "rank %d's split for rank %d is %lld; a split counts elements and cannot "
                      "be negative", q, p, static_cast<long long>(n));
        return msg;
      }
      if (static_cast<uint64_t>(n) > room - sent) {
        std::snprintf(msg, sizeof msg, "rank %d's splits need more input than it holds: its part for rank %d "
                      "(%lld elements from element %llu) ends past the %llu elements before its splits (at "
                      "byte %llu)", q, p, static_cast<long long>(n), static_cast<unsigned long long>(sent),
                      static_cast<unsigned long long>(room), static_cast<unsigned long long>(at_byte));
        return msg;
      }
      sent += static_cast<uint64_t>(n);
    }
  }
  for (int p = 0; p < world; ++p) {
    const uint64_t capacity = static_cast<uint64_t>(std::max<int64_t>(row(p)[world], 0));
    uint64_t received = 0;
    for (int q = 0; q < world; ++q) {
      const uint64_t n = static_cast<uint64_t>(row(q)[p]);
      if (n > capacity - std::min(received, capacity)) {
        uint64_t total = 0;
        for (int k = 0; k < world; ++k) total += static_cast<uint64_t>(row(k)[p]);
        std::snprintf(msg, sizeof msg, "rank %d would receive %llu elements, more than its output holds "
                      "(%llu): the part from rank %d (%llu elements at element %llu) does not fit", p,
                      static_cast<unsigned long long>(total), static_cast<unsigned long long>(capacity), q,
                      static_cast<unsigned long long>(n), static_cast<unsigned long long>(received));
        return msg;
      }
      received += n;
    }
  }
  return {};
}

}  // namespace

symmem_status HostBuffer::all_to_all_v(uint64_t at, int dtype, uint64_t splits_at, void* out,
                                       uint64_t out_capacity, int64_t* out_splits, void*,
                                       int timeout_ms) {
  const char* what = "all_to_all_v";
  const int ch = kCollectiveChannel;
  const uint64_t es = element_bytes(dtype);
  const uint64_t room = splits_at / es;
  const uint64_t capacity = out != nullptr ? out_capacity : room;
  const size_t row_slots = static_cast<size_t>(world_) + 1;
  // The own capacity beside the own splits, for the peers' checks.
  int64_t* own = reinterpret_cast<int64_t*>(data_at(rank_, at) + splits_at);
  own[world_] = static_cast<int64_t>(std::min<uint64_t>(capacity, INT64_MAX));
  SYMMEM_TRY(sync(ch, timeout_ms, what, "waiting for the splits and inputs"));
  std::vector<int64_t> rows(row_slots * world_);
  for (int q = 0; q < world_; ++q)
    std::memcpy(&rows[q * row_slots], data_at(q, at) + splits_at, row_slots * sizeof(int64_t));
  const std::string bad = check_splits(rows, world_, room, splits_at);
  uint64_t received = 0;
  if (bad.empty()) {
    if (out == nullptr && scratch_.size() < room * es) scratch_.resize(room * es);
    char* dst = out != nullptr ? static_cast<char*>(out) : scratch_.data();
    CopyJob c;
    for (int q = 0; q < world_; ++q) {
      uint64_t from = 0;  // where rank q's part for this rank starts in its input
      for (int p = 0; p < rank_; ++p) from += static_cast<uint64_t>(rows[q * row_slots + p]);
      const uint64_t n = static_cast<uint64_t>(rows[q * row_slots + rank_]);
      out_splits[q] = static_cast<int64_t>(n);
      out_splits[world_ + q] = static_cast<int64_t>(received);
      c.src[c.segments] = data_at(q, at) + from * es;
      c.dst[c.segments] = dst + received * es;
      c.bytes[c.segments] = n * es;
      ++c.segments;
      received += n;
    }
    if (received > 0 && !run(c)) return fail_aborted(std::string(what) + " (copying the parts)");
  }
  // Also after bad splits: every rank read every row before any rank may write its next ones.
  SYMMEM_TRY(sync(ch, timeout_ms, what, "waiting for peers to finish reading"));
  if (!bad.empty()) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: %s; nothing was written", what, bad.c_str());
  return out == nullptr ? copy_in_place(at, received * es, what) : SYMMEM_OK;
}

}  // namespace symmem::host
