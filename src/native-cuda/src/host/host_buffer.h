// A symmetric buffer in shared host memory: one memfd per rank, every peer's memfd mapped in
// every process. Layout of each memfd: [data, page-rounded][signal pad, page-rounded][exchange,
// as long as the data]. The exchange area is where out-of-place two-shot leaves the rank's reduced
// slice for the peers (host_coll.cpp); pages of a memfd take memory only once written, so it costs
// nothing until used and then at most the slices written (1/world of the largest all-reduce).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"
#include "host/host_reduce.h"
#include "host/host_settings.h"
#include "host/signal.h"

namespace symmem::host {

class HostBuffer final : public symmem_buffer {
 public:
  static symmem_status create(uint64_t size_bytes, std::shared_ptr<PoolHolder> pool,
                              symmem_buffer** out);
  ~HostBuffer() override;

  symmem_status export_fd(int* out_fd) override;
  symmem_status import(int rank, int world, const int* fds) override;

  uint64_t size() const override { return requested_; }
  int rank() const override { return rank_; }
  int world() const override { return world_; }
  void* ptr(int r) override { return base(r); }
  void* signal_pad(int r) override { return static_cast<char*>(base(r)) + data_bytes_; }
  bool overlaps(const void* p, size_t n) const override;

  symmem_status put_signal(int peer, int channel, int timeout_ms) override;
  symmem_status wait_signal(int peer, int channel, int timeout_ms) override;
  symmem_status barrier(int channel, int timeout_ms) override;
  symmem_status signal_value(int peer, int channel, uint64_t value, int op) override;
  symmem_status wait_signal_value(int peer, int channel, int cmp, uint64_t value, int timeout_ms) override;

  // Streams and collectives, on the CPU (docs/host-backend.md): every dtype and op of the cuda backend,
  // float32 accumulation; `stream` is ignored; every call is synchronous. The element work runs on
  // the rank's worker threads (PoolHolder). The collectives synchronise on an internal channel
  // (kCollectiveChannel) past the public ones.
  static constexpr int kCollectiveChannel = SYMMEM_SIGNAL_CHANNELS;
  // Each rank's mark that the collectives of this buffer are out of step (0: in step; otherwise the
  // barrier epoch it gave up, never 0). Written once by its rank, read by the peers.
  static constexpr int kOutOfStepChannel = SYMMEM_SIGNAL_CHANNELS + 1;
  // After the marks, each rank's reason for its mark (NUL-terminated text, written before the mark),
  // so that a peer it wakes can say why: "aborted: rank 1 is gone ..." names the dead rank there too.
  static constexpr size_t kReasonOffset = size_t{kOutOfStepChannel + 1} * SYMMEM_MAX_WORLD * sizeof(uint32_t);
  static constexpr int kReasonBytes = 192;
  // After the reasons, the value signals: uint64 [channel][sending rank], written by the sender.
  static constexpr size_t kValueOffset =
      (kReasonOffset + size_t{kReasonBytes} * SYMMEM_MAX_WORLD + 63) / 64 * 64;
  static constexpr size_t kSignalPadBytes =
      kValueOffset + size_t{SYMMEM_VALUE_CHANNELS} * SYMMEM_MAX_WORLD * sizeof(uint64_t);
  symmem_status memset32(int r, uint64_t offset, uint32_t value, uint64_t count,
                         void* stream) override;
  symmem_status write_value32(int r, uint64_t offset, uint32_t value, void* stream) override;
  symmem_status all_reduce(uint64_t at, int algo, int dtype, int op, uint64_t count, void* out,
                           void* stream, int timeout_ms) override;
  symmem_status all_gather(uint64_t at, int dtype, uint64_t count, void* out, void* stream,
                           int timeout_ms) override;
  symmem_status reduce_scatter(uint64_t at, int dtype, int op, uint64_t count, void* out,
                               void* stream, int timeout_ms) override;
  symmem_status broadcast(uint64_t at, int dtype, uint64_t count, int root, void* out, void* stream,
                          int timeout_ms) override;
  symmem_status all_to_all(uint64_t at, int dtype, uint64_t count, void* out, void* stream,
                           int timeout_ms) override;
  symmem_status all_to_all_v(uint64_t at, int dtype, uint64_t splits_at, void* out,
                             uint64_t out_capacity, int64_t* out_splits, void* stream,
                             int timeout_ms) override;
  uint64_t one_shot_in_place_max_bytes() override { return requested_; }
  int auto_algo(int dtype, uint64_t bytes, bool in_place) override;

