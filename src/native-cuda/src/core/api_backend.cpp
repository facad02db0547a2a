// C entry points for backends: pick the implementation by name.
#include <cstring>

#include "core/backend.h"
#include "core/hot_count.h"
#include "core/tunables.h"
#include "core/validate.h"

using namespace symmem;

extern "C" {

symmem_status symmem_backend_open(const char* name, int device, symmem_backend** out) {
  return guarded("symmem_backend_open", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(name);
    SYMMEM_REQUIRE_NOT_NULL(out);
    *out = nullptr;
    if (std::strcmp(name, "host") == 0) {
      SYMMEM_TRY(check_tunables("host"));
      return open_host_backend(out);  // device is ignored
    }
    if (std::strcmp(name, "cuda") == 0) {
      SYMMEM_TRY(check_tunables("cuda"));
      return open_cuda_backend(device, out);
    }
    if (std::strcmp(name, "nvshmem") == 0) return open_nvshmem_backend(device, out);
    if (std::strcmp(name, "nccl") == 0) {
      SYMMEM_TRY(check_tunables("cuda"));  // its buffers run the cuda kernels
      return open_nccl_backend(device, out);
    }
    return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                "backend name '%s' is unknown; the allowed names are \"host\", \"cuda\", "
                "\"nvshmem\" and \"nccl\"", name);
  });
}

symmem_status symmem_backend_close(symmem_backend* backend) {
  if (backend != nullptr) {
    // Local allocations still held (symmem_local_alloc) go with their backend.
    std::lock_guard<std::mutex> lock(backend->locals_mutex);
    for (auto& entry : backend->locals) backend->local_free(const_cast<void*>(entry.first));
    backend->locals.clear();
  }
  delete backend;  // NULL is a no-op
  hot::report();  // only in a build with SYMMEM_HOT_PATH_COUNTERS
  return SYMMEM_OK;
}

symmem_status symmem_backend_get_info(symmem_backend* backend, symmem_backend_info* out) {
  SYMMEM_REQUIRE_NOT_NULL(backend);
  SYMMEM_REQUIRE_NOT_NULL(out);
  *out = backend->info();
  return SYMMEM_OK;
}

symmem_status symmem_cuda_device_count(int* out) {
  SYMMEM_REQUIRE_NOT_NULL(out);
  return cuda_device_count(out);
}

}  // extern "C"
