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
  // The communicator every collective, group and window uses; null once aborted (NCCL reclaims it).
  // BLOCKING when `parent` is set (a split of the parent), else the non-blocking one of the init.
  symmem::nccl::nccl_comm_t handle = nullptr;
  // The non-blocking communicator of the init, kept as the data communicator's abort lever: the
  // split shares NCCL's abort flag with it (splitShare), and no thread ever calls into it after the
  // split, so ncclCommAbort(parent) from any thread ends a blocking call stuck on `handle` (see
  // pull_lever). Null when the library has no ncclCommSplit, or once aborted. Guarded by lever_mu.
  symmem::nccl::nccl_comm_t parent = nullptr;
  std::mutex lever_mu;
  std::atomic<bool> lever_pulled{false};
  // Non-zero while a thread is inside a blocking NCCL call on `handle`: that call's deadline
  // (now_ns clock). The watchdog pulls the lever when it passes; an abort pulls it at once.
  std::atomic<int64_t> busy_until_ns{0};
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

// Makes `device` (>= 0; -1: the device current at init, nothing to do) the calling thread's current
// device and LEAVES it current, as the cuda backend's calls do (DeviceBuffer::set_device): a thread
// that keeps calling on one communicator pays one cudaGetDevice per call, where switching there and
// back paid two cudaSetDevice per call on a thread whose device was another (NCCL's own blocking
// launch then restores the caller's device too, so it would pay them again inside). No per-thread
// cache of the device: the caller (or another library) may change it between calls, and a Java
// virtual thread may run on another carrier thread at its next call.
inline cudaError_t use_device(int device) {
  if (device < 0) return cudaSuccess;
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == device) return cudaSuccess;
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) cudaGetLastError();  // not sticky: keep it out of the next call's status
  return e;
}

symmem_status fail_device(cudaError_t e, int device, const std::string& what);

// "allReduce(fp32 sum, 7 elements) on group 'world' (rank 0 of 2)"
std::string where(const symmem_nccl_comm* c, const std::string& op);
// Refuses work on an aborted communicator or in an aborted process (aborting it then).
symmem_status usable(symmem_nccl_comm* c, const std::string& op);
std::string requested_reason(symmem_nccl_comm* c);
// Calls ncclCommAbort once (data communicator and lever) and orphans the windows. Caller holds c->mu.
void abort_locked(symmem_nccl_comm* c, const std::string& why);
// Aborts c's parent (at most once, from any thread, without c->mu): raises the abort flag it shares
// with the blocking data communicator, so that a call blocked on it returns with an error.
void pull_lever(symmem_nccl_comm* c);
// Runs one NCCL call on c->handle that may block on a blocking communicator (a first collective
// connects peers, window registration is collective, finalize waits for the work): marked busy until
// `deadline` so that the watchdog or an abort can end it. After it, lever_wait says whether it was.
// busy_until_ns while the watchdog pulls the lever of a call that passed its deadline. The watchdog
// claims the call by compare-and-swap, so a call that returns just as its deadline passes is either
// claimed (and fails) or not (and the lever stays down): never a lever pulled under a call that
// already reported success.
constexpr int64_t kBusyClaimed = -1;
// Ends a busy period; if the watchdog claimed it, waits the few instructions until lever_pulled shows.
void end_busy(symmem_nccl_comm* c);
template <class F>
int call_busy(symmem_nccl_comm* c, const Deadline& deadline, F f) {
  c->busy_until_ns.store(deadline.end_ns());
  int r = f();
  end_busy(c);
  return r;
}
// The windows no longer belong to NCCL (it releases them with the communicator): their buffers may
// be freed, and deregistering them only frees the record. Caller holds c->mu.
void orphan_windows(symmem_nccl_comm* c);

enum class Wait { kDone, kError, kTimeout, kAborted };
// kDone when the lever was not pulled, else why it was (an abort request, or the deadline).
Wait lever_wait(symmem_nccl_comm* c);
// Polls ncclCommGetAsyncError until it leaves ncclInProgress, the deadline passes or an abort is
// requested. *result gets the last NCCL result. Caller holds c->mu.
Wait poll_async(const Api* a, symmem_nccl_comm* c, const Deadline& deadline, int* result);
// Turns a Wait that is not kDone into an aborted communicator and a message naming the operation,
// the communicator, the rank and the deadline. Caller holds c->mu.
symmem_status fail_wait(Wait w, int r, symmem_nccl_comm* c, const std::string& op, int timeout_ms,
                        const char* what_did_not_finish);

}  // namespace symmem::nccl
