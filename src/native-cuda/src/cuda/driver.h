// The CUDA driver API, reached only through the runtime's entry-point lookup
// (cudaGetDriverEntryPointByVersion with cudaEnableDefault). <cuda.h> is included for its types
// alone: libsymmem has no link dependency on libcuda, so it loads on machines without a driver.
// Multicast (cuMulticast*) is deliberately absent from this table: it is never called.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include "core/abi.h"

namespace symmem::cuda {

struct Driver {
  decltype(&::cuGetErrorString) GetErrorString = nullptr;
  decltype(&::cuDeviceGet) DeviceGet = nullptr;
  decltype(&::cuDeviceGetAttribute) DeviceGetAttribute = nullptr;
  decltype(&::cuMemGetAllocationGranularity) MemGetAllocationGranularity = nullptr;
  decltype(&::cuMemCreate) MemCreate = nullptr;
  decltype(&::cuMemRelease) MemRelease = nullptr;
  decltype(&::cuMemRetainAllocationHandle) MemRetainAllocationHandle = nullptr;
  decltype(&::cuMemExportToShareableHandle) MemExportToShareableHandle = nullptr;
  decltype(&::cuMemImportFromShareableHandle) MemImportFromShareableHandle = nullptr;
  decltype(&::cuMemAddressReserve) MemAddressReserve = nullptr;
  decltype(&::cuMemAddressFree) MemAddressFree = nullptr;
  decltype(&::cuMemMap) MemMap = nullptr;
  decltype(&::cuMemUnmap) MemUnmap = nullptr;
  decltype(&::cuMemSetAccess) MemSetAccess = nullptr;
  decltype(&::cuMemGetAllocationPropertiesFromHandle) MemGetAllocationPropertiesFromHandle = nullptr;
  decltype(&::cuStreamWriteValue32) StreamWriteValue32 = nullptr;
  decltype(&::cuLaunchKernelEx) LaunchKernelEx = nullptr;
};

// Resolves the table once (thread-safe). On failure: SYMMEM_ERR_NO_DEVICE / SYSTEM with a message
// naming the symbol.
symmem_status driver(const Driver** out);

// "cuMemMap(rank 2's allocation): CUDA_ERROR_INVALID_VALUE (invalid argument)"
symmem_status fail_cu(CUresult r, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
symmem_status fail_rt(cudaError_t e, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Return fail_cu / fail_rt from the enclosing function when a driver / runtime call fails; the
// arguments after the call name it and its subject.
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

// Environment switches read by the backend.
// Pinned memory on `device` that can be exported as a POSIX fd: what every symmetric allocation
// (and the granularity asked for it) describes.
CUmemAllocationProp fd_shareable_device_memory(int device);

bool multicast_disabled();        // SYMMEM_DISABLE_MULTICAST or TORCH_SYMM_MEM_DISABLE_MULTICAST
bool overlapping_devices_allowed();  // SYMMEM_ALLOW_OVERLAPPING_DEVICES

}  // namespace symmem::cuda
