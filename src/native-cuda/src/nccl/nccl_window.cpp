// NCCL windows over symmem buffers: ncclCommWindowRegister of a buffer's whole own allocation (signal
// pad, then data), so that NCCL's own collectives on the data may use its symmetric kernels. The
// data starts at the same offset in every rank's window (the pad region is the same on every rank),
// which NCCL_WIN_COLL_SYMMETRIC requires.
//
// Registration is collective over the communicator: on the blocking data communicator it waits in
// this thread, marked busy so that the watchdog ends it at the deadline (nccl_comm.cpp); on a
// non-blocking one it finishes in NCCL's threads and is polled. Either way the deadline aborts the
// communicator. NCCL answers success WITHOUT a window when the communicator cannot do symmetric
// memory; that is reported as SYMMEM_ERR_UNSUPPORTED with the conditions NCCL needs.
#include <algorithm>
#include <string>

#include "core/abi.h"
#include "core/abort.h"
#include "core/status.h"
#include "core/validate.h"
#include "nccl/nccl_api.h"
#include "nccl/nccl_internal.h"

namespace symmem::nccl {

void orphan_windows(symmem_nccl_comm* c) {
  for (symmem_nccl_window* w : c->windows) {
    w->comm = nullptr;
    w->handle = nullptr;
    w->buffer->nccl_windows.fetch_sub(1);
  }
  c->windows.clear();
}

namespace {

symmem_status require_windows(const Api* a, const char* call) {
  if (a->CommWindowRegister != nullptr && a->CommWindowDeregister != nullptr) return SYMMEM_OK;
  int code = 0, major = 0, minor = 0, patch = 0;
  symmem_nccl_version(&code, &major, &minor, &patch);
  return fail(SYMMEM_ERR_UNSUPPORTED,
              "%s: the loaded NCCL %d.%d.%d (%s) has no ncclCommWindowRegister: symmetric windows "
              "need NCCL 2.27 or later (set SYMMEM_NCCL_LIBRARY to a newer libnccl.so.2)",
              call, major, minor, patch, symmem_nccl_library_path());
}

}  // namespace
}  // namespace symmem::nccl

using namespace symmem;
using namespace symmem::nccl;

extern "C" {

symmem_status symmem_nccl_window_register(symmem_nccl_comm* comm, symmem_buffer* buffer, int flags,
                                          int timeout_ms, symmem_nccl_window** out) {
  return guarded("symmem_nccl_window_register", [&]() -> symmem_status {
    const char* call = "symmem_nccl_window_register";
    if (out == nullptr) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: out is NULL", call);
    *out = nullptr;
    if (comm == nullptr) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: comm is NULL", call);
    if (buffer == nullptr) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: buffer is NULL", call);
    if (flags != 0 && flags != kWinCollSymmetric)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                  "%s: flags %d: only 0 (NCCL_WIN_DEFAULT) and 1 (NCCL_WIN_COLL_SYMMETRIC) are "
                  "supported", call, flags);
    if (timeout_ms <= 0)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: timeout_ms must be > 0, got %d", call, timeout_ms);
    const Api* a = nullptr;
    SYMMEM_TRY(require_loaded(call, &a));
    SYMMEM_TRY(require_windows(a, call));
    void* base = nullptr;
    uint64_t bytes = 0, data_offset = 0;
    SYMMEM_TRY(buffer->own_allocation(&base, &bytes, &data_offset));
    if (reinterpret_cast<uintptr_t>(base) % kWinRequiredAlignment != 0 ||
        data_offset % kWinRequiredAlignment != 0)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                  "%s: the buffer's allocation (%p, data at +%llu) is not aligned to NCCL's %llu "
                  "bytes", call, base, static_cast<unsigned long long>(data_offset),
                  static_cast<unsigned long long>(kWinRequiredAlignment));
    std::string op = "ncclCommWindowRegister(" + std::to_string(bytes) + " bytes" +
                     (flags == kWinCollSymmetric ? ", NCCL_WIN_COLL_SYMMETRIC)" : ")");
    std::lock_guard<std::mutex> lock(comm->mu);
    SYMMEM_TRY(usable(comm, op));
    if (comm->in_group.load() > 0)
      return fail(SYMMEM_ERR_STATE, "%s: not inside an open group (call symmem_nccl_group_end first)",
                  where(comm, op).c_str());
    Deadline deadline(timeout_ms);
    if (cudaError_t e = use_device(comm->device); e != cudaSuccess)
      return fail_device(e, comm->device, where(comm, op));
    comm->last_op = op;
    comm->last_name = nullptr;
    nccl_window_t win = nullptr;
    int r = call_busy(comm, deadline,
                      [&] { return a->CommWindowRegister(comm->handle, base, bytes, &win, flags); });
    if (Wait w = lever_wait(comm); w != Wait::kDone)
      return fail_wait(w, r, comm, op, timeout_ms,
                       "did not complete (a rank of the communicator did not register its window)");
    if (r == kInvalidArgument || r == kInvalidUsage)  // refused up front: the communicator is fine
      return fail_nccl(r, comm->handle, "%s", where(comm, op).c_str());
    if (r != kSuccess && r != kInProgress) return fail_wait(Wait::kError, r, comm, op, timeout_ms, "");
    // Collective: on a non-blocking communicator the handle is only final once the async state is.
    Wait w = poll_async(a, comm, deadline, &r);
    if (w != Wait::kDone)
      return fail_wait(w, r, comm, op, timeout_ms,
                       "did not complete (a rank of the communicator did not register its window)");
    if (win == nullptr)
      return fail(SYMMEM_ERR_UNSUPPORTED,
                  "%s: NCCL returned success but no window: this communicator has no symmetric-memory "
                  "support. NCCL needs every rank on one node with direct P2P between all GPUs, cuMem "
                  "(NCCL_CUMEM_ENABLE not 0) and NCCL_WIN_ENABLE not 0; NCCL_DEBUG=INFO says which "
                  "is missing",
                  where(comm, op).c_str());
    auto* record = new symmem_nccl_window();
    record->comm = comm;
    record->buffer = buffer;
    record->handle = win;
    record->bytes = bytes;
    record->flags = flags;
    comm->windows.push_back(record);
    buffer->nccl_windows.fetch_add(1);
    *out = record;
    return SYMMEM_OK;
  });
}

