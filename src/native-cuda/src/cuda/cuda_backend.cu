// The "cuda" backend. Compiled by nvcc only when CMake found it. Only the CUDA runtime is used
// here, and it is linked statically: the runtime loads libcuda.so itself at first use, so
// libsymmem loads (and the host backend works) on machines without a driver. Driver API calls
// (for the VMM work to come) must go through cudaGetDriverEntryPointByVersion, never by linking
// libcuda.
#include <cuda_runtime.h>

#include <cstring>

#include "core/backend.h"
#include "core/status.h"

namespace symmem {
namespace {

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
  symmem_status alloc(uint64_t, symmem_buffer** out) override {
    *out = nullptr;
    return fail(SYMMEM_ERR_UNSUPPORTED,
                "cuda symmetric buffers are not implemented yet (see issue 4)");
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

symmem_status cuda_device_count(int* out) {
  query_count(out);
  return SYMMEM_OK;  // "no driver" and "no GPU" both simply mean 0 devices here
}

symmem_status open_cuda_backend(int device, symmem_backend** out) {
  *out = nullptr;
  int count = 0;
  cudaError_t err = query_count(&count);
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
  *out = new CudaBackend(device, count, prop.name);
  return SYMMEM_OK;
}

}  // namespace symmem
