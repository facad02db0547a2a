// The "cuda" backend: symmetric buffers in GPU memory through the CUDA virtual memory management
// API. Driver calls go through cudaGetDriverEntryPointByVersion (cuda/driver.h): libsymmem has no
// link dependency on libcuda and loads, and reports "no CUDA device", on machines without one.
// Multicast objects are never created; the multicast attribute is only read for the topology.
#include <cuda_runtime.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/abort.h"
#include "core/backend.h"
#include "core/status.h"
#include "core/validate.h"
#include "cuda/driver.h"
#include "cuda/kernels.h"
#include "cuda/layout.h"

namespace symmem::cuda {
namespace {

uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

#define SYMMEM_CU(call, ...)                                          \
  do {                                                                \
    CUresult symmem_cu_r_ = (call);                                   \
    if (symmem_cu_r_ != CUDA_SUCCESS) return fail_cu(symmem_cu_r_, __VA_ARGS__); \
  } while (0)
#define SYMMEM_RT(call, ...)                                          \
  do {                                                                \
    cudaError_t symmem_rt_e_ = (call);                                \
    if (symmem_rt_e_ != cudaSuccess) return fail_rt(symmem_rt_e_, __VA_ARGS__); \
  } while (0)

std::string uuid_text(const uint8_t* u) {
  char b[48];
  std::snprintf(b, sizeof b,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
  return b;
}

// The process's abort word for device code: pinned, mapped into every device's address space
// (portable), allocated once on the first buffer and kept for the life of the process (4 bytes),
// registered with the core so that symmem_abort sets it. Returns its device address, or an error.
symmem_status abort_word_for_devices(const uint32_t** out) {
  static std::mutex mutex;
  static uint32_t* host = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (host == nullptr) {
    void* p = nullptr;
    SYMMEM_RT(cudaHostAlloc(&p, sizeof(uint32_t), cudaHostAllocMapped | cudaHostAllocPortable),
              "cudaHostAlloc(abort word)");
    host = static_cast<uint32_t*>(p);
    register_abort_word(host);
  }
  void* dev = nullptr;
  SYMMEM_RT(cudaHostGetDevicePointer(&dev, host, 0), "cudaHostGetDevicePointer(abort word)");
  *out = static_cast<const uint32_t*>(dev);
  return SYMMEM_OK;
}

const char* op_name(uint32_t op) {
  switch (op) {
    case kOpBarrier: return "barrier";
    case kOpPutSignal: return "put_signal";
    case kOpWaitSignal: return "wait_signal";
    case kOpAllReduceOneShot: return "all_reduce one-shot";
    case kOpAllReduceTwoShot: return "all_reduce two-shot";
    case kOpAllGather: return "all_gather";
    case kOpReduceScatter: return "reduce_scatter";
    default: return "device wait";
  }
}

// One mapping of one rank's allocation in this process.
struct Mapping {
  CUdeviceptr va = 0;
  uint64_t bytes = 0;
  bool mapped = false;
};

class CudaBuffer final : public symmem_buffer {
 public:
  static symmem_status create(int device, uint64_t size_bytes, symmem_buffer** out);
  ~CudaBuffer() override;

  symmem_status export_fd(int* out_fd) override {
    *out_fd = fd_;
    return SYMMEM_OK;
  }
  symmem_status import(int rank, int world, const int* fds) override;
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
  symmem_status all_reduce_sum_f32(uint64_t count, float* out, int, int timeout_ms) override {
    // The legacy ABI call is synchronous and takes a private out: one-shot, then wait.
    return sync_after(all_reduce(SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, count, out,
                                 stream_, timeout_ms));
  }

  symmem_status put_signal_on_stream(int peer, int channel, void* s, int timeout_ms) override;
  symmem_status wait_signal_on_stream(int peer, int channel, void* s, int timeout_ms) override;
  symmem_status barrier_on_stream(int channel, void* s, int timeout_ms) override;
  symmem_status memset32(int r, uint64_t offset, uint32_t value, uint64_t count,
                         void* s) override;
  symmem_status write_value32(int r, uint64_t offset, uint32_t value, void* s) override;
  symmem_status synchronize(void* s) override;
  symmem_status check() override;
  symmem_status all_reduce(int algo, int dtype, int op, uint64_t count, void* out, void* s,
                           int timeout_ms) override;
  symmem_status all_gather(int dtype, uint64_t count, void* out, void* s,
                           int timeout_ms) override;
  symmem_status reduce_scatter(int dtype, int op, uint64_t count, void* out, void* s,
                               int timeout_ms) override;
  int auto_algo(int dtype, uint64_t bytes, bool in_place) override;
  uint64_t one_shot_in_place_max_bytes() override { return cuda::one_shot_in_place_max_bytes(); }
  // Host <-> device copies (core/api_copy.cpp checked the range): wait for all work on the
  // device, copy, and (in) wait until the data has landed, so peers' next kernels read it.
  symmem_status copy_in(int r, uint64_t offset, const void* src, uint64_t bytes) override {
    SYMMEM_TRY(set_device());
    SYMMEM_RT(cudaDeviceSynchronize(), "symmem_buffer_copy_in: cudaDeviceSynchronize");
    SYMMEM_RT(cudaMemcpy(reinterpret_cast<void*>(base(r) + pad_region_ + offset), src, bytes,
                         cudaMemcpyHostToDevice),
              "symmem_buffer_copy_in: cudaMemcpy(rank %d, offset %llu, %llu bytes)", r,
              static_cast<unsigned long long>(offset), static_cast<unsigned long long>(bytes));
    SYMMEM_RT(cudaDeviceSynchronize(), "symmem_buffer_copy_in: cudaDeviceSynchronize after copy");
    return SYMMEM_OK;
  }
  symmem_status copy_out(int r, uint64_t offset, void* dst, uint64_t bytes) override {
    SYMMEM_TRY(set_device());
    SYMMEM_RT(cudaDeviceSynchronize(), "symmem_buffer_copy_out: cudaDeviceSynchronize");
    SYMMEM_TRY(check());  // a device-side timeout of earlier work: the data is not a result
    SYMMEM_RT(cudaMemcpy(dst, reinterpret_cast<const void*>(base(r) + pad_region_ + offset),
                         bytes, cudaMemcpyDeviceToHost),
              "symmem_buffer_copy_out: cudaMemcpy(rank %d, offset %llu, %llu bytes)", r,
              static_cast<unsigned long long>(offset), static_cast<unsigned long long>(bytes));
    return SYMMEM_OK;
  }
  symmem_status device_uuid(int r, uint8_t out[16]) override {
    std::memcpy(out, r == SYMMEM_RANK_SELF || r == rank_ ? uuid_ : peer_uuid_[r].data(), 16);
    return SYMMEM_OK;
  }

 private:
  CudaBuffer() = default;
  CUdeviceptr base(int r) const {
    return r == SYMMEM_RANK_SELF || r == rank_ ? local_.va : maps_[r].va;
  }
  symmem_status set_device() {
    SYMMEM_RT(cudaSetDevice(device_), "cudaSetDevice(%d)", device_);
    return SYMMEM_OK;
  }
  symmem_status sync_after(symmem_status launched) {
    if (launched != SYMMEM_OK) return launched;
    return synchronize(stream_);
  }
  SigArgs sig_args(int peer, int channel, int timeout_ms) const;
  symmem_status report_aborted(const ErrorRecord& e);
  symmem_status coll_args(int timeout_ms, CollArgs* a, const char* what);
  void unmap(Mapping& m);

  const Driver* drv_ = nullptr;
  int device_ = -1;
  uint64_t requested_ = 0;
  uint64_t pad_region_ = 0;  // bytes before the data (granularity-rounded)
  uint64_t total_ = 0;
  CUmemGenericAllocationHandle handle_ = 0;
  bool have_handle_ = false;
  int fd_ = -1;
  Mapping local_;
  std::vector<Mapping> maps_;  // after import; maps_[rank_] is unused (local_)
  std::vector<std::array<uint8_t, 16>> peer_uuid_;
  uint8_t uuid_[16] = {};
  uint32_t** dev_pads_ = nullptr;  // device array of every rank's public pad
  ErrorRecord* err_host_ = nullptr;
  ErrorRecord* err_dev_ = nullptr;
  const uint32_t* abort_dev_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int rank_ = SYMMEM_RANK_SELF;
  int world_ = 0;
  // Epochs, counted on the host: every rank enqueues the same sequence of calls on a buffer.
  uint32_t coll_epoch_ = 0;
  uint32_t bar_epoch_[SYMMEM_SIGNAL_CHANNELS] = {};
};

symmem_status CudaBuffer::create(int device, uint64_t size_bytes, symmem_buffer** out) {
  const Driver* d = nullptr;
  SYMMEM_TRY(driver(&d));
  if (size_bytes > (uint64_t{1} << 50))
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "size_bytes %llu is too large",
                static_cast<unsigned long long>(size_bytes));
  std::unique_ptr<CudaBuffer> b(new CudaBuffer());
  b->drv_ = d;
  b->device_ = device;
  b->requested_ = size_bytes;
  SYMMEM_TRY(b->set_device());
  cudaDeviceProp prop;
  SYMMEM_RT(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties(%d)", device);
  std::memcpy(b->uuid_, prop.uuid.bytes, 16);

  CUmemAllocationProp ap;
  std::memset(&ap, 0, sizeof ap);
  ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.location.id = device;
  ap.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t gran = 0;
  SYMMEM_CU(d->MemGetAllocationGranularity(&gran, &ap, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
            "cuMemGetAllocationGranularity(device %d)", device);
  b->pad_region_ = round_up(kPadUsedBytes, gran);
  b->total_ = b->pad_region_ + round_up(size_bytes, gran);
  SYMMEM_CU(d->MemCreate(&b->handle_, b->total_, &ap, 0), "cuMemCreate(%llu bytes, device %d)",
            static_cast<unsigned long long>(b->total_), device);
  b->have_handle_ = true;
  int fd = -1;
  SYMMEM_CU(d->MemExportToShareableHandle(&fd, b->handle_,
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            "cuMemExportToShareableHandle(POSIX fd)");
  b->fd_ = fd;
  SYMMEM_CU(d->MemAddressReserve(&b->local_.va, b->total_, gran, 0, 0),
            "cuMemAddressReserve(%llu bytes)", static_cast<unsigned long long>(b->total_));
  b->local_.bytes = b->total_;
  SYMMEM_CU(d->MemMap(b->local_.va, b->total_, 0, b->handle_, 0), "cuMemMap(own allocation)");
  b->local_.mapped = true;
  CUmemAccessDesc acc;
  acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  acc.location.id = device;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  SYMMEM_CU(d->MemSetAccess(b->local_.va, b->total_, &acc, 1), "cuMemSetAccess(own allocation)");

  SYMMEM_RT(cudaStreamCreate(&b->stream_), "cudaStreamCreate");
  SYMMEM_RT(cudaHostAlloc(reinterpret_cast<void**>(&b->err_host_), sizeof(ErrorRecord),
                          cudaHostAllocMapped),
            "cudaHostAlloc(error record)");
  std::memset(const_cast<ErrorRecord*>(b->err_host_), 0, sizeof(ErrorRecord));
  SYMMEM_RT(cudaHostGetDevicePointer(reinterpret_cast<void**>(&b->err_dev_), b->err_host_, 0),
            "cudaHostGetDevicePointer(error record)");
  SYMMEM_TRY(abort_word_for_devices(&b->abort_dev_));
  // Signal pads, flags, epochs and claim start at zero; then the header.
  void* pad = reinterpret_cast<void*>(b->local_.va);
  SYMMEM_RT(cudaMemset(pad, 0, kHeaderOff), "cudaMemset(signal pad)");
  Header h;
  std::memset(&h, 0, sizeof h);
  h.magic = kMagic;
  h.layout_version = 1;
  h.requested_bytes = size_bytes;
  h.total_bytes = b->total_;
  std::memcpy(h.uuid, b->uuid_, 16);
  h.device = device;
  h.pid = static_cast<int32_t>(getpid());
  SYMMEM_RT(cudaMemcpy(static_cast<char*>(pad) + kHeaderOff, &h, sizeof h, cudaMemcpyHostToDevice),
            "cudaMemcpy(header)");
  SYMMEM_RT(cudaDeviceSynchronize(), "cudaDeviceSynchronize after alloc");
  *out = b.release();
  return SYMMEM_OK;
}

void CudaBuffer::unmap(Mapping& m) {
  if (m.mapped) drv_->MemUnmap(m.va, m.bytes);
  if (m.va != 0) drv_->MemAddressFree(m.va, m.bytes);
  m = Mapping();
}

CudaBuffer::~CudaBuffer() {
  if (device_ >= 0) cudaSetDevice(device_);
  // Nothing may still run against these mappings.
  cudaDeviceSynchronize();
  cudaGetLastError();
  for (size_t r = 0; r < maps_.size(); ++r)
    if (static_cast<int>(r) != rank_) unmap(maps_[r]);
  if (drv_ != nullptr) unmap(local_);
  if (have_handle_) drv_->MemRelease(handle_);
  if (fd_ >= 0) close(fd_);
  if (dev_pads_ != nullptr) cudaFree(dev_pads_);
  if (err_host_ != nullptr) cudaFreeHost(err_host_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  cudaGetLastError();
}

symmem_status CudaBuffer::import(int rank, int world, const int* fds) {
  SYMMEM_TRY(set_device());
  std::vector<Mapping> maps(world);
  std::vector<std::array<uint8_t, 16>> uuids(world);
  std::memcpy(uuids[rank].data(), uuid_, 16);
  bool ok = false;
  struct Undo {
    CudaBuffer* self;
    std::vector<Mapping>& maps;
    int rank;
    bool& ok;
    ~Undo() {
      if (ok) return;
      for (size_t r = 0; r < maps.size(); ++r)
        if (static_cast<int>(r) != rank) self->unmap(maps[r]);
    }
  } undo{this, maps, rank, ok};
  const bool allow_overlap = overlapping_devices_allowed();
  CUmemAccessDesc acc;
  acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  acc.location.id = device_;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  for (int r = 0; r < world; ++r) {
    if (r == rank) continue;
    CUmemGenericAllocationHandle h;
    CUresult cr = drv_->MemImportFromShareableHandle(
        &h, reinterpret_cast<void*>(static_cast<uintptr_t>(fds[r])),
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    if (cr != CUDA_SUCCESS) {
      if (fcntl(fds[r], F_GETFD) < 0 && errno == EBADF)
        return fail(SYMMEM_ERR_INVALID_ARGUMENT, "fds[%d] (%d) is not an open file descriptor", r,
                    fds[r]);
      return fail_cu(cr, "cuMemImportFromShareableHandle(rank %d's fd %d; is it a cuda symmem "
                         "buffer?)", r, fds[r]);
    }
    Mapping& m = maps[r];
    cr = drv_->MemAddressReserve(&m.va, total_, 0, 0, 0);
    if (cr != CUDA_SUCCESS) {
      drv_->MemRelease(h);
      return fail_cu(cr, "cuMemAddressReserve for rank %d's buffer", r);
    }
    m.bytes = total_;
    cr = drv_->MemMap(m.va, total_, 0, h, 0);
    drv_->MemRelease(h);  // the mapping keeps the memory alive
    if (cr != CUDA_SUCCESS) {
      if (cr == CUDA_ERROR_INVALID_VALUE)
        return fail(SYMMEM_ERR_MISMATCH,
                    "rank %d's allocation cannot be mapped with this rank's size (%llu bytes "
                    "requested, %llu allocated): the buffer sizes differ",
                    r, static_cast<unsigned long long>(requested_),
                    static_cast<unsigned long long>(total_));
      return fail_cu(cr, "cuMemMap of rank %d's buffer", r);
    }
    m.mapped = true;
    cr = drv_->MemSetAccess(m.va, total_, &acc, 1);
    if (cr != CUDA_SUCCESS)
      return fail_cu(cr,
                     "cuMemSetAccess of rank %d's buffer for device %d (can this GPU reach the "
                     "peer's over P2P?)",
                     r, device_);
    Header h2;
    SYMMEM_RT(cudaMemcpy(&h2, reinterpret_cast<void*>(m.va + kHeaderOff), sizeof h2,
                         cudaMemcpyDeviceToHost),
              "reading rank %d's buffer header", r);
    if (h2.magic != kMagic || h2.layout_version != 1)
      return fail(SYMMEM_ERR_MISMATCH, "rank %d's fd %d is not a cuda symmem buffer (bad header)",
                  r, fds[r]);
    if (h2.requested_bytes != requested_)
      return fail(SYMMEM_ERR_MISMATCH, "rank %d's buffer is %llu bytes, this rank's is %llu", r,
                  static_cast<unsigned long long>(h2.requested_bytes),
                  static_cast<unsigned long long>(requested_));
    std::memcpy(uuids[r].data(), h2.uuid, 16);
    if (!allow_overlap && std::memcmp(h2.uuid, uuid_, 16) == 0)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                  "ranks %d and %d both use GPU %s (device %d here, device %d in rank %d's "
                  "process): one GPU per rank, or set SYMMEM_ALLOW_OVERLAPPING_DEVICES=1",
                  std::min(r, rank), std::max(r, rank), uuid_text(uuid_).c_str(), device_,
                  h2.device, r);
  }
  // The device array of public pads, for the signal kernels.
  std::vector<uint32_t*> pads(world);
  for (int r = 0; r < world; ++r)
    pads[r] = reinterpret_cast<uint32_t*>(r == rank ? local_.va : maps[r].va);
  uint32_t** dev = nullptr;
  SYMMEM_RT(cudaMalloc(&dev, world * sizeof(uint32_t*)), "cudaMalloc(pad table)");
  cudaError_t e = cudaMemcpy(dev, pads.data(), world * sizeof(uint32_t*), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    cudaFree(dev);
    return fail_rt(e, "cudaMemcpy(pad table)");
  }
  ok = true;
  dev_pads_ = dev;
  maps_ = std::move(maps);
  maps_[rank] = local_;
  peer_uuid_ = std::move(uuids);
  rank_ = rank;
  world_ = world;
  return SYMMEM_OK;
}

bool CudaBuffer::overlaps(const void* p, size_t n) const {
  const uint64_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + (n == 0 ? 1 : n);
  auto hits = [&](const Mapping& m) { return m.va != 0 && lo < m.va + m.bytes && m.va < hi; };
  if (hits(local_)) return true;
  for (const Mapping& m : maps_)
    if (hits(m)) return true;
  return false;
}

SigArgs CudaBuffer::sig_args(int peer, int channel, int timeout_ms) const {
  SigArgs a;
  a.pads = dev_pads_;
  a.claim = reinterpret_cast<uint32_t*>(local_.va + kClaimOff);
  a.err = err_dev_;
  a.abort = abort_dev_;
  a.rank = rank_;
  a.world = world_;
  a.peer = peer;
  a.channel = channel;
  a.epoch = 0;
  a.timeout_ms = static_cast<uint32_t>(timeout_ms);
  a.timeout_ns = static_cast<uint64_t>(timeout_ms) * 1000000ull;
  return a;
}

symmem_status CudaBuffer::coll_args(int timeout_ms, CollArgs* a, const char* what) {
  if (world_ > kMaxCollWorld)
    return fail(SYMMEM_ERR_UNSUPPORTED, "%s: the cuda collectives support world 1..%d (world is %d)",
                what, kMaxCollWorld, world_);
  std::memset(a, 0, sizeof *a);
  for (int r = 0; r < world_; ++r) {
    const CUdeviceptr b = r == rank_ ? local_.va : maps_[r].va;
    a->data[r] = reinterpret_cast<char*>(b + pad_region_);
    a->flags[r] = reinterpret_cast<uint32_t*>(b + kFlagsOff);
  }
  a->epoch = coll_epoch_;
  coll_epoch_ += 3;  // the most barriers any collective kernel has
  a->claim = reinterpret_cast<uint32_t*>(local_.va + kClaimOff);
  a->err = err_dev_;
  a->abort = abort_dev_;
  a->rank = rank_;
  a->world = world_;
  a->timeout_ms = static_cast<uint32_t>(timeout_ms);
  a->timeout_ns = static_cast<uint64_t>(timeout_ms) * 1000000ull;
  return SYMMEM_OK;
}

symmem_status CudaBuffer::put_signal_on_stream(int peer, int channel, void* s, int timeout_ms) {
  SYMMEM_TRY(set_device());
  SYMMEM_RT(launch_put_signal(sig_args(peer, channel, timeout_ms), static_cast<cudaStream_t>(s)),
            "put_signal(peer %d, channel %d): kernel launch", peer, channel);
  return SYMMEM_OK;
}

symmem_status CudaBuffer::wait_signal_on_stream(int peer, int channel, void* s, int timeout_ms) {
  SYMMEM_TRY(set_device());
  SYMMEM_RT(launch_wait_signal(sig_args(peer, channel, timeout_ms), static_cast<cudaStream_t>(s)),
            "wait_signal(peer %d, channel %d): kernel launch", peer, channel);
  return SYMMEM_OK;
}

symmem_status CudaBuffer::barrier_on_stream(int channel, void* s, int timeout_ms) {
  SYMMEM_TRY(set_device());
  if (world_ == 1) return SYMMEM_OK;
  SigArgs a = sig_args(-1, channel, timeout_ms);
  a.epoch = ++bar_epoch_[channel];
  SYMMEM_RT(launch_barrier(a, static_cast<cudaStream_t>(s)),
            "barrier(channel %d): kernel launch", channel);
  return SYMMEM_OK;
}

symmem_status CudaBuffer::memset32(int r, uint64_t offset, uint32_t value, uint64_t count,
                                   void* s) {
  SYMMEM_TRY(set_device());
  uint32_t* p = reinterpret_cast<uint32_t*>(base(r) + pad_region_ + offset);
  SYMMEM_RT(launch_memset32(p, value, count, static_cast<cudaStream_t>(s)),
            "memset32: kernel launch");
  return SYMMEM_OK;
}

symmem_status CudaBuffer::write_value32(int r, uint64_t offset, uint32_t value, void* s) {
  SYMMEM_TRY(set_device());
  SYMMEM_CU(drv_->StreamWriteValue32(static_cast<CUstream>(s), base(r) + pad_region_ + offset,
                                     value, CU_STREAM_WRITE_VALUE_DEFAULT),
            "cuStreamWriteValue32(rank %d, offset %llu)", r,
            static_cast<unsigned long long>(offset));
  return SYMMEM_OK;
}

symmem_status CudaBuffer::synchronize(void* s) {
  SYMMEM_TRY(set_device());
  SYMMEM_RT(cudaStreamSynchronize(static_cast<cudaStream_t>(s)), "cudaStreamSynchronize");
  return check();
}

symmem_status CudaBuffer::check() {
  if (err_host_->status == 0) return SYMMEM_OK;
  const ErrorRecord e{err_host_->status, err_host_->op,          err_host_->channel,
                      err_host_->peer,   err_host_->nbarriers, err_host_->timeout_ms};
  // Clear for the next report: the record, then the device claim word.
  std::memset(const_cast<ErrorRecord*>(err_host_), 0, sizeof(ErrorRecord));
  SYMMEM_TRY(set_device());
  cudaMemset(reinterpret_cast<void*>(local_.va + kClaimOff), 0, 4);
  cudaDeviceSynchronize();
  if (e.status == kGaveUpAborted) return report_aborted(e);
  switch (e.op) {
    case kOpBarrier:
      return fail(SYMMEM_ERR_TIMEOUT, "barrier(channel %d): rank %d did not arrive within %u ms",
                  e.channel, e.peer, e.timeout_ms);
    case kOpPutSignal:
      return fail(SYMMEM_ERR_TIMEOUT,
                  "put_signal(peer %d, channel %d): rank %d did not consume the previous signal "
                  "within %u ms",
                  e.peer, e.channel, e.peer, e.timeout_ms);
    case kOpWaitSignal:
      return fail(SYMMEM_ERR_TIMEOUT,
                  "wait_signal(peer %d, channel %d): no signal from rank %d within %u ms", e.peer,
                  e.channel, e.peer, e.timeout_ms);
    default:
      return fail(SYMMEM_ERR_TIMEOUT,
                  "%s (barrier %d of %d, %s): rank %d did not arrive within %u ms; the buffer's "
                  "signal state is now undefined, free it",
                  op_name(e.op), e.channel, e.nbarriers,
                  e.channel == 1 ? "waiting for inputs" : "waiting for peers", e.peer,
                  e.timeout_ms);
  }
}

// The device wait that saw the abort, named like the timeouts name theirs.
symmem_status CudaBuffer::report_aborted(const ErrorRecord& e) {
  char what[160];
  switch (e.op) {
    case kOpBarrier:
      std::snprintf(what, sizeof what, "barrier(channel %d) waiting for rank %d", e.channel, e.peer);
      break;
    case kOpPutSignal:
      std::snprintf(what, sizeof what, "put_signal(peer %d, channel %d)", e.peer, e.channel);
      break;
    case kOpWaitSignal:
      std::snprintf(what, sizeof what, "wait_signal(peer %d, channel %d)", e.peer, e.channel);
      break;
    default:
      std::snprintf(what, sizeof what, "%s (barrier %d of %d) waiting for rank %d; the buffer's signal state "
                    "is now undefined, free it", op_name(e.op), e.channel, e.nbarriers, e.peer);
  }
  return fail_aborted(what);
}

symmem_status CudaBuffer::all_reduce(int algo, int dtype, int op, uint64_t count, void* out,
                                     void* s, int timeout_ms) {
  SYMMEM_TRY(set_device());
  CollArgs a;
  SYMMEM_TRY(coll_args(timeout_ms, &a, "all_reduce"));
  SYMMEM_RT(launch_all_reduce(a, algo, dtype, op, count, out, static_cast<cudaStream_t>(s)),
            "all_reduce: kernel launch");
  return SYMMEM_OK;
}

symmem_status CudaBuffer::all_gather(int dtype, uint64_t count, void* out, void* s,
                                     int timeout_ms) {
  SYMMEM_TRY(set_device());
  CollArgs a;
  SYMMEM_TRY(coll_args(timeout_ms, &a, "all_gather"));
  SYMMEM_RT(launch_all_gather(a, dtype, count, out, static_cast<cudaStream_t>(s)),
            "all_gather: kernel launch");
  return SYMMEM_OK;
}

symmem_status CudaBuffer::reduce_scatter(int dtype, int op, uint64_t count, void* out, void* s,
                                         int timeout_ms) {
  SYMMEM_TRY(set_device());
  CollArgs a;
  SYMMEM_TRY(coll_args(timeout_ms, &a, "reduce_scatter"));
  SYMMEM_RT(launch_reduce_scatter(a, dtype, op, count, out, static_cast<cudaStream_t>(s)),
            "reduce_scatter: kernel launch");
  return SYMMEM_OK;
}

// Crossovers measured on 4 x H200, bf16 sum (docs/cuda-backend.md): out of place, one-shot below
// 1 MiB and two-shot from 1 MiB; in place, two-shot at every size (one-shot in place was slower at
// every measured size). SYMMEM_CUDA_TWO_SHOT_MIN_BYTES / SYMMEM_CUDA_TWO_SHOT_IP_MIN_BYTES override.
int CudaBuffer::auto_algo(int, uint64_t bytes, bool in_place) {
  static const uint64_t min_two_shot = [] {
    const char* v = std::getenv("SYMMEM_CUDA_TWO_SHOT_MIN_BYTES");
    return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : uint64_t{1} << 20;
  }();
  // In place, one-shot wins while its input fits the push scratch (one wait, no trailing barrier:
  // 4.9 against 8.0 us at 4 KiB, 6.2 against 9.3 us at 128 KiB on 4 x H200); above that two-shot.
  static const char* ip_env = std::getenv("SYMMEM_CUDA_TWO_SHOT_IP_MIN_BYTES");
  const uint64_t push_capacity =
      pad_region_ > cuda::kScratchOff ? (pad_region_ - cuda::kScratchOff) / (2 * uint64_t(world_)) / 256 * 256 : 0;
  const uint64_t min_two_shot_ip =
      ip_env != nullptr && *ip_env != '\0' ? std::strtoull(ip_env, nullptr, 10) : push_capacity + 1;
  // Out of place at world 2 one-shot reads a single peer and wins at every size (4 x H200: 10.7
  // against 13.9 us at 1 MiB, 821 against 822 us at 256 MiB), so two-shot is only for more ranks.
  const bool one_shot_always = !in_place && world_ == 2 && std::getenv("SYMMEM_CUDA_TWO_SHOT_MIN_BYTES") == nullptr;
  if (one_shot_always) return SYMMEM_ALGO_ONE_SHOT;
  uint64_t threshold = in_place ? min_two_shot_ip : min_two_shot;
  if (in_place && threshold > cuda::one_shot_in_place_max_bytes())
    threshold = cuda::one_shot_in_place_max_bytes();
  return bytes < threshold ? SYMMEM_ALGO_ONE_SHOT : SYMMEM_ALGO_TWO_SHOT;
}

class CudaBackend final : public symmem_backend {
 public:
  CudaBackend(int device, int count, const char* device_name) {
    std::memset(&info_, 0, sizeof info_);
    std::strncpy(info_.name, "cuda", sizeof info_.name - 1);
    std::strncpy(info_.device_name, device_name, sizeof info_.device_name - 1);
    info_.device = device;
    info_.device_count = count;
  }
  const symmem_backend_info& info() const override { return info_; }
  symmem_status alloc(uint64_t size_bytes, symmem_buffer** out) override {
    *out = nullptr;
    return CudaBuffer::create(info_.device, size_bytes, out);
  }

  // Local memory and streams on this backend's device.
  symmem_status local_alloc(uint64_t bytes, void** out) override {
    SYMMEM_RT(cudaSetDevice(info_.device), "cudaSetDevice(%d)", info_.device);
    void* p = nullptr;
    SYMMEM_RT(cudaMalloc(&p, bytes), "symmem_local_alloc: cudaMalloc(%llu bytes) on device %d",
              static_cast<unsigned long long>(bytes), info_.device);
    cudaError_t e = cudaMemset(p, 0, bytes);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      cudaFree(p);
      return fail_rt(e, "symmem_local_alloc: cudaMemset(%llu bytes)",
                     static_cast<unsigned long long>(bytes));
    }
    *out = p;
    return SYMMEM_OK;
  }
  void local_free(void* p) override {
    cudaSetDevice(info_.device);
    cudaFree(p);
    cudaGetLastError();
  }
  symmem_status local_copy_in(void* dst, const void* src, uint64_t bytes) override {
    SYMMEM_RT(cudaSetDevice(info_.device), "cudaSetDevice(%d)", info_.device);
    SYMMEM_RT(cudaDeviceSynchronize(), "symmem_local_copy_in: cudaDeviceSynchronize");
    SYMMEM_RT(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice),
              "symmem_local_copy_in: cudaMemcpy(%llu bytes)", static_cast<unsigned long long>(bytes));
    SYMMEM_RT(cudaDeviceSynchronize(), "symmem_local_copy_in: cudaDeviceSynchronize after copy");
    return SYMMEM_OK;
  }
  symmem_status local_copy_out(void* dst, const void* src, uint64_t bytes) override {
    SYMMEM_RT(cudaSetDevice(info_.device), "cudaSetDevice(%d)", info_.device);
    SYMMEM_RT(cudaDeviceSynchronize(), "symmem_local_copy_out: cudaDeviceSynchronize");
    SYMMEM_RT(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost),
              "symmem_local_copy_out: cudaMemcpy(%llu bytes)", static_cast<unsigned long long>(bytes));
    return SYMMEM_OK;
  }
  symmem_status stream_create(void** out) override {
    SYMMEM_RT(cudaSetDevice(info_.device), "cudaSetDevice(%d)", info_.device);
    cudaStream_t s = nullptr;
    SYMMEM_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
              "symmem_stream_create: cudaStreamCreateWithFlags(device %d)", info_.device);
    *out = s;
    return SYMMEM_OK;
  }
  symmem_status stream_destroy(void* stream) override {
    SYMMEM_RT(cudaSetDevice(info_.device), "cudaSetDevice(%d)", info_.device);
    auto s = static_cast<cudaStream_t>(stream);
    cudaError_t e = cudaStreamSynchronize(s);
    cudaError_t d = cudaStreamDestroy(s);
    if (e != cudaSuccess) return fail_rt(e, "symmem_stream_destroy: cudaStreamSynchronize");
    if (d != cudaSuccess) return fail_rt(d, "symmem_stream_destroy: cudaStreamDestroy");
    return SYMMEM_OK;
  }

 private:
  symmem_backend_info info_;
};

// cudaGetDeviceCount fails (rather than returning 0) without a driver or device; the error text
// is what tells the user which of the two it was.
cudaError_t query_count(int* count) {
  *count = 0;
  cudaError_t err = cudaGetDeviceCount(count);
  if (err != cudaSuccess) {
    *count = 0;
    cudaGetLastError();  // clear it so it does not resurface from a later runtime call
  }
  return err;
}

}  // namespace

}  // namespace symmem::cuda

