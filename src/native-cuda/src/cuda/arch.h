// What the GPU of a device can run, decided at run time: the library carries machine code for
// compute capability 8.0, 8.9, 9.0 and 10.0 and PTX for newer GPUs (CMakeLists.txt), and some of
// what the kernels use exists from 9.0 on only.
#pragma once
#include <cuda_runtime.h>

#include "symmem.h"

namespace symmem::cuda {

// The oldest compute capability (major x 10 + minor) the kernels are built for: 8.0 (A100).
constexpr int kMinComputeCapability = 80;

// SYMMEM_OK for a GPU of compute capability 8.0 or newer; else SYMMEM_ERR_UNSUPPORTED naming the
// backend, the device, its model and its compute capability.
symmem_status require_supported_gpu(const char* backend, int device, const cudaDeviceProp& prop);

// Programmatic dependent launch (griddepcontrol, compute capability 9.0+) on `device` (the current
// device when negative). Asked once per device, then a load of a cached flag.
bool has_programmatic_launch(int device);

}  // namespace symmem::cuda
