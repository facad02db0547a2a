// The backend interface. The opaque C handles are these C++ classes themselves: the C entry points
// (api_*.cpp) validate arguments and state, then call the virtual methods, so a backend only
// implements the work and never re-checks ranges.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "core/abi.h"
#include "core/status.h"

struct symmem_buffer {
  virtual ~symmem_buffer() = default;

  virtual symmem_status export_fd(int* out_fd) = 0;
  // nvshmem buffers: rank/world are in range, pes non-NULL, not imported yet.
  virtual symmem_status import_pes(int rank, int world, const int* pes);
  // rank/world are in range, fds[r] >= 0 for r != rank, and the buffer is not imported yet.
  virtual symmem_status import(int rank, int world, const int* fds) = 0;

  virtual uint64_t size() const = 0;  // bytes the caller asked for
  virtual int rank() const = 0;       // -1 before import
  virtual int world() const = 0;      // 0 before import
  bool imported() const { return world() > 0; }
  // True for a BufferView (core/buffer_view.h): asked by every call (one_caller), so a virtual
  // call instead of a failing dynamic_cast, which walks the type's bases.
  virtual bool is_view() const { return false; }

  // r is SYMMEM_RANK_SELF or, after import, 0..world-1.
  virtual void* ptr(int r) = 0;
  virtual void* signal_pad(int r) = 0;
  // True if [p, p + n) touches any memory this buffer maps (own or peers').
  virtual bool overlaps(const void* p, size_t n) const = 0;

  // Imported; peer/channel in range; peer != own rank.
  virtual symmem_status put_signal(int peer, int channel, int timeout_ms) = 0;
  virtual symmem_status wait_signal(int peer, int channel, int timeout_ms) = 0;
  virtual symmem_status barrier(int channel, int timeout_ms) = 0;

  // Streams and collectives. The C entry points (api_coll.cpp) check every argument: dtype, op and
  // algo are valid enum values, sizes fit, out does not overlap; algo is never AUTO here. The
  // defaults say the backend cannot.
  virtual symmem_status put_signal_on_stream(int peer, int channel, void*, int timeout_ms) {
    return put_signal(peer, channel, timeout_ms);
  }
  virtual symmem_status wait_signal_on_stream(int peer, int channel, void*, int timeout_ms) {
    return wait_signal(peer, channel, timeout_ms);
  }
  virtual symmem_status barrier_on_stream(int channel, void*, int timeout_ms) {
    return barrier(channel, timeout_ms);
  }
  // Value signals (symmem.h): peer != own rank, channel < SYMMEM_VALUE_CHANNELS, op and cmp valid.
  // The defaults say the backend cannot; the on-stream forms default to the synchronous ones.
  virtual symmem_status signal_value(int peer, int channel, uint64_t value, int op);
  virtual symmem_status wait_signal_value(int peer, int channel, int cmp, uint64_t value, int timeout_ms);
  virtual symmem_status signal_value_on_stream(int peer, int channel, uint64_t value, int op, void*) {
    return signal_value(peer, channel, value, op);
  }
  virtual symmem_status wait_signal_value_on_stream(int peer, int channel, int cmp, uint64_t value, void*,
                                                    int timeout_ms) {
    return wait_signal_value(peer, channel, cmp, value, timeout_ms);
  }
  // r resolved (own rank or a mapped peer); offset/count in range and 4-byte aligned.
  virtual symmem_status memset32(int r, uint64_t offset, uint32_t value, uint64_t count,
                                 void* stream);
  virtual symmem_status write_value32(int r, uint64_t offset, uint32_t value, void* stream);
  virtual symmem_status synchronize(void*) { return SYMMEM_OK; }
  virtual symmem_status check() { return SYMMEM_OK; }
  // algo ONE_SHOT or TWO_SHOT; out NULL = in place.
  // `at`: the byte offset in the data where the collective's elements start. It is 0 for a whole
  // buffer; a view (core/buffer_view.h, a pool block) calls its segment's collectives with its own
  // offset, so every backend reduces at base + at of every rank's mapping.
  virtual symmem_status all_reduce(uint64_t at, int algo, int dtype, int op, uint64_t count,
                                   void* out, void* stream, int timeout_ms);
  virtual symmem_status all_gather(uint64_t at, int dtype, uint64_t count, void* out, void* stream,
                                   int timeout_ms);
  virtual symmem_status reduce_scatter(uint64_t at, int dtype, int op, uint64_t count, void* out,
                                       void* stream, int timeout_ms);
  // root in range; out NULL = in place over each rank's data from `at`.
  virtual symmem_status broadcast(uint64_t at, int dtype, uint64_t count, int root, void* out,
                                  void* stream, int timeout_ms);
  // The data from `at` holds world blocks of count elements (block p for rank p); out NULL = in place.
  virtual symmem_status all_to_all(uint64_t at, int dtype, uint64_t count, void* out, void* stream,
                                   int timeout_ms);
  // splits_at: byte offset from `at` of the world + 1 int64 slots (8-aligned, inside size());
  // out NULL = in place, the capacity then being the splits_at bytes before the slots; out_splits
  // is local memory of 2 * world int64.
  virtual symmem_status all_to_all_v(uint64_t at, int dtype, uint64_t splits_at, void* out,
                                     uint64_t out_capacity, int64_t* out_splits, void* stream,
                                     int timeout_ms);
  // What AUTO means on this buffer (imported); bytes = count * dtype size.
  virtual int auto_algo(int /*dtype*/, uint64_t /*bytes*/, bool /*in_place*/) {
    return SYMMEM_ALGO_ONE_SHOT;
  }
  virtual uint64_t one_shot_in_place_max_bytes() { return 0; }
  // Rank r's GPU UUID (r resolved as for ptr).
  virtual symmem_status device_uuid(int r, uint8_t out[16]);