namespace symmem {

symmem_status cuda_device_count(int* out) {
  cuda::query_count(out);
  return SYMMEM_OK;  // "no driver" and "no GPU" both simply mean 0 devices here
}

symmem_status open_cuda_backend(int device, symmem_backend** out) {
  *out = nullptr;
  int count = 0;
  cudaError_t err = cuda::query_count(&count);
  if (count == 0)
    return fail(SYMMEM_ERR_NO_DEVICE, "no CUDA device: %s",
                err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount returned 0");
  if (device < 0 || device >= count)
    return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                "device %d is out of range 0..%d (this process sees %d CUDA device(s))", device,
                count - 1, count);
  cudaDeviceProp prop;
  err = cudaGetDeviceProperties(&prop, device);
  if (err != cudaSuccess)
    return fail(SYMMEM_ERR_SYSTEM, "cudaGetDeviceProperties(device %d): %s", device,
                cudaGetErrorString(err));
  *out = new cuda::CudaBackend(device, count, prop.name);
  return SYMMEM_OK;
}

symmem_status cuda_topology(symmem_topology* t) {
  int count = 0;
  cuda::query_count(&count);
  if (count == 0) return SYMMEM_OK;
  if (count > SYMMEM_TOPOLOGY_MAX_DEVICES) count = SYMMEM_TOPOLOGY_MAX_DEVICES;
  const cuda::Driver* d = nullptr;
  SYMMEM_TRY(cuda::driver(&d));
  const bool mc_off = cuda::multicast_disabled();
  t->device_count = count;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, i) == cudaSuccess) {
      std::memcpy(t->uuid[i], prop.uuid.bytes, 16);
      std::strncpy(t->name[i], prop.name, sizeof t->name[i] - 1);
    }
    CUdevice dev;
    int mc = 0, vmm = 0;
    if (d->DeviceGet(&dev, i) == CUDA_SUCCESS) {
      // Reading the attribute is all: no multicast object is ever created.
      if (d->DeviceGetAttribute(&mc, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, dev) != CUDA_SUCCESS)
        mc = 0;
      if (d->DeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                                dev) != CUDA_SUCCESS)
        vmm = 0;
    }
    t->multicast[i] = mc_off ? SYMMEM_MULTICAST_DISABLED
                             : (mc ? SYMMEM_MULTICAST_SUPPORTED : SYMMEM_MULTICAST_UNSUPPORTED);
    t->vmm_supported[i] = vmm;
    for (int j = 0; j < count; ++j) {
      if (i == j) continue;
      int v = 0;
      if (cudaDeviceCanAccessPeer(&v, i, j) == cudaSuccess) t->can_access_peer[i][j] = v;
      v = 0;
      if (cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrPerformanceRank, i, j) == cudaSuccess)
        t->performance_rank[i][j] = v;
      v = 0;
      if (cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrNativeAtomicSupported, i, j) == cudaSuccess)
        t->native_atomics[i][j] = v;
    }
  }
  cudaGetLastError();
  return SYMMEM_OK;
}

}  // namespace symmem
