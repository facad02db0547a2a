// Compiled instead of src/nccl when CMake did not find nvcc: NCCL needs CUDA streams and devices,
// so a build without CUDA keeps the NCCL entry points of the ABI but every one of them reports that
// this build cannot do it.
#include "core/abi.h"
#include "core/status.h"

namespace {
symmem_status no_cuda(const char* call) {
  return symmem::fail(SYMMEM_ERR_UNSUPPORTED,
                      "%s: this libsymmem was built without CUDA (nvcc not found at build time), "
                      "so it cannot use NCCL",
                      call);
}
}  // namespace

extern "C" {
symmem_status symmem_nccl_load(const char* const*, int) { return no_cuda("symmem_nccl_load"); }
int symmem_nccl_loaded(void) { return 0; }
const char* symmem_nccl_library_path(void) { return ""; }
const char* symmem_nccl_runtime_connect(void) { return ""; }
symmem_status symmem_nccl_version(int*, int*, int*, int*) { return no_cuda("symmem_nccl_version"); }
symmem_status symmem_nccl_unique_id(uint8_t*) { return no_cuda("symmem_nccl_unique_id"); }
symmem_status symmem_nccl_comm_init_rank(int, const uint8_t*, int, int, const char*, int,
                                         symmem_nccl_comm** out) {
  if (out != nullptr) *out = nullptr;
  return no_cuda("symmem_nccl_comm_init_rank");
}
symmem_status symmem_nccl_comm_abort(symmem_nccl_comm*, const char*) { return no_cuda("symmem_nccl_comm_abort"); }
int symmem_nccl_comm_aborted(symmem_nccl_comm*) { return 0; }
symmem_status symmem_nccl_comm_destroy(symmem_nccl_comm* comm, int) {
  return comm == nullptr ? SYMMEM_OK : no_cuda("symmem_nccl_comm_destroy");
}
symmem_status symmem_nccl_comm_synchronize(symmem_nccl_comm*, void*, int) {
  return no_cuda("symmem_nccl_comm_synchronize");
}
symmem_status symmem_nccl_all_reduce(symmem_nccl_comm*, const void*, void*, uint64_t, int, int, void*, int) {
  return no_cuda("symmem_nccl_all_reduce");
}
symmem_status symmem_nccl_all_reduce_repeated(symmem_nccl_comm*, const void*, void*, uint64_t, int, int, void*,
                                              int, int) {
  return no_cuda("symmem_nccl_all_reduce_repeated");
}
symmem_status symmem_nccl_reduce(symmem_nccl_comm*, const void*, void*, uint64_t, int, int, int, void*, int) {
  return no_cuda("symmem_nccl_reduce");
}
symmem_status symmem_nccl_broadcast(symmem_nccl_comm*, const void*, void*, uint64_t, int, int, void*, int) {
  return no_cuda("symmem_nccl_broadcast");
}
symmem_status symmem_nccl_all_gather(symmem_nccl_comm*, const void*, void*, uint64_t, int, void*, int) {
  return no_cuda("symmem_nccl_all_gather");
}
symmem_status symmem_nccl_reduce_scatter(symmem_nccl_comm*, const void*, void*, uint64_t, int, int, void*, int) {
  return no_cuda("symmem_nccl_reduce_scatter");
}
symmem_status symmem_nccl_group_start(void) { return no_cuda("symmem_nccl_group_start"); }
symmem_status symmem_nccl_group_end(int) { return no_cuda("symmem_nccl_group_end"); }
symmem_status symmem_nccl_window_register(symmem_nccl_comm*, symmem_buffer*, int, int,
                                          symmem_nccl_window** out) {
  if (out != nullptr) *out = nullptr;
  return no_cuda("symmem_nccl_window_register");
}
symmem_status symmem_nccl_window_deregister(symmem_nccl_window* window, int) {
  return window == nullptr ? SYMMEM_OK : no_cuda("symmem_nccl_window_deregister");
}
}  // extern "C"
