// Shared by the NCCL loader, the communicator code and the windows.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "core/abi.h"
#include "core/backend.h"
#include "core/deadline.h"
#include "nccl/nccl_api.h"

struct symmem_nccl_comm {
  symmem::nccl::nccl_comm_t handle = nullptr;  // null once aborted (NCCL reclaims it)
  int nranks = 0;
  int rank = 0;
  int device = -1;  // -1: the device that was current at init (never changed by us)
  std::string label;  // "group 'world'" or "communicator of 4 ranks"
  // One NCCL call at a time on this communicator, including the polling waits. The abort paths
  // only try_lock it: a thread that holds it is polling and sees abort_requested within a turn.
  std::mutex mu;
  std::atomic<bool> abort_requested{false};
  std::string requested_reason;  // guarded by g_registry_mutex
  bool aborted = false;
  std::string aborted_why;
  // The last operation, for messages: a collective's fields are stored as they are (formatting a text
  // on every call cost a few hundred nanoseconds on the hot path); other operations set the text.
  std::string last_op = "no operation yet";
  const char* last_name = nullptr;  // non-null: the last operation was this collective
  int last_dtype = 0, last_opcode = -1, last_root = -1;
  uint64_t last_count = 0;
  cudaEvent_t event = nullptr;  // completion marker of synchronize, created on first use
  std::atomic<int> in_group{0};  // used inside an open ncclGroupStart/End on some thread
  std::vector<symmem_nccl_window*> windows;  // registered and not yet deregistered (guarded by mu)
};

// An NCCL window over one symmem buffer's own allocation (nccl/nccl_window.cpp).
struct symmem_nccl_window {
  symmem_nccl_comm* comm = nullptr;  // null once orphaned: its communicator was aborted or destroyed
  symmem_buffer* buffer = nullptr;
  symmem::nccl::nccl_window_t handle = nullptr;
  uint64_t bytes = 0;
  int flags = 0;
};

namespace symmem::nccl {

// SYMMEM_ERR_STATE "<call>: NCCL is not loaded ..." until symmem_nccl_load has succeeded.
symmem_status require_loaded(const char* call, const Api** out);

// SYMMEM_ERR_SYSTEM (or INVALID_ARGUMENT for ncclInvalidArgument/ncclInvalidUsage) with
// "<what>: ncclX (NCCL's text): <ncclGetLastError(comm)>".
symmem_status fail_nccl(int r, nccl_comm_t comm, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Makes the communicator's device current for the calls of one scope, and restores the caller's.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (device < 0) return;
    if (cudaGetDevice(&prev_) != cudaSuccess) {
      cudaGetLastError();
      prev_ = -1;
    }
    if (prev_ != device) {
      err_ = cudaSetDevice(device);
      changed_ = err_ == cudaSuccess && prev_ >= 0;
      if (err_ != cudaSuccess) cudaGetLastError();
    }
  }
  ~DeviceScope() {
    if (changed_) cudaSetDevice(prev_);
  }
  cudaError_t error() const { return err_; }

 private:
  int prev_ = -1;
  bool changed_ = false;
  cudaError_t err_ = cudaSuccess;
};

symmem_status fail_device(cudaError_t e, int device, const std::string& what);

// "allReduce(fp32 sum, 7 elements) on group 'world' (rank 0 of 2)"
std::string where(const symmem_nccl_comm* c, const std::string& op);
// Refuses work on an aborted communicator or in an aborted process (aborting it then).
symmem_status usable(symmem_nccl_comm* c, const std::string& op);
std::string requested_reason(symmem_nccl_comm* c);
// Calls ncclCommAbort once and orphans the windows. Caller holds c->mu.
void abort_locked(symmem_nccl_comm* c, const std::string& why);
// The windows no longer belong to NCCL (it releases them with the communicator): their buffers may
// be freed, and deregistering them only frees the record. Caller holds c->mu.
void orphan_windows(symmem_nccl_comm* c);

enum class Wait { kDone, kError, kTimeout, kAborted };
// Polls ncclCommGetAsyncError until it leaves ncclInProgress, the deadline passes or an abort is
// requested. *result gets the last NCCL result. Caller holds c->mu.
Wait poll_async(const Api* a, symmem_nccl_comm* c, const Deadline& deadline, int* result);
// Turns a Wait that is not kDone into an aborted communicator and a message naming the operation,
// the communicator, the rank and the deadline. Caller holds c->mu.
symmem_status fail_wait(Wait w, int r, symmem_nccl_comm* c, const std::string& op, int timeout_ms,
                        const char* what_did_not_finish);

}  // namespace symmem::nccl
