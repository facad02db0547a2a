// What every symmetric buffer in GPU memory shares, wherever its memory comes from: the layout of
// one rank's allocation (cuda/layout.h: pad region, then data), the signal and collective kernels,
// the device-side error record, copies and the algorithm choice. The memory itself is the
// subclass's: the cuda backend's own VMM allocation shared by fd (CudaBuffer), or an allocation of
// NVSHMEM's symmetric heap whose peers come from nvshmem_ptr (NvshmemBuffer). Both run the same
// kernels on the same layout, so they perform alike.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <mutex>
#include <string>
#include <cstdint>
#include <vector>

#include "core/backend.h"
#include "core/validate.h"
#include "cuda/driver.h"
#include "cuda/layout.h"

namespace symmem::cuda {

// Where one rank's allocation puts what (cuda/layout.h).
struct Geometry {
  uint64_t pad_region = 0;  // bytes before the data
  uint64_t total = 0;       // the whole allocation
  uint64_t ce_slot = 0;     // one copy-engine scratch slot (two end the pad region); 0: none
  uint64_t ll128_area = 0;  // the 128-byte-line one-shot's area (before the copy-engine slots)
};
// The geometry of a buffer of `size_bytes` on `device`, pad region and data each rounded up to the
// recommended VMM granularity of that device. `ce_scratch`: whether the backend may give the buffer
// copy-engine scratch (then the settings decide; see SYMMEM_CUDA_CE_SLOT_BYTES).
symmem_status allocation_geometry(const Driver* d, int device, uint64_t size_bytes, bool ce_scratch,
                                  Geometry* g);

// "GPU-xxxxxxxx-xxxx-..." as nvidia-smi prints it.
std::string uuid_text(const uint8_t* u);

class DeviceBuffer : public symmem_buffer {
 public:
  ~DeviceBuffer() override;

  uint64_t size() const override { return requested_; }
  int rank() const override { return rank_; }
  int world() const override { return world_; }
  void* ptr(int r) override { return reinterpret_cast<void*>(base(r) + pad_region_); }
  void* signal_pad(int r) override { return reinterpret_cast<void*>(base(r)); }
  bool overlaps(const void* p, size_t n) const override;

  symmem_status put_signal(int peer, int channel, int timeout_ms) override {
    return sync_after(put_signal_on_stream(peer, channel, stream_, timeout_ms));
  }
  symmem_status wait_signal(int peer, int channel, int timeout_ms) override {
    return sync_after(wait_signal_on_stream(peer, channel, stream_, timeout_ms));
  }
  symmem_status barrier(int channel, int timeout_ms) override {
    return sync_after(barrier_on_stream(channel, stream_, timeout_ms));
  }