  // ---- data movement (core/api_copy.cpp). r resolved (own rank or a mapped peer); [offset,
  // offset + bytes) inside size(); bytes > 0. The defaults memcpy through ptr(r) (host memory).
  virtual symmem_status copy_in(int r, uint64_t offset, const void* src, uint64_t bytes);
  virtual symmem_status copy_out(int r, uint64_t offset, void* dst, uint64_t bytes);

  // ---- one-sided copies on a stream (core/api_copy.cpp); arguments as for copy_in/copy_out, with
  // memory of the backend's device on the local side. The defaults are the host's: copy_in/copy_out.
  virtual symmem_status put_on_stream(int r, uint64_t offset, const void* src, uint64_t bytes, void*) {
    return copy_in(r, offset, src, bytes);
  }
  virtual symmem_status get_on_stream(int r, uint64_t offset, void* dst, uint64_t bytes, void*) {
    return copy_out(r, offset, dst, bytes);
  }

  // ---- NCCL windows (nccl/nccl_window.cpp). The own allocation as NCCL registers it: one cuMem
  // range [*base, *base + *bytes) whose data starts at *data_offset. GPU buffers only.
  virtual symmem_status own_allocation(void** base, uint64_t* bytes, uint64_t* data_offset);
  // NCCL windows registered on this buffer's memory: freeing the memory first would pull it from
  // under NCCL, so symmem_buffer_free refuses while any remains.
  std::atomic<int> nccl_windows{0};

  // ---- CUDA graphs (core/api_graph.cpp, cuda/graph.cu). Graphs captured with this buffer's work
  // in them, or being captured: a replay writes the buffer's memory, so symmem_buffer_free refuses
  // while any remains.
  std::atomic<int> graphs{0};

  // ---- views (core/buffer_view.h). A view borrows this buffer's mappings and signal pads, so the
  // buffer must outlive it: symmem_buffer_free refuses a buffer while live_views > 0.
  std::atomic<int> live_views{0};
  // Set while a call through one of this buffer's views uses the shared signal state (signals,
  // barriers, collectives): a second thread that tries at the same time is refused, since two
  // interleaved users of one pad would pair their barriers wrongly (see docs/mempool.md).
  std::atomic<bool> view_call_busy{false};
  // True while any view is live: device buffers then order their signal and collective work across
  // streams (a view's user sees independent tensors, not one shared pad).
  bool has_views() const { return live_views.load(std::memory_order_acquire) > 0; }
  // Set while a thread issues a signal, barrier or collective on this whole buffer (core/
  // one_caller.h): its epochs, scratch and stream order are one sequence, so a second thread at
  // the same time is refused at once instead of interleaving with it.
  std::atomic<bool> call_busy{false};
  std::atomic<const char*> call_what{nullptr};  // the call inside, for the refusal's message
};

