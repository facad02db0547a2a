#include "cuda/driver.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "core/env_flag.h"
#include "core/status.h"

namespace symmem::cuda {
namespace {

// The ABI version each symbol is resolved at (12.0: the VMM and stream-memop entry points as they
// are declared in this toolkit's <cuda.h>).
constexpr unsigned kDriverApiVersion = 12000;

std::string vfmt(const char* fmt, va_list ap) {
  char buf[768];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  return buf;
}

}  // namespace

symmem_status driver(const Driver** out) {
  static Driver table;
  static symmem_status status = SYMMEM_OK;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    auto get = [](const char* name, void** fn) -> bool {
      if (status != SYMMEM_OK) return false;
      cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
      cudaError_t e = cudaGetDriverEntryPointByVersion(name, fn, kDriverApiVersion,
                                                       cudaEnableDefault, &q);
      if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || *fn == nullptr) {
        status = e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ? SYMMEM_ERR_NO_DEVICE
                                                                            : SYMMEM_ERR_SYSTEM;
        error = std::string("cudaGetDriverEntryPointByVersion(\"") + name + "\"): " +
                (e != cudaSuccess ? cudaGetErrorString(e)
                 : q == cudaDriverEntryPointVersionNotSufficent
                     ? "the driver is older than CUDA 12.0"
                     : "symbol not found in the driver");
        cudaGetLastError();
        return false;
      }
      return true;
    };
#define SYMMEM_GET(field, sym) get(#sym, reinterpret_cast<void**>(&table.field))
    SYMMEM_GET(GetErrorString, cuGetErrorString);
    SYMMEM_GET(DeviceGet, cuDeviceGet);
    SYMMEM_GET(DeviceGetAttribute, cuDeviceGetAttribute);
    SYMMEM_GET(MemGetAllocationGranularity, cuMemGetAllocationGranularity);
    SYMMEM_GET(MemCreate, cuMemCreate);
    SYMMEM_GET(MemRelease, cuMemRelease);
    SYMMEM_GET(MemRetainAllocationHandle, cuMemRetainAllocationHandle);
    SYMMEM_GET(MemExportToShareableHandle, cuMemExportToShareableHandle);
    SYMMEM_GET(MemImportFromShareableHandle, cuMemImportFromShareableHandle);
    SYMMEM_GET(MemAddressReserve, cuMemAddressReserve);
    SYMMEM_GET(MemAddressFree, cuMemAddressFree);
    SYMMEM_GET(MemMap, cuMemMap);
    SYMMEM_GET(MemUnmap, cuMemUnmap);
    SYMMEM_GET(MemSetAccess, cuMemSetAccess);
    SYMMEM_GET(MemGetAllocationPropertiesFromHandle, cuMemGetAllocationPropertiesFromHandle);
    SYMMEM_GET(StreamWriteValue32, cuStreamWriteValue32);
    SYMMEM_GET(LaunchKernelEx, cuLaunchKernelEx);
#undef SYMMEM_GET
  });
  if (status != SYMMEM_OK) return fail(status, "%s", error.c_str());
  *out = &table;
  return SYMMEM_OK;
}

symmem_status fail_cu(CUresult r, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string what = vfmt(fmt, ap);
  va_end(ap);
  const char* text = nullptr;
  const Driver* d = nullptr;
  if (driver(&d) == SYMMEM_OK) d->GetErrorString(r, &text);
  return fail(r == CUDA_ERROR_OUT_OF_MEMORY ? SYMMEM_ERR_SYSTEM : SYMMEM_ERR_SYSTEM,
              "%s: CUresult %d (%s)", what.c_str(), static_cast<int>(r),
              text != nullptr ? text : "unknown");
}

symmem_status fail_rt(cudaError_t e, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string what = vfmt(fmt, ap);
  va_end(ap);
  cudaGetLastError();  // do not let a non-sticky error resurface later
  return fail(SYMMEM_ERR_SYSTEM, "%s: %s (%s)", what.c_str(), cudaGetErrorName(e),
              cudaGetErrorString(e));
}

CUmemAllocationProp fd_shareable_device_memory(int device) {
  CUmemAllocationProp ap;
  std::memset(&ap, 0, sizeof ap);
  ap.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.location.id = device;
  ap.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return ap;
}

bool multicast_disabled() {
  return env_flag_is_true("SYMMEM_DISABLE_MULTICAST") || env_flag_is_true("TORCH_SYMM_MEM_DISABLE_MULTICAST");
}

bool overlapping_devices_allowed() { return env_flag_is_true("SYMMEM_ALLOW_OVERLAPPING_DEVICES"); }

}  // namespace symmem::cuda