  symmem_status signal_value(int peer, int channel, uint64_t value, int op) override {
    return sync_after(signal_value_on_stream(peer, channel, value, op, stream_));
  }
  symmem_status wait_signal_value(int peer, int channel, int cmp, uint64_t value, int timeout_ms) override {
    return sync_after(wait_signal_value_on_stream(peer, channel, cmp, value, stream_, timeout_ms));
  }
  symmem_status signal_value_on_stream(int peer, int channel, uint64_t value, int op, void* s) override;
  symmem_status wait_signal_value_on_stream(int peer, int channel, int cmp, uint64_t value, void* s,
                                            int timeout_ms) override;
  symmem_status put_signal_on_stream(int peer, int channel, void* s, int timeout_ms) override;
  symmem_status wait_signal_on_stream(int peer, int channel, void* s, int timeout_ms) override;
  symmem_status barrier_on_stream(int channel, void* s, int timeout_ms) override;
  symmem_status memset32(int r, uint64_t offset, uint32_t value, uint64_t count,
                         void* s) override;
  symmem_status write_value32(int r, uint64_t offset, uint32_t value, void* s) override;
  symmem_status synchronize(void* s) override;
  symmem_status check() override;
  symmem_status all_reduce(uint64_t at, int algo, int dtype, int op, uint64_t count, void* out,
                           void* s, int timeout_ms) override;
  symmem_status all_gather(uint64_t at, int dtype, uint64_t count, void* out, void* s,
                           int timeout_ms) override;
  symmem_status reduce_scatter(uint64_t at, int dtype, int op, uint64_t count, void* out, void* s,
                               int timeout_ms) override;
  symmem_status broadcast(uint64_t at, int dtype, uint64_t count, int root, void* out, void* s,
                          int timeout_ms) override;
  symmem_status all_to_all(uint64_t at, int dtype, uint64_t count, void* out, void* s,
                           int timeout_ms) override;
  symmem_status all_to_all_v(uint64_t at, int dtype, uint64_t splits_at, void* out,
                             uint64_t out_capacity, int64_t* out_splits, void* s,
                             int timeout_ms) override;
  int auto_algo(int dtype, uint64_t bytes, bool in_place) override;
  uint64_t one_shot_in_place_max_bytes() override;
  symmem_status copy_in(int r, uint64_t offset, const void* src, uint64_t bytes) override;
  symmem_status copy_out(int r, uint64_t offset, void* dst, uint64_t bytes) override;
  symmem_status put_on_stream(int r, uint64_t offset, const void* src, uint64_t bytes, void* s) override;
  symmem_status get_on_stream(int r, uint64_t offset, void* dst, uint64_t bytes, void* s) override;
  symmem_status device_uuid(int r, uint8_t out[16]) override;
  // A graph replay (cuda/graph.cu) is one launch on stream s for every buffer it uses: before it,
  // s waits for the buffer's previous launch as ordered() makes any launch wait; after it, the
  // buffer's next work waits for the replay. *capturing: s is capturing (nothing is ordered then).
  symmem_status replay_before(void* s, bool* capturing);
  symmem_status replay_after(void* s, bool capturing);
  int device() const { return device_; }
  symmem_status own_allocation(void** base, uint64_t* bytes, uint64_t* data_offset) override {
    *base = reinterpret_cast<void*>(local_);
    *bytes = total_;
    *data_offset = pad_region_;
    return SYMMEM_OK;
  }

 protected:
  DeviceBuffer() = default;

  // After the subclass has the own allocation at `local` (total_ bytes, pad_region_ first): the
  // stream, the error record, the abort word, zeroed pads and the header peers check at import.
  symmem_status init_local(const Driver* d, int device, uint64_t size_bytes, const Geometry& g,
                           CUdeviceptr local);
  // Every rank's allocation as mapped here (bases[rank] is the own one): reads and checks each
  // peer's header (size, and one GPU per rank unless overlapping devices are allowed), then builds
  // the pad table of the signal kernels. `peer_name` says how rank r's memory was reached, for the
  // messages ("rank 1's fd 12", "PE 3").
  template <class Name>
  symmem_status bind_peers(int rank, int world, const std::vector<CUdeviceptr>& bases,
                           Name&& peer_name);
  // Waits for this buffer's own work (nothing may run against memory about to go away); not for
  // the rest of the device, where other buffers' collectives may wait for peers.
  void quiesce();
  // Every launch on this buffer (any stream) and its own stream, finished.
  symmem_status finish_own_work();

  CUdeviceptr base(int r) const {
    return r == SYMMEM_RANK_SELF || r == rank_ ? local_ : bases_[r];
  }
  symmem_status set_device();

  const Driver* drv_ = nullptr;
  int device_ = -1;
  uint64_t requested_ = 0;
  uint64_t pad_region_ = 0;  // bytes before the data (granularity-rounded)
  uint64_t total_ = 0;
  uint64_t ce_slot_ = 0;     // one copy-engine scratch slot; 0: none
  uint64_t ll128_area_ = 0;  // the 128-byte-line one-shot's area; 0: none
  bool own_gpus_ = false;    // after binding: every rank on a GPU of its own (no two share one)
  CUdeviceptr local_ = 0;
  std::vector<CUdeviceptr> bases_;  // after binding; bases_[rank_] == local_
  int rank_ = SYMMEM_RANK_SELF;
  int world_ = 0;