symmem_status symmem_nccl_window_deregister(symmem_nccl_window* window, int timeout_ms) {
  if (window == nullptr) return SYMMEM_OK;
  return guarded("symmem_nccl_window_deregister", [&]() -> symmem_status {
    const char* call = "symmem_nccl_window_deregister";
    if (timeout_ms <= 0)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: timeout_ms must be > 0, got %d", call, timeout_ms);
    symmem_nccl_comm* comm = window->comm;
    if (comm == nullptr) {  // its communicator is gone, and the registration with it
      delete window;
      return SYMMEM_OK;
    }
    const Api* a = nullptr;
    SYMMEM_TRY(require_loaded(call, &a));
    std::lock_guard<std::mutex> lock(comm->mu);
    if (window->comm == nullptr) {  // orphaned while we waited for the lock
      delete window;
      return SYMMEM_OK;
    }
    std::string op = "ncclCommWindowDeregister(" + std::to_string(window->bytes) + " bytes)";
    auto forget = [&] {
      comm->windows.erase(std::remove(comm->windows.begin(), comm->windows.end(), window),
                          comm->windows.end());
      window->buffer->nccl_windows.fetch_sub(1);
      delete window;
    };
    if (comm->in_group.load() > 0)
      return fail(SYMMEM_ERR_STATE, "%s: not inside an open group (call symmem_nccl_group_end first)",
                  where(comm, op).c_str());
    if (aborted() || comm->abort_requested.load()) {
      // No NCCL call that waits for peers that may be gone: aborting the communicator releases the
      // window with it, which is all a deregistration has to achieve here.
      (void)usable(comm, op);
      delete window;  // orphaned by the abort
      return SYMMEM_OK;
    }
    Deadline deadline(timeout_ms);
    if (cudaError_t e = use_device(comm->device); e != cudaSuccess)
      return fail_device(e, comm->device, where(comm, op));
    comm->last_op = op;
    comm->last_name = nullptr;
    int r = call_busy(comm, deadline,
                      [&] { return a->CommWindowDeregister(comm->handle, window->handle); });
    if (Wait w = lever_wait(comm); w != Wait::kDone) {
      symmem_status s = fail_wait(w, r, comm, op, timeout_ms,
                                  "did not complete (a rank of the communicator did not deregister)");
      delete window;  // orphaned by the abort
      return s;
    }
    if (r == kInvalidArgument || r == kInvalidUsage)
      return fail_nccl(r, comm->handle, "%s", where(comm, op).c_str());
    if (r != kSuccess && r != kInProgress) {
      symmem_status s = fail_wait(Wait::kError, r, comm, op, timeout_ms, "");
      delete window;  // orphaned by the abort
      return s;
    }
    Wait w = poll_async(a, comm, deadline, &r);
    if (w != Wait::kDone) {
      symmem_status s = fail_wait(w, r, comm, op, timeout_ms,
                                  "did not complete (a rank of the communicator did not deregister)");
      delete window;  // orphaned by the abort: the buffer may be freed
      return s;
    }
    forget();
    return SYMMEM_OK;
  });
}

}  // extern "C"
