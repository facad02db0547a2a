// NVSHMEM's host library, opened at run time (never linked): the entry points symmem uses, the
// parts of NVSHMEM's ABI they take (declared here from the published layouts, checked by size),
// and the process's one NVSHMEM world (loaded, initialised, finalised).
//
// Only the host API is used. The header's nvshmemx_init_attr is a static inline function that
// calls into NVSHMEM's static device library (libnvshmem_device.a, linked with -rdc), which would
// tie libsymmem to one NVSHMEM build at link time; nvshmemx_hostlib_init_attr, exported by
// libnvshmem_host.so, initialises the same runtime (bootstrap, symmetric heap, peer mappings)
// without device state. The device work is symmem's own kernels on nvshmem_ptr addresses.
#pragma once
#include <cstdint>
#include <string>

#include "core/abi.h"

namespace symmem::nvshmem {

// ---- NVSHMEM ABI (v3.x; the versions in the structs are what NVSHMEM checks) ----------------
struct UniqueId {  // nvshmemx_uniqueid_t (v1)
  int version;
  char internal[124];
};
static_assert(sizeof(UniqueId) == SYMMEM_NVSHMEM_UNIQUEID_BYTES, "nvshmemx_uniqueid_t is 128 bytes");

struct UniqueIdArgs {  // nvshmemx_uniqueid_args_t (v1)
  int version;
  UniqueId* id;
  int myrank;
  int nranks;
};
static_assert(sizeof(UniqueIdArgs) == 24, "nvshmemx_uniqueid_args_t is 24 bytes");

struct InitArgs {  // nvshmemx_init_args_t (v2)
  int version;
  UniqueIdArgs uid_args;
  int cuda_device_id;  // -1: the current device
  char content[92];
};
static_assert(sizeof(InitArgs) == 128, "nvshmemx_init_args_t is 128 bytes");

struct InitAttr {  // nvshmemx_init_attr_t (v2)
  int version;
  void* mpi_comm;
  InitArgs args;
};
static_assert(sizeof(InitAttr) == 144, "nvshmemx_init_attr_t is 144 bytes");

constexpr unsigned kInitWithUniqueId = 1u << 3;  // NVSHMEMX_INIT_WITH_UNIQUEID
constexpr int kTeamWorld = 0;                    // NVSHMEM_TEAM_WORLD
constexpr int kTeamInvalid = -1;                 // NVSHMEM_TEAM_INVALID

struct Api {
  int (*get_uniqueid)(UniqueId*) = nullptr;
  int (*set_attr_uniqueid_args)(int, int, const UniqueId*, InitAttr*) = nullptr;
  int (*hostlib_init_attr)(unsigned, InitAttr*) = nullptr;
  void (*hostlib_finalize)() = nullptr;
  void* (*malloc)(size_t) = nullptr;
  void (*free)(void*) = nullptr;
  void* (*ptr)(const void*, int) = nullptr;
  int (*my_pe)() = nullptr;
  int (*n_pes)() = nullptr;
  void (*vendor_version)(int*, int*, int*) = nullptr;
  int (*team_split_strided)(int32_t, int, int, int, const void*, long, int32_t*) = nullptr;
  void (*team_destroy)(int32_t) = nullptr;
  int (*team_translate_pe)(int32_t, int, int32_t) = nullptr;
  int (*team_n_pes)(int32_t) = nullptr;
};

// The loaded library's entry points, or SYMMEM_ERR_STATE naming what to call first.
symmem_status api(const Api** out);
// The path the library was loaded from ("" before).
std::string loaded_path();
// Initialised and not finalised: the heap exists and PEs are known.
bool initialized();
// The CUDA device NVSHMEM was initialised on (-1 before).
int init_device();
// SYMMEM_OK when initialised, else SYMMEM_ERR_STATE saying what `call` needs.
symmem_status require_initialized(const char* call);

// Bookkeeping of the live buffers on the heap (for heap usage and to refuse finalize).
void heap_allocated(uint64_t bytes);
void heap_freed(uint64_t bytes);

}  // namespace symmem::nvshmem