 private:
  symmem_status sync_after(symmem_status launched) {
    if (launched != SYMMEM_OK) return launched;
    return synchronize(stream_);
  }
  symmem_status check_peer_header(int rank, int r, CUdeviceptr peer_base, const char* how_reached,
                                  std::array<uint8_t, 16>* uuid);
  symmem_status finish_binding(int rank, int world, const std::vector<CUdeviceptr>& bases,
                               std::vector<std::array<uint8_t, 16>> uuids);
  SigArgs sig_args(int peer, int channel, int timeout_ms) const;
  symmem_status report_aborted(const ErrorRecord& e);
  symmem_status report_timeout(const ErrorRecord& e);
  // An all-to-all-v's splits that did not fit (ErrorRecord::bad_splits): every rank saw the same, so
  // the buffer stays in step.
  struct SplitVerdict {
    uint32_t kind;
    int32_t split_from, split_to;
    int64_t split_n;
    uint64_t split_at, split_limit, split_total;
  };
  symmem_status report_bad_splits(const SplitVerdict& e);
  void go_out_of_step(const char* why);
  symmem_status refuse_if_out_of_step(const char* what);
  symmem_status coll_args(uint64_t at, int timeout_ms, CollArgs* a, const char* what);
  // Where the 128-byte-line area starts in the pad region: before the copy-engine scratch.
  uint64_t ll128_off() const { return pad_region_ - 2 * ce_slot_ - ll128_area_; }
  // The push scratch's capacity per [slot][rank]: the pad region before the 128-byte-line area.
  uint64_t push_cap() const { return push_capacity(ll128_off(), world_); }
  // The 128-byte-line area's capacity per [slot][rank] (device_buffer.cu says where the lines run).
  uint64_t ll128_cap() const;
  // Largest all-reduce input (bytes) that the push one-shot / the world-2 push two-shot takes.
  uint64_t push_one_shot_max_bytes() const;
  uint64_t push_two_shot_max_bytes() const;
  // Largest all-reduce input (bytes) that the 128-byte-line one-shot / two-shot takes.
  uint64_t ll128_one_shot_max_bytes() const;
  uint64_t ll128_two_shot_max_bytes() const;

  // ---- copy-engine two-shot (all_reduce with SYMMEM_ALGO_TWO_SHOT_CE) ----
  // Why this call cannot run it (SYMMEM_ERR_UNSUPPORTED naming the reason), or SYMMEM_OK.
  symmem_status ce_refusal(bool in_place) const;
  // Enqueues it on stream s (under order_mu_, from ordered()).
  symmem_status all_reduce_ce(uint64_t at, int dtype, int op, uint64_t count, cudaStream_t s,
                              int timeout_ms);
  // The two streams whose copies run beside the reductions on s: pushes, and returns of reduced
  // chunks. A pair joined into a stream capture stays capturing until that capture ends, so each
  // call takes the first pair that is not capturing, made when there is none (under order_mu_).
  struct CeStreams {
    cudaStream_t push = nullptr, back = nullptr;
  };
  symmem_status ce_streams(CeStreams* out);
  std::vector<CeStreams> ce_streams_;
  // Fork, per-chunk and join events, reused: each is waited for right after it is recorded.
  cudaEvent_t ce_fork_ = nullptr, ce_reduced_ = nullptr, ce_pushes_done_ = nullptr,
              ce_returns_done_ = nullptr;
  // Launches signal or collective work on stream s, after the previous launch on this buffer on
  // whatever stream that was: the buffer's pad work is one sequence whichever streams carry it,
  // so a one-shot on one stream and a two-shot on another can never wait for each other across
  // ranks, and blocks of one segment (views) never run their pad work concurrently. On the stream
  // of the previous launch nothing is added (stream order already holds).
  // A stream capture forbids every event that crosses its boundary, so on a capturing stream s
  // the launch is only recorded (its replays are ordered by symmem_graph_replay, or by the caller
  // for a capture of their own), and the buffer's order keeps describing its eager work.
  template <class Launch>
  symmem_status ordered(void* s, Launch&& launch);
  // The two halves of ordered() around a launch, under order_mu_.
  symmem_status order_before(void* s, bool* capturing);
  symmem_status order_after(void* s);

