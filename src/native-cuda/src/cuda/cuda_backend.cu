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
#include "cuda/arch.h"
#include "cuda/device_buffer.h"
#include "cuda/driver.h"
#include "cuda/fd_peers.h"
#include "cuda/kernels.h"

namespace symmem::cuda {
namespace {

// The cuda backend's buffer: one cuMemCreate per rank, shared with the peers as a POSIX fd, each
// peer's mapped into this process at import.
class CudaBuffer final : public FdSharedBuffer {
 public:
  static symmem_status create(int device, uint64_t size_bytes, symmem_buffer** out);
  ~CudaBuffer() override;

 private:
  CudaBuffer() : FdSharedBuffer("fd") {}

  CUmemGenericAllocationHandle handle_ = 0;
  bool have_handle_ = false;
  CUdeviceptr own_va_ = 0;
  bool own_mapped_ = false;
};

symmem_status CudaBuffer::create(int device, uint64_t size_bytes, symmem_buffer** out) {
  const Driver* d = nullptr;
  SYMMEM_TRY(driver(&d));
  Geometry g;
  SYMMEM_TRY(allocation_geometry(d, device, size_bytes, /*ce_scratch=*/true, &g));
  const uint64_t total = g.total;
  std::unique_ptr<CudaBuffer> b(new CudaBuffer());
  b->drv_ = d;
  b->device_ = device;
  SYMMEM_RT(cudaSetDevice(device), "cudaSetDevice(%d)", device);

  const CUmemAllocationProp ap = fd_shareable_device_memory(device);
  SYMMEM_CU(d->MemCreate(&b->handle_, total, &ap, 0), "cuMemCreate(%llu bytes, device %d)",
            static_cast<unsigned long long>(total), device);
  b->have_handle_ = true;
  int fd = -1;
  SYMMEM_CU(d->MemExportToShareableHandle(&fd, b->handle_,
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            "cuMemExportToShareableHandle(POSIX fd)");
  b->fd_ = fd;
  SYMMEM_CU(d->MemAddressReserve(&b->own_va_, total, 0, 0, 0),
            "cuMemAddressReserve(%llu bytes)", static_cast<unsigned long long>(total));
  b->total_ = total;  // the destructor frees the reservation from here on
  SYMMEM_CU(d->MemMap(b->own_va_, total, 0, b->handle_, 0), "cuMemMap(own allocation)");
  b->own_mapped_ = true;
  CUmemAccessDesc acc;
  acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  acc.location.id = device;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  SYMMEM_CU(d->MemSetAccess(b->own_va_, total, &acc, 1), "cuMemSetAccess(own allocation)");
  SYMMEM_TRY(b->init_local(d, device, size_bytes, g, b->own_va_));
  *out = b.release();
  return SYMMEM_OK;
}

CudaBuffer::~CudaBuffer() {
  quiesce();  // nothing may still run against these mappings
  if (drv_ != nullptr && own_mapped_) drv_->MemUnmap(own_va_, total_);
  if (drv_ != nullptr && own_va_ != 0) drv_->MemAddressFree(own_va_, total_);
  if (have_handle_) drv_->MemRelease(handle_);
}

class CudaBackend final : public DeviceBackend {
 public:
  CudaBackend(int device, int count, const char* device_name)
      : DeviceBackend("cuda", device, count, device_name) {}
  ~CudaBackend() override { report_kernel_phases(info_.device); }
  symmem_status alloc(uint64_t size_bytes, symmem_buffer** out) override {
    *out = nullptr;
    return CudaBuffer::create(info_.device, size_bytes, out);
  }
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
  SYMMEM_TRY(cuda::require_supported_gpu("cuda", device, prop));
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
