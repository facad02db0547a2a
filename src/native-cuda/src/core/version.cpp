// Library identity: what Java checks before trusting the rest of the ABI.
#include "core/status.h"

#ifndef SYMMEM_VERSION_STRING
#error "SYMMEM_VERSION_STRING is set by CMake from project(VERSION)"
#endif

extern "C" {

const char* symmem_last_error(void) { return symmem::last_error(); }
const char* symmem_version(void) { return SYMMEM_VERSION_STRING; }
int symmem_abi_version(void) { return SYMMEM_ABI_VERSION; }
// SYMMEM_WITH_CUDA is 1 only when CMake found nvcc and compiled src/cuda.
int symmem_built_with_cuda(void) { return SYMMEM_WITH_CUDA; }

}  // extern "C"
