// Compiled instead of src/cuda when CMake did not find nvcc: the ABI stays the same, "cuda" just
// reports that this build cannot do it.
#include "core/backend.h"
#include "core/status.h"

namespace symmem {

symmem_status open_cuda_backend(int, symmem_backend** out) {
  *out = nullptr;
  return fail(SYMMEM_ERR_UNSUPPORTED,
              "this libsymmem was built without CUDA (nvcc not found at build time)");
}

symmem_status cuda_device_count(int* out) {
  *out = 0;
  return SYMMEM_OK;
}

symmem_status cuda_topology(symmem_topology*) { return SYMMEM_OK; }  // device_count stays 0

symmem_status open_nvshmem_backend(int, symmem_backend** out) {
  *out = nullptr;
  return fail(SYMMEM_ERR_UNSUPPORTED,
              "this libsymmem was built without CUDA (nvcc not found at build time)");
}

symmem_status open_nccl_backend(int, symmem_backend** out) {
  *out = nullptr;
  return fail(SYMMEM_ERR_UNSUPPORTED,
              "this libsymmem was built without CUDA (nvcc not found at build time)");
}

}  // namespace symmem