 private:
  HostBuffer() = default;
  // The collectives' steps (host_coll.cpp), on the elements from data byte `at` on (0, or a
  // view's offset). `what` names the call in messages.
  symmem_status one_shot(uint64_t at, int channel, int dtype, int op, uint64_t count, void* out,
                         int timeout_ms, const char* what);
  symmem_status two_shot(uint64_t at, int dtype, int op, uint64_t count, void* out,
                         int timeout_ms);
  symmem_status sync(int channel, int timeout_ms, const char* what, const char* step);
  // The barrier of the internal channel (signal.h: arrive / wait_epochs).
  symmem_status collective_barrier(int timeout_ms);
  // Value [channel][sender] on rank r's pad.
  uint64_t* value_slot(int r, int channel, int sender) const {
    return reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(pad(r)) + kValueOffset) +
           channel * SYMMEM_MAX_WORLD + sender;
  }
  uint32_t* epoch_slot(int r) const { return slot(pad(r), kCollectiveChannel, r); }
  uint32_t* out_of_step_slot(int r) const { return slot(pad(r), kOutOfStepChannel, r); }
  char* reason_slot(int r) const {
    return reinterpret_cast<char*>(pad(r)) + kReasonOffset + size_t{kReasonBytes} * r;
  }
  // Rank r's reason for its mark, read once its mark is seen.
  std::string peer_reason(int r) const;
  // A collective barrier that failed here, or a peer's mark met here, leaves the ranks disagreeing on
  // which barrier is which: the next collective would pass a barrier on a peer's stale arrival and
  // read data of another call. So the buffer goes out of step for good on this rank, publishes its
  // mark (a peer waiting for it, or arriving later, fails at once), and refuses every later collective.
  void go_out_of_step(uint32_t epoch, int cause_rank, const std::string& why);
  symmem_status refuse_out_of_step() const;
  // The first peer whose out-of-step mark is set, or -1.
  int marked_peer() const;
  // Rank r's exchange area.
  char* exchange(int r) const { return static_cast<char*>(maps_[r]) + data_bytes_ + pad_bytes_; }
  // In place, the result is gathered here first, then copied over the own data once every peer has
  // finished reading it (the second barrier).
  symmem_status copy_in_place(uint64_t at, uint64_t bytes, const char* what);
  // Runs the job on the rank's threads (alone when it is small); false once aborted.
  bool run(ReduceJob& job);
  bool run(CopyJob& job);

  void* base(int r) const { return r == SYMMEM_RANK_SELF ? local_ : maps_[r]; }
  uint32_t* pad(int r) const {
    return reinterpret_cast<uint32_t*>(static_cast<char*>(base(r)) + data_bytes_);
  }
  size_t mapping_bytes() const { return data_bytes_ + pad_bytes_ + data_bytes_; }
  // Rank r's data from byte `at` on (after import), where a collective's elements start.
  char* data_at(int r, uint64_t at) const { return static_cast<char*>(maps_[r]) + at; }

  int fd_ = -1;
  uint64_t requested_ = 0;
  size_t data_bytes_ = 0;  // requested_ rounded up to the page size
  size_t pad_bytes_ = 0;   // signal pad rounded up to the page size
  void* local_ = nullptr;
  std::vector<void*> maps_;  // after import: maps_[r] is rank r's mapping, maps_[rank_] == local_
  int rank_ = SYMMEM_RANK_SELF;
  int world_ = 0;
  std::shared_ptr<PoolHolder> pool_;
  WorkerPool* workers_ = nullptr;  // pool_'s pool, from import on
  // One-shot in place reduces here first (peers read the input until the second barrier); it
  // grows to the largest size asked for and is then reused.
  std::vector<char> scratch_;
  uint32_t epoch_ = 0;  // collective barriers reached on this buffer (collective_barrier)
  bool out_of_step_ = false;  // see go_out_of_step
  std::string out_of_step_why_;
};

}  // namespace symmem::host
