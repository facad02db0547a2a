// Shared by the NCCL loader and the communicator code.
#pragma once
#include "core/abi.h"
#include "nccl/nccl_api.h"

namespace symmem::nccl {

// SYMMEM_ERR_STATE "<call>: NCCL is not loaded ..." until symmem_nccl_load has succeeded.
symmem_status require_loaded(const char* call, const Api** out);

// SYMMEM_ERR_SYSTEM (or INVALID_ARGUMENT for ncclInvalidArgument/ncclInvalidUsage) with
// "<what>: ncclX (NCCL's text): <ncclGetLastError(comm)>".
symmem_status fail_nccl(int r, nccl_comm_t comm, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

}  // namespace symmem::nccl