  std::vector<std::array<uint8_t, 16>> peer_uuid_;
  uint8_t uuid_[16] = {};
  uint32_t** dev_pads_ = nullptr;  // device array of every rank's public pad
  // Set (once) when a collective of this buffer gave up on the device: see check(). The flag is
  // read by every launch (no lock on the happy path); the reason, under the mutex, only to name it.
  std::atomic<bool> out_of_step_flag_{false};
  std::mutex out_of_step_mu_;
  std::string out_of_step_;
  ErrorRecord* err_host_ = nullptr;
  ErrorRecord* err_dev_ = nullptr;
  const uint32_t* abort_dev_ = nullptr;
  cudaStream_t stream_ = nullptr;
  // ordered(): the stream of the last launch while views were live, and how its end is marked:
  // kLazy = a stream symmem knows (the event is recorded only when another stream comes),
  // kRecorded = last_launch_ was recorded after it (right after, on a foreign stream; or by a copy
  // that waited for it, finish_own_work).
  enum class Order { kNone, kLazy, kRecorded };
  std::mutex order_mu_;  // the three members below, between launches and copies
  // Whether symmem knows stream `s` as alive: the legacy default stream, the buffer's own, or a
  // symmem stream not yet destroyed (destroying one synchronizes it first, so a stream symmem no
  // longer knows holds no work of this buffer). stream_known takes the streams lock itself;
  // stream_known_locked is for a caller that holds it, so the stream cannot be destroyed meanwhile.
  bool stream_known(void* s) const;
  bool stream_known_locked(void* s) const;
  symmem_status ensure_order_event();
  cudaEvent_t last_launch_ = nullptr;
  void* last_launch_stream_ = nullptr;
  Order last_order_ = Order::kNone;
};

template <class Name>
symmem_status DeviceBuffer::bind_peers(int rank, int world, const std::vector<CUdeviceptr>& bases,
                                       Name&& peer_name) {
  SYMMEM_TRY(set_device());
  std::vector<std::array<uint8_t, 16>> uuids(world);
  for (int r = 0; r < world; ++r) {
    if (r == rank) continue;
    SYMMEM_TRY(check_peer_header(rank, r, bases[r], peer_name(r).c_str(), &uuids[r]));
  }
  return finish_binding(rank, world, bases, std::move(uuids));
}

// Local memory, copies and streams on one device: what the cuda and nvshmem backends share.
class DeviceBackend : public symmem_backend {
 public:
  DeviceBackend(const char* name, int device, int count, const char* device_name);
  const symmem_backend_info& info() const override { return info_; }
  symmem_status local_alloc(uint64_t bytes, void** out) override;
  void local_free(void* p) override;
  symmem_status local_copy_in(void* dst, const void* src, uint64_t bytes) override;
  symmem_status local_copy_out(void* dst, const void* src, uint64_t bytes) override;
  symmem_status stream_create(void** out) override;
  symmem_status stream_destroy(void* stream) override;
  // Stream markers are CUDA events (timing off) recorded on the stream.
  symmem_status marker_record(void* stream, void** out_event) override;
  symmem_status marker_query(void* event, int* passed) override;
  void marker_destroy(void* event) override;
  // CUDA graphs (cuda/graph.cu).
  symmem_status graph_capture_begin(void* stream) override;
  symmem_status graph_capture_end(void* stream, symmem_graph** out) override;

 protected:
  symmem_backend_info info_;
};

}  // namespace symmem::cuda
