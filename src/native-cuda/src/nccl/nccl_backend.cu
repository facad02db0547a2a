// The "nccl" backend: symmetric buffers in memory from ncclMemAlloc. The layout, kernels and
// signals are the cuda backend's (cuda/device_buffer.h), so symmem's collectives run on this memory
// exactly as on its own. ncclMemAlloc makes a cuMem allocation exportable as a POSIX fd; the peers
// get that fd over symmem's channel and map it (cuda/FdSharedBuffer), as with the cuda backend.
//
// Why not NCCL's device API for the peer addresses: on NCCL 2.28 (what PyTorch ships) peer pointers
// of a window exist only as inline device functions of nccl_device.h reading NCCL's private window
// layout, which would tie libsymmem to one NCCL's headers at build time; the host query
// (ncclGetPeerDevicePointer) needs 2.29. Both ways end in an ordinary mapping of the same physical
// memory, so the kernels run at the same speed either way (docs/nccl.md has the figures).
#include <cuda_runtime.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "core/abort.h"
#include "core/status.h"
#include "core/validate.h"
#include "cuda/arch.h"
#include "cuda/device_buffer.h"
#include "cuda/fd_peers.h"
#include "nccl/nccl_internal.h"

namespace symmem {
namespace {

using cuda::fail_rt;

class NcclMemBuffer final : public cuda::FdSharedBuffer {
 public:
  static symmem_status create(const nccl::Api* a, int device, uint64_t size_bytes,
                              symmem_buffer** out) {
    const cuda::Driver* d = nullptr;
    SYMMEM_TRY(cuda::driver(&d));
    cuda::Geometry g;
    SYMMEM_TRY(cuda::allocation_geometry(d, device, size_bytes, /*ce_scratch=*/true, &g));
    const uint64_t total = g.total;
    SYMMEM_RT(cudaSetDevice(device), "cudaSetDevice(%d)", device);
    void* p = nullptr;
    int r = a->MemAlloc(&p, total);
    if (r != nccl::kSuccess || p == nullptr)
      return nccl::fail_nccl(r, nullptr, "ncclMemAlloc(%llu bytes for a %llu-byte buffer, device %d)",
                             static_cast<unsigned long long>(total),
                             static_cast<unsigned long long>(size_bytes), device);
    std::unique_ptr<NcclMemBuffer> b(new NcclMemBuffer());
    b->api_ = a;
    b->memory_ = p;
    b->drv_ = d;
    b->device_ = device;
    const CUdeviceptr base = reinterpret_cast<CUdeviceptr>(p);
    SYMMEM_TRY(cuda::export_allocation_fd(d, base, "ncclMemAlloc", &b->fd_));
    SYMMEM_TRY(b->init_local(d, device, size_bytes, g, base));
    *out = b.release();
    return SYMMEM_OK;
  }

  ~NcclMemBuffer() override {
    quiesce();  // nothing may still run against this memory
    if (memory_ != nullptr) {
      cudaSetDevice(device_);
      api_->MemFree(memory_);
      cudaGetLastError();
    }
  }

 private:
  NcclMemBuffer() : FdSharedBuffer("ncclMemAlloc fd") {}
  const nccl::Api* api_ = nullptr;
  void* memory_ = nullptr;
};

class NcclBackend final : public cuda::DeviceBackend {
 public:
  NcclBackend(const nccl::Api* a, int device, int count, const char* device_name)
      : DeviceBackend("nccl", device, count, device_name), api_(a) {}
  symmem_status alloc(uint64_t size_bytes, symmem_buffer** out) override {
    *out = nullptr;
    SYMMEM_TRY(refuse_if_aborted("symmem_buffer_alloc (ncclMemAlloc)"));
    return NcclMemBuffer::create(api_, info_.device, size_bytes, out);
  }

 private:
  const nccl::Api* api_;
};

}  // namespace

symmem_status open_nccl_backend(int device, symmem_backend** out) {
  *out = nullptr;
  const nccl::Api* a = nullptr;
  SYMMEM_TRY(nccl::require_loaded("symmem_backend_open(\"nccl\")", &a));
  if (a->MemAlloc == nullptr || a->MemFree == nullptr)
    return fail(SYMMEM_ERR_UNSUPPORTED,
                "symmem_backend_open(\"nccl\"): the loaded NCCL (%s) has no ncclMemAlloc/ncclMemFree "
                "(NCCL 2.19 or later has them; symmetric windows need 2.27)",
                symmem_nccl_library_path());
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return fail(SYMMEM_ERR_NO_DEVICE, "symmem_backend_open(\"nccl\"): no CUDA device");
  }
  if (device < 0 || device >= count)
    return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                "device %d is out of range 0..%d (this process sees %d CUDA device(s))", device,
                count - 1, count);
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return fail(SYMMEM_ERR_SYSTEM, "cudaGetDeviceProperties(device %d) failed", device);
  }
  SYMMEM_TRY(cuda::require_supported_gpu("nccl", device, prop));
  *out = new NcclBackend(a, device, count, prop.name);
  return SYMMEM_OK;
}

}  // namespace symmem