// A CUDA graph captured by symmem_graph_capture_begin/end (cuda/graph.cu): an instantiated graph
// and the buffers whose work it holds.
struct symmem_graph {
  virtual ~symmem_graph() = default;
  // Not aborted; stream non-NULL.
  virtual symmem_status replay(void* stream) = 0;
  virtual symmem_status synchronize(void* stream) = 0;
  virtual int buffer_count() const = 0;
  virtual uint64_t node_count() const = 0;
};

struct symmem_backend {
  virtual ~symmem_backend() = default;
  virtual const symmem_backend_info& info() const = 0;
  // size_bytes > 0.
  virtual symmem_status alloc(uint64_t size_bytes, symmem_buffer** out) = 0;

  // ---- local memory and streams (core/api_copy.cpp, core/api_stream.cpp). The defaults are the
  // host's: aligned malloc, memcpy, no streams (NULL). bytes > 0; ranges are checked by the core.
  virtual symmem_status local_alloc(uint64_t bytes, void** out);
  virtual void local_free(void* p);
  virtual symmem_status local_copy_in(void* dst, const void* src, uint64_t bytes);
  virtual symmem_status local_copy_out(void* dst, const void* src, uint64_t bytes);
  virtual symmem_status stream_create(void** out) {
    *out = nullptr;
    return SYMMEM_OK;
  }
  virtual symmem_status stream_destroy(void*) { return SYMMEM_OK; }
  // Stream markers (core/api_marker.cpp): a point in a stream that later says whether the stream
  // has passed it. The host's streams are NULL and synchronous, so its marker is always passed.
  virtual symmem_status marker_record(void* /*stream*/, void** out_event) {
    *out_event = nullptr;
    return SYMMEM_OK;
  }
  // *passed = 1 once the stream has run past the marker.
  virtual symmem_status marker_query(void* /*event*/, int* passed) {
    *passed = 1;
    return SYMMEM_OK;
  }
  virtual void marker_destroy(void* /*event*/) {}
  // CUDA graphs (core/api_graph.cpp): stream non-NULL. The default: this backend cannot.
  virtual symmem_status graph_capture_begin(void* stream);
  virtual symmem_status graph_capture_end(void* stream, symmem_graph** out);

  // Live local allocations (address -> bytes), kept by the core so that copies are range-checked
  // and symmem_backend_close frees what is left.
  std::mutex locals_mutex;
  std::map<const void*, uint64_t> locals;
};

namespace symmem {

// src/host
symmem_status open_host_backend(symmem_backend** out);
// src/cuda when built with nvcc, else core/cuda_stub.cpp.
symmem_status open_cuda_backend(int device, symmem_backend** out);
symmem_status cuda_device_count(int* out);
symmem_status cuda_topology(symmem_topology* out);
// src/nvshmem when built with nvcc, else core/cuda_stub.cpp. Needs symmem_nvshmem_init first.
symmem_status open_nvshmem_backend(int device, symmem_backend** out);
// src/nccl when built with nvcc, else core/nccl_stub.cpp. Needs symmem_nccl_load first.
symmem_status open_nccl_backend(int device, symmem_backend** out);

// The first check of every entry point that signals or reduces: a buffer, and one already mapped
// to its peers.
inline symmem_status check_imported(symmem_buffer* buffer, const char* what) {
  if (buffer == nullptr) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: buffer is NULL", what);
  if (!buffer->imported())
    return fail(SYMMEM_ERR_STATE, "%s: the buffer is not imported yet (call symmem_buffer_import)",
                what);
  return SYMMEM_OK;
}

// A signal's peer: another rank of the buffer's world (imported).
inline symmem_status check_peer(symmem_buffer* buffer, int peer, const char* what) {
  if (peer < 0 || peer >= buffer->world())
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: peer %d is out of range 0..%d (world %d)", what, peer,
                buffer->world() - 1, buffer->world());
  if (peer == buffer->rank())
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: peer %d is this rank: a rank does not signal itself",
                what, peer);
  return SYMMEM_OK;
}

}  // namespace symmem
