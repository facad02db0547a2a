// The "nvshmem" backend: symmetric buffers on NVSHMEM's symmetric heap. One nvshmem_malloc holds
// the same layout as a cuda buffer (pad region, then data: cuda/layout.h); every peer's copy is
// reached with nvshmem_ptr, and the collectives and signals are symmem's own kernels
// (cuda/device_buffer.h), so they behave and perform as on the cuda backend, with deadlines.
//
// nvshmem_malloc and nvshmem_free are collective over every PE of the NVSHMEM world (NVSHMEM
// barriers inside): every PE must allocate and free the same sizes in the same order. The Java
// side agrees on that through the store, with a deadline, before it calls either.
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "core/abort.h"
#include "core/status.h"
#include "core/validate.h"
#include "cuda/arch.h"
#include "cuda/device_buffer.h"
#include "nvshmem/nvshmem_lib.h"

namespace symmem {
namespace {

using cuda::DeviceBuffer;

class NvshmemBuffer final : public DeviceBuffer {
 public:
  static symmem_status create(int device, uint64_t size_bytes, symmem_buffer** out) {
    const cuda::Driver* d = nullptr;
    SYMMEM_TRY(cuda::driver(&d));
    const nvshmem::Api* a = nullptr;
    SYMMEM_TRY(nvshmem::api(&a));
    SYMMEM_TRY(refuse_if_aborted("symmem_buffer_alloc (nvshmem_malloc)"));
    // No copy-engine scratch: the ranks agree on each nvshmem_malloc's size before it is made
    // (NvshmemWorld, from SYMMEM_CUDA_PUSH_SCRATCH_BYTES), and those settings are not part of it.
    cuda::Geometry g;
    SYMMEM_TRY(cuda::allocation_geometry(d, device, size_bytes, /*ce_scratch=*/false, &g));
    const uint64_t total = g.total;
    if (cudaSetDevice(device) != cudaSuccess)
      return fail(SYMMEM_ERR_NO_DEVICE, "cudaSetDevice(%d) failed", device);
    void* p = a->malloc(total);
    if (p == nullptr) {
      uint64_t used = 0;
      int live = 0;
      symmem_nvshmem_heap_usage(&used, &live);
      return fail(SYMMEM_ERR_SYSTEM,
                  "nvshmem_malloc(%llu bytes for a %llu-byte buffer) returned NULL: the symmetric "
                  "heap is full or exhausted (%d buffer(s), %llu bytes in use here); raise "
                  "NVSHMEM_SYMMETRIC_SIZE or SYMMEM_NVSHMEM_HEAP_SIZE",
                  static_cast<unsigned long long>(total), static_cast<unsigned long long>(size_bytes),
                  live, static_cast<unsigned long long>(used));
    }
    std::unique_ptr<NvshmemBuffer> b(new NvshmemBuffer());
    b->api_ = a;
    b->heap_ = p;
    nvshmem::heap_allocated(total);
    const symmem_status st =
        b->init_local(d, device, size_bytes, g, reinterpret_cast<CUdeviceptr>(p));
    if (st != SYMMEM_OK) {
      b->skip_free_ = true;  // freeing is collective, and the peers are not freeing now
      return st;
    }
    *out = b.release();
    return SYMMEM_OK;
  }

  ~NvshmemBuffer() override {
    quiesce();
    if (heap_ == nullptr) return;
    nvshmem::heap_freed(total_);
    // nvshmem_free waits for every PE: with a PE known dead it would never return, so the memory
    // stays until the process exits (the heap goes with it).
    if (!aborted() && !skip_free_ && nvshmem::initialized()) api_->free(heap_);
  }

  symmem_status export_fd(int*) override {
    return fail(SYMMEM_ERR_UNSUPPORTED, "an nvshmem buffer has no fd to export: its peers are "
                "reached through NVSHMEM (bind it with symmem_buffer_import_pes)");
  }
  symmem_status import(int, int, const int*) override {
    return fail(SYMMEM_ERR_UNSUPPORTED, "an nvshmem buffer is bound to its group with "
                "symmem_buffer_import_pes, not with fds");
  }
  symmem_status import_pes(int rank, int world, const int* pes) override {
    int my_pe = -1, n_pes = 0;
    SYMMEM_TRY(symmem_nvshmem_pe(&my_pe, &n_pes));
    if (pes[rank] != my_pe)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "pes[%d] is %d, but this process is PE %d", rank,
                  pes[rank], my_pe);
    std::vector<CUdeviceptr> bases(world);
    for (int r = 0; r < world; ++r) {
      if (pes[r] < 0 || pes[r] >= n_pes)
        return fail(SYMMEM_ERR_INVALID_ARGUMENT, "pes[%d] is %d, out of range 0..%d", r, pes[r],
                    n_pes - 1);
      for (int q = 0; q < r; ++q)
        if (pes[q] == pes[r])
          return fail(SYMMEM_ERR_INVALID_ARGUMENT, "ranks %d and %d are both PE %d", q, r, pes[r]);
      void* peer = r == rank ? heap_ : api_->ptr(heap_, pes[r]);
      if (peer == nullptr)
        return fail(SYMMEM_ERR_UNSUPPORTED,
                    "rank %d (PE %d) cannot be reached by loads and stores from this GPU "
                    "(nvshmem_ptr returned NULL: a PE on another node, or without P2P to this "
                    "GPU); symmem's kernels need every peer of the group in reach", r, pes[r]);
      bases[r] = reinterpret_cast<CUdeviceptr>(peer);
    }
    return bind_peers(rank, world, bases, [&](int r) {
      return "rank " + std::to_string(r) + "'s allocation (PE " + std::to_string(pes[r]) + ")";
    });
  }

 private:
  NvshmemBuffer() = default;
  const nvshmem::Api* api_ = nullptr;
  void* heap_ = nullptr;
  bool skip_free_ = false;
};

class NvshmemBackend final : public cuda::DeviceBackend {
 public:
  NvshmemBackend(int device, int count, const char* device_name)
      : DeviceBackend("nvshmem", device, count, device_name) {}
  symmem_status alloc(uint64_t size_bytes, symmem_buffer** out) override {
    *out = nullptr;
    SYMMEM_TRY(nvshmem::require_initialized("symmem_buffer_alloc"));
    return NvshmemBuffer::create(info_.device, size_bytes, out);
  }
};

}  // namespace

symmem_status open_nvshmem_backend(int device, symmem_backend** out) {
  *out = nullptr;
  SYMMEM_TRY(nvshmem::require_initialized("symmem_backend_open(\"nvshmem\")"));
  const int own = nvshmem::init_device();
  if (device != own)
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "device %d: NVSHMEM was initialised on device %d in "
                "this process (one device per PE)", device, own);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    return fail(SYMMEM_ERR_SYSTEM, "cudaGetDeviceProperties(device %d) failed", device);
  SYMMEM_TRY(cuda::require_supported_gpu("nvshmem", device, prop));
  *out = new NvshmemBackend(device, count, prop.name);
  return SYMMEM_OK;
}

}  // namespace symmem
