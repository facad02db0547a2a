#include "cuda/arch.h"

#include <atomic>

#include "core/status.h"

namespace symmem::cuda {

namespace {
constexpr int kCachedDevices = 64;
enum Known : int { kNotAsked = 0, kWithout = 1, kWith = 2 };
// Per device; zero-initialised (kNotAsked), so no thread has to set the cache up first.
std::atomic<int> g_programmatic_launch[kCachedDevices];

int compute_capability(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return major * 10 + minor;
}
}  // namespace

symmem_status require_supported_gpu(const char* backend, int device, const cudaDeviceProp& prop) {
  const int cc = prop.major * 10 + prop.minor;
  if (cc >= kMinComputeCapability) return SYMMEM_OK;
  return fail(SYMMEM_ERR_UNSUPPORTED,
              "symmem_backend_open(\"%s\"): device %d (%s) has compute capability %d.%d; symmem's "
              "kernels need 8.0 or newer (A100, L40S, H100, H200, B200 and later)",
              backend, device, prop.name, prop.major, prop.minor);
}

bool has_programmatic_launch(int device) {
  if (device < 0 && cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (device >= kCachedDevices) return compute_capability(device) >= 90;
  const int known = g_programmatic_launch[device].load(std::memory_order_relaxed);
  if (known != kNotAsked) return known == kWith;
  const int cc = compute_capability(device);
  // Two threads may both ask: they get the same answer. A failed query is asked again next time.
  if (cc > 0) g_programmatic_launch[device].store(cc >= 90 ? kWith : kWithout, std::memory_order_relaxed);
  return cc >= 90;
}

}  // namespace symmem::cuda
