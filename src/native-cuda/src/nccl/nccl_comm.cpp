// NCCL communicators with deadlines, and collectives at NCCL's own speed.
//
// Set-up: the communicator is created NON-BLOCKING (config.blocking = 0): ncclCommInitRankConfig
// returns at once and we poll ncclCommGetAsyncError ourselves, so the init has a deadline, notices
// symmem_abort and ends with ncclCommAbort instead of a hang when a rank never comes.
//
// Data path: a non-blocking NCCL (2.28, group.cc) runs EVERY group, and so every single collective, on
// a freshly created thread and answers ncclInProgress; with our polling that cost 100-270 us a call
// against NCCL's 10 us. So the init then splits the parent (color 0, same ranks, under the same
// deadline, still non-blocking) into a BLOCKING child with splitShare = 1, and every collective,
// group and window runs on the child: NCCL enqueues in the calling thread and returns, as in its own
// C loop. splitShare = 1 also means no second set of buffers, and that the child SHARES the parent's
// abort flag (init.cc, ncclCommInitChildComm). That flag is what every NCCL wait checks (bootstrap
// sockets, the work FIFO, the kernels through its device copy), and ncclCommAbort raises it first.
//
// Deadlines and aborts on the data path:
// - no collective waits for a peer in the host: NCCL 2.22+ would connect an algorithm's peers at its
//   first collective, in the calling thread (NCCL_RUNTIME_CONNECT, default 1), but the loader sets
//   NCCL_RUNTIME_CONNECT=0 unless the user set it (nccl_loader.cpp), so the init and the split connect
//   every algorithm, non-blocking and under the init's deadline; symmetric kernels set up at the
//   first NCCL_WIN_COLL_SYMMETRIC window registration (sym_kernels.cc, dev_runtime.cc). A peer that
//   never comes then holds only the device, and a collective enqueues and returns;
// - a collective that never completes on the device is seen by our own wait (synchronize: an event
//   query with a deadline, as PyTorch's watchdog does), which then aborts the communicator (the
//   kernels poll the abort flag);
// - a blocking call that still waits in the host (window registration and finalize are collective;
//   a first collective where the user set NCCL_RUNTIME_CONNECT=1) is marked busy with its deadline;
//   a watchdog thread, or an abort request, then aborts the PARENT (pull_lever): nobody calls into
//   the parent after the split, so this is no concurrent use of a communicator, and its abort raises
//   the shared flag, the stuck call returns an error, and its own thread aborts the child
//   (abort_locked). In NCCL 2.28.9's source the bootstrap socket waits (accept, send, recv) check
//   that flag; yet a 2-GPU run (2026-11-26) saw a first collective connecting to a peer that never
//   came stay in NCCL 60 s after the lever was pulled, at a wait not identified. So the lever is a
//   last resort, not a guarantee: what must end on time (collectives) does not wait in the host.
// NCCL's own advice (user guide, fault tolerance) is non-blocking communicators for aborts "at any
// point"; the lever keeps that property for the one communicator that has no caller. Without
// ncclCommSplit (NCCL < 2.18) the communicator stays non-blocking end to end, polled as before.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/abi.h"
#include "core/abort.h"
#include "core/deadline.h"
#include "core/status.h"
#include "nccl/nccl_api.h"
#include "nccl/nccl_internal.h"

namespace symmem::nccl {
namespace {

std::string vfmt(const char* fmt, va_list ap) {
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  return buf;
}

// Communicators alive in this process, so that symmem_abort reaches them.
std::mutex g_registry_mutex;
std::vector<symmem_nccl_comm*> g_registry;

}  // namespace

namespace {

// ncclCommAbort on `comm` with c's device current. Success or ncclInProgress both mean the abort has
// started; either way the handle is gone. Unlike use_device it restores the thread's device: it runs
// on whichever thread aborts (the watchdog, the liveness path), not on one working on c.
void abort_handle(const Api* a, const symmem_nccl_comm* c, nccl_comm_t comm) {
  if (comm == nullptr || a == nullptr) return;
  int prev = -1;
  bool restore = c->device >= 0 && cudaGetDevice(&prev) == cudaSuccess && prev != c->device;
  if (c->device >= 0) cudaSetDevice(c->device);
  (void)a->CommAbort(comm);
  if (restore) cudaSetDevice(prev);
  cudaGetLastError();
}

}  // namespace

void pull_lever(symmem_nccl_comm* c) {
  std::lock_guard<std::mutex> lock(c->lever_mu);
  if (c->parent == nullptr) return;
  c->lever_pulled.store(true);  // before the flag rises: the blocked call may return at once
  abort_handle(api(), c, c->parent);
  c->parent = nullptr;
}

void end_busy(symmem_nccl_comm* c) {
  if (c->busy_until_ns.exchange(0) == kBusyClaimed)
    while (!c->lever_pulled.load()) std::this_thread::yield();
}

Wait lever_wait(symmem_nccl_comm* c) {
  if (!c->lever_pulled.load()) return Wait::kDone;
  return aborted() || c->abort_requested.load() ? Wait::kAborted : Wait::kTimeout;
}

void abort_locked(symmem_nccl_comm* c, const std::string& why) {
  if (c->aborted) return;
  abort_handle(api(), c, c->handle);
  pull_lever(c);  // the parent goes with it
  c->handle = nullptr;
  c->aborted = true;
  c->aborted_why = why;
  orphan_windows(c);
}

namespace {

// For a communicator whose mutex another thread holds: that thread either polls (it sees
// abort_requested at its next turn and aborts it itself: NCCL calls on one communicator must not run
// concurrently) or is inside a blocking NCCL call, which only the lever ends. abort_requested is
// stored before busy_until_ns is read, and the caller publishes busy before it reads abort_requested,
// so one of the two sides always sees the other.
void abort_busy(symmem_nccl_comm* c) {
  if (c->busy_until_ns.load() != 0) pull_lever(c);
}

// symmem_abort's hook: aborts every communicator nobody is using now, and pulls the lever of those a
// thread is blocked in.
void on_process_abort(const char* reason) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  for (symmem_nccl_comm* c : g_registry) {
    c->requested_reason = std::string("symmem_abort: ") + reason;
    c->abort_requested.store(true);
    if (c->mu.try_lock()) {
      abort_locked(c, c->requested_reason);
      c->mu.unlock();
    } else {
      abort_busy(c);
    }
  }
}

// How often the watchdog looks at the blocking calls in progress: the precision of their deadlines.
constexpr int64_t kWatchdogPeriodNs = 2'000'000;

// Pulls the lever of the call busy until `until`, if that call is still in progress (see kBusyClaimed).
void expire(symmem_nccl_comm* c, int64_t until) {
  std::lock_guard<std::mutex> lock(c->lever_mu);
  if (c->parent == nullptr) return;
  if (!c->busy_until_ns.compare_exchange_strong(until, kBusyClaimed)) return;  // it returned meanwhile
  c->lever_pulled.store(true);
  abort_handle(api(), c, c->parent);
  c->parent = nullptr;
}

// One thread per process, started with the first communicator that has a lever: it ends the blocking
// calls that pass their deadline. The callers only store their deadline (no wake-up on the hot path).
void watchdog() {
  for (;;) {
    sleep_ns(kWatchdogPeriodNs);
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    int64_t now = now_ns();
    for (symmem_nccl_comm* c : g_registry) {
      int64_t until = c->busy_until_ns.load();
      if (until > 0 && (now >= until || c->abort_requested.load() || aborted())) expire(c, until);
    }
  }
}

void register_comm(symmem_nccl_comm* c) {
  static std::once_flag once;
  std::call_once(once, [] { register_abort_hook(&on_process_abort); });
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  g_registry.push_back(c);
}

void start_watchdog() {
  static std::once_flag once;
  std::call_once(once, [] { std::thread(watchdog).detach(); });
}

void unregister_comm(symmem_nccl_comm* c) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  g_registry.erase(std::remove(g_registry.begin(), g_registry.end(), c), g_registry.end());
}

}  // namespace

std::string requested_reason(symmem_nccl_comm* c) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  return c->requested_reason;
}

// "allReduce(fp32 sum, 7 elements) on group 'world' (rank 0 of 2)"
std::string where(const symmem_nccl_comm* c, const std::string& op) {
  return op + " on " + c->label + " (rank " + std::to_string(c->rank) + " of " +
         std::to_string(c->nranks) + ")";
}

// Refuses work on an aborted communicator or in an aborted process.
symmem_status usable(symmem_nccl_comm* c, const std::string& op) {
  // A pulled lever raised the abort flag: whatever the last call answered, nothing may run on it.
  if (!c->aborted && c->lever_pulled.load())
    abort_locked(c, aborted() || c->abort_requested.load()
                        ? (aborted() ? "symmem_abort: " + abort_reason() : requested_reason(c))
                        : "a blocking NCCL call on it passed its deadline");
  if (c->aborted)
    return fail(SYMMEM_ERR_STATE, "%s: the communicator was aborted (%s); close it and create a new one",
                where(c, op).c_str(), c->aborted_why.c_str());
  if (aborted() || c->abort_requested.load()) {
    std::string why = aborted() ? "symmem_abort: " + abort_reason() : requested_reason(c);
    abort_locked(c, why);
    return fail(SYMMEM_ERR_ABORTED, "%s, not started: aborted: %s; communicator aborted",
                where(c, op).c_str(), why.c_str());
  }
  if (c->handle == nullptr)
    return fail(SYMMEM_ERR_STATE, "%s: the communicator has no NCCL handle", where(c, op).c_str());
  return SYMMEM_OK;
}

symmem_status fail_device(cudaError_t e, int device, const std::string& what) {
  symmem_status s = e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
                            e == cudaErrorInvalidDevice
                        ? SYMMEM_ERR_NO_DEVICE
                        : SYMMEM_ERR_SYSTEM;
  return fail(s, "%s: cudaSetDevice(%d): %s (%s)", what.c_str(), device, cudaGetErrorName(e),
              cudaGetErrorString(e));
}

// Polls ncclCommGetAsyncError until it leaves ncclInProgress, the deadline passes or an abort is
// requested. *result gets the last NCCL result.
Wait poll_async(const Api* a, symmem_nccl_comm* c, const Deadline& deadline, int* result) {
  Backoff backoff;
  for (;;) {
    int async = kInProgress;
    int r = a->CommGetAsyncError(c->handle, &async);
    if (r != kSuccess) {
      *result = r;
      return Wait::kError;
    }
    if (async != kInProgress) {
      *result = async;
      return async == kSuccess ? Wait::kDone : Wait::kError;
    }
    *result = kInProgress;
    if (aborted() || c->abort_requested.load()) return Wait::kAborted;
    if (deadline.expired()) return Wait::kTimeout;
    backoff.pause();
  }
}

// Turns a Wait that is not kDone into an aborted communicator and a message naming the operation,
// the communicator, the rank and the deadline.
symmem_status fail_wait(Wait w, int r, symmem_nccl_comm* c, const std::string& op, int timeout_ms,
                        const char* what_did_not_finish) {
  std::string at = where(c, op);
  if (w == Wait::kAborted) {
    std::string why = aborted() ? "symmem_abort: " + abort_reason() : requested_reason(c);
    abort_locked(c, why);
    return fail(SYMMEM_ERR_ABORTED, "%s: aborted: %s; communicator aborted", at.c_str(), why.c_str());
  }
  if (w == Wait::kTimeout) {
    abort_locked(c, at + " timed out");
    return fail(SYMMEM_ERR_TIMEOUT, "%s: %s within %d ms; communicator aborted (ncclCommAbort)",
                at.c_str(), what_did_not_finish, timeout_ms);
  }
  // An asynchronous NCCL error leaves the communicator unusable: NCCL's advice is to abort it.
  std::string detail;
  const Api* a = api();
  if (a != nullptr) {
    const char* text = a->GetErrorString(r);
    const char* last = a->GetLastError(c->handle);
    detail = std::string(result_name(r)) + " (" + (text != nullptr ? text : "?") + ")";
    if (last != nullptr && last[0] != '\0') detail += ": " + std::string(last);
  }
  abort_locked(c, at + " failed: " + detail);
  return fail(r == kInvalidArgument || r == kInvalidUsage ? SYMMEM_ERR_INVALID_ARGUMENT : SYMMEM_ERR_SYSTEM,
              "%s: NCCL error %d %s; communicator aborted", at.c_str(), r, detail.c_str());
}

namespace {

const char* dtype_name(int d) {
  switch (d) {
    case kInt8: return "int8";
    case kUint8: return "uint8";
    case kInt32: return "int32";
    case kUint32: return "uint32";
    case kInt64: return "int64";
    case kUint64: return "uint64";
    case kFloat16: return "fp16";
    case kFloat32: return "fp32";
    case kFloat64: return "fp64";
    case kBfloat16: return "bf16";
    default: return nullptr;
  }
}

const char* op_name(int op) {
  switch (op) {
    case kSum: return "sum";
    case kProd: return "prod";
    case kMax: return "max";
    case kMin: return "min";
    case kAvg: return "avg";
    default: return nullptr;
  }
}

// Per thread, as NCCL's own group state: the communicators used inside the open group.
thread_local int t_group_depth = 0;
thread_local std::vector<symmem_nccl_comm*> t_group_comms;

struct CollArgs {
  const char* name;  // "allReduce"
  int dtype;
  int op;  // -1: none
  int root;  // -1: none
  uint64_t count;
};

symmem_status check_comm_args(symmem_nccl_comm* c, const CollArgs& x, int timeout_ms) {
  if (c == nullptr) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: comm is NULL", x.name);
  if (dtype_name(x.dtype) == nullptr)
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: datatype %d is not one of NCCL's int8..bf16 (0..9)",
                x.name, x.dtype);
  if (x.op != -1 && op_name(x.op) == nullptr)
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: op %d is not one of sum, prod, max, min, avg (0..4)",
                x.name, x.op);
  if (x.root != -1 && (x.root < 0 || x.root >= c->nranks))
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: root %d is out of range for %s (0..%d)", x.name,
                x.root, c->label.c_str(), c->nranks - 1);
  if (timeout_ms <= 0)
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: timeout_ms must be > 0, got %d", x.name, timeout_ms);
  return SYMMEM_OK;
}

std::string describe(const CollArgs& x) {
  std::string s = std::string(x.name) + "(" + dtype_name(x.dtype);
  if (x.op >= 0) s += std::string(" ") + op_name(x.op);
  if (x.root >= 0) s += ", root " + std::to_string(x.root);
  s += ", " + std::to_string(x.count) + (x.count == 1 ? " element)" : " elements)");
  return s;
}

// The last operation on c, as messages name it.
std::string last_op_text(const symmem_nccl_comm* c) {
  if (c->last_name == nullptr) return c->last_op;
  return describe(CollArgs{c->last_name, c->last_dtype, c->last_opcode, c->last_root, c->last_count});
}

// Enqueues one collective. On the blocking data communicator NCCL enqueues before it returns (busy
// meanwhile, for the lever: with NCCL_RUNTIME_CONNECT=1 a first call of an algorithm waits for its
// peers). Without one, an ncclInProgress answer (the enqueue continues in NCCL's threads) is polled
// to its end within the deadline; inside a group the group end does that.
template <class Call>
symmem_status run_collective(symmem_nccl_comm* c, const CollArgs& x, int timeout_ms, Call call) {
  if (symmem_status s = check_comm_args(c, x, timeout_ms); s != SYMMEM_OK) return s;
  const Api* a = nullptr;
  if (symmem_status s = require_loaded(x.name, &a); s != SYMMEM_OK) return s;
  std::lock_guard<std::mutex> lock(c->mu);
  // The usual case (a usable communicator) is checked without building the operation's text.
  if (c->aborted || aborted() || c->abort_requested.load() || c->handle == nullptr ||
      c->lever_pulled.load(std::memory_order_relaxed)) {
    if (symmem_status s = usable(c, describe(x)); s != SYMMEM_OK) return s;
  }
  Deadline deadline(timeout_ms);
  if (cudaError_t e = use_device(c->device); e != cudaSuccess)
    return fail_device(e, c->device, where(c, describe(x)));
  c->last_name = x.name;
  c->last_dtype = x.dtype;
  c->last_opcode = x.op;
  c->last_root = x.root;
  c->last_count = x.count;
  c->busy_until_ns.store(deadline.end_ns());
  // Read after busy is published (see abort_busy): an abort that came meanwhile is not missed.
  if (aborted() || c->abort_requested.load()) {
    c->busy_until_ns.store(0);
    return usable(c, describe(x));
  }
  int r = call(a);
  end_busy(c);
  if (r == kSuccess && t_group_depth == 0 && !c->lever_pulled.load()) return SYMMEM_OK;
  const std::string op = describe(x);
  if (Wait w = lever_wait(c); w != Wait::kDone)
    return fail_wait(w, r, c, op, timeout_ms, "was not enqueued");
  if (t_group_depth > 0) {
    if (r != kSuccess && r != kInProgress) return fail_nccl(r, c->handle, "%s", where(c, op).c_str());
    if (std::find(t_group_comms.begin(), t_group_comms.end(), c) == t_group_comms.end()) {
      t_group_comms.push_back(c);
      c->in_group.fetch_add(1);
    }
    return SYMMEM_OK;
  }
  if (r == kInvalidArgument || r == kInvalidUsage)  // refused before anything started: still usable
    return fail_nccl(r, c->handle, "%s", where(c, op).c_str());
  if (r != kSuccess && r != kInProgress) return fail_wait(Wait::kError, r, c, op, timeout_ms, "");
  if (r == kInProgress) {
    Wait w = poll_async(a, c, deadline, &r);
    if (w != Wait::kDone) return fail_wait(w, r, c, op, timeout_ms, "was not enqueued");
  }
  return SYMMEM_OK;
}

}  // namespace

symmem_status fail_nccl(int r, nccl_comm_t comm, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string what = vfmt(fmt, ap);
  va_end(ap);
  const Api* a = api();
  const char* text = a != nullptr ? a->GetErrorString(r) : nullptr;
  const char* last = a != nullptr ? a->GetLastError(comm) : nullptr;
  return fail(r == kInvalidArgument || r == kInvalidUsage ? SYMMEM_ERR_INVALID_ARGUMENT : SYMMEM_ERR_SYSTEM,
              "%s: NCCL error %d %s (%s)%s%s", what.c_str(), r, result_name(r),
              text != nullptr ? text : "?", last != nullptr && last[0] != '\0' ? ": " : "",
              last != nullptr ? last : "");
}

}  // namespace symmem::nccl

using namespace symmem;
using namespace symmem::nccl;

extern "C" {

symmem_status symmem_nccl_comm_init_rank(int nranks, const uint8_t* unique_id, int rank, int device,
                                         const char* label, int timeout_ms, symmem_nccl_comm** out) {
  return guarded("symmem_nccl_comm_init_rank", [&]() -> symmem_status {
    const char* call = "symmem_nccl_comm_init_rank";
    if (out == nullptr) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: out is NULL", call);
    *out = nullptr;
    if (nranks < 1) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: nranks must be >= 1, got %d", call, nranks);
    if (rank < 0 || rank >= nranks)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: rank %d is out of range 0..%d", call, rank, nranks - 1);
    if (unique_id == nullptr) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: unique_id is NULL", call);
    if (device < -1) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: device must be >= -1, got %d", call, device);
    if (timeout_ms <= 0)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s: timeout_ms must be > 0, got %d", call, timeout_ms);
    const Api* a = nullptr;
    if (symmem_status s = require_loaded(call, &a); s != SYMMEM_OK) return s;
    if (symmem_status s = refuse_if_aborted("ncclCommInitRank"); s != SYMMEM_OK) return s;

    auto* c = new symmem_nccl_comm();
    c->nranks = nranks;
    c->rank = rank;
    c->device = device;
    c->label = label != nullptr && label[0] != '\0' ? std::string(label)
                                                    : "communicator of " + std::to_string(nranks) +
                                                          (nranks == 1 ? " rank" : " ranks");
    std::string op = "ncclCommInitRank(device " + std::to_string(device) + ")";
    Deadline deadline(timeout_ms);
    if (cudaError_t e = use_device(device); e != cudaSuccess) {
      symmem_status s = fail_device(e, device, where(c, op));
      delete c;
      return s;
    }
    nccl_unique_id id;
    std::memcpy(id.internal, unique_id, kUniqueIdBytes);
    nccl_config config = default_config();
    config.blocking = 0;  // every wait below is ours, with a deadline
    int r = a->CommInitRankConfig(&c->handle, nranks, id, rank, &config);
    if (r != kSuccess && r != kInProgress) {
      symmem_status s = fail_nccl(r, c->handle, "%s", where(c, op).c_str());
      if (c->handle != nullptr) a->CommAbort(c->handle);
      delete c;
      return s;
    }
    if (c->handle == nullptr) {
      symmem_status s = fail(SYMMEM_ERR_SYSTEM, "%s: ncclCommInitRankConfig returned %s but no communicator",
                             where(c, op).c_str(), result_name(r));
      delete c;
      return s;
    }
    register_comm(c);  // from here on symmem_abort reaches it
    std::unique_lock<std::mutex> lock(c->mu);
    Wait w = poll_async(a, c, deadline, &r);
    if (w != Wait::kDone) {
      symmem_status s = fail_wait(
          w, r, c, op, timeout_ms,
          "did not complete: not every rank joined with this unique id (or NCCL could not connect "
          "them)");
      lock.unlock();
      unregister_comm(c);
      delete c;
      return s;
    }
    if (a->CommSplit != nullptr) {
      // The blocking data communicator (see the top of this file), under the init's deadline. NCCL
      // writes `child` from its thread when the split completes, before the parent's state leaves
      // ncclInProgress; after an abort of the parent it may or may not have.
      std::string split = "ncclCommSplit(blocking data communicator)";
      nccl_config child_config = default_config();
      child_config.blocking = 1;
      child_config.splitShare = 1;
      nccl_comm_t child = nullptr;
      r = a->CommSplit(c->handle, 0, rank, &child, &child_config);
      w = r == kSuccess || r == kInProgress ? poll_async(a, c, deadline, &r) : Wait::kError;
      if (w == Wait::kDone && child == nullptr) {
        w = Wait::kError;
        r = kInternalError;
      }
      if (w != Wait::kDone) {
        symmem_status s = fail_wait(
            w, r, c, split, timeout_ms,
            "did not complete: not every rank reached it (or NCCL could not set it up)");
        abort_handle(a, c, __atomic_load_n(&child, __ATOMIC_ACQUIRE));
        lock.unlock();
        unregister_comm(c);
        delete c;
        return s;
      }
      std::lock_guard<std::mutex> lever(c->lever_mu);
      c->parent = c->handle;
      c->handle = child;
      start_watchdog();
    }
    c->last_op = op;
    c->last_name = nullptr;
    *out = c;
    return SYMMEM_OK;
  });
}

symmem_status symmem_nccl_comm_abort(symmem_nccl_comm* comm, const char* reason) {
  if (comm == nullptr) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_nccl_comm_abort: comm is NULL");
  if (reason == nullptr || reason[0] == '\0')
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_nccl_comm_abort: reason must be a non-empty string");
  {
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    comm->requested_reason = reason;
    comm->abort_requested.store(true);
  }
  if (comm->mu.try_lock()) {
    abort_locked(comm, reason);
    comm->mu.unlock();
  } else {
    abort_busy(comm);  // a polling thread aborts it at its next turn, a blocked one returns
  }
  return SYMMEM_OK;
}

int symmem_nccl_comm_aborted(symmem_nccl_comm* comm) {
  if (comm == nullptr) return 0;
  if (comm->abort_requested.load() || comm->lever_pulled.load()) return 1;  // without waiting for mu
  std::lock_guard<std::mutex> lock(comm->mu);
  return comm->aborted ? 1 : 0;
}

symmem_status symmem_nccl_comm_destroy(symmem_nccl_comm* comm, int timeout_ms) {
  if (comm == nullptr) return SYMMEM_OK;
  return guarded("symmem_nccl_comm_destroy", [&]() -> symmem_status {
    if (timeout_ms <= 0)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_nccl_comm_destroy: timeout_ms must be > 0, got %d",
                  timeout_ms);
    if (comm->in_group.load() > 0)
      return fail(SYMMEM_ERR_STATE,
                  "symmem_nccl_comm_destroy: %s is used in a group that is still open (call "
                  "symmem_nccl_group_end first)",
                  comm->label.c_str());
    symmem_status result = SYMMEM_OK;
    {
      std::lock_guard<std::mutex> lock(comm->mu);
      const Api* a = api();
      std::string op = "close";
      if (!comm->aborted && comm->handle != nullptr && a != nullptr) {
        (void)use_device(comm->device);
        if (aborted() || comm->abort_requested.load()) {
          // No finalize after an abort request: it would wait for peers that may be gone.
          abort_locked(comm, aborted() ? "symmem_abort: " + abort_reason() : requested_reason(comm));
        } else {
          // Finalize flushes the issued work and waits until the communicator is quiescent; only
          // then may destroy free it without blocking. A finalize that does not end in time means
          // unfinished work or a peer that does not close: abort instead. The blocking data
          // communicator finalizes in this thread (busy: the lever ends it at the deadline), then
          // the non-blocking parent in NCCL's threads, polled.
          Deadline deadline(timeout_ms);
          if (comm->parent != nullptr) {
            int r = call_busy(comm, deadline, [&] { return a->CommFinalize(comm->handle); });
            Wait w = lever_wait(comm);
            if (w == Wait::kDone && r != kSuccess) w = Wait::kError;
            if (w == Wait::kDone) r = a->CommDestroy(comm->handle);
            if (w != Wait::kDone) {
              result = fail_wait(w, r, comm, op, timeout_ms,
                                 "ncclCommFinalize did not complete (unfinished work, or a peer that "
                                 "does not close)");
            } else {
              std::lock_guard<std::mutex> lever(comm->lever_mu);
              comm->handle = comm->parent;  // the parent's turn, below
              comm->parent = nullptr;
              if (r != kSuccess && r != kInProgress) {
                result = fail_nccl(r, nullptr, "%s", where(comm, "ncclCommDestroy").c_str());
                abort_handle(a, comm, comm->handle);
                comm->handle = nullptr;
              }
            }
          }
          int r = comm->handle != nullptr ? a->CommFinalize(comm->handle) : kSuccess;
          if (comm->handle == nullptr) {
            // aborted above, or its destroy failed
          } else if (r == kSuccess || r == kInProgress) {
            Wait w = poll_async(a, comm, deadline, &r);
            if (w == Wait::kDone) {
              r = a->CommDestroy(comm->handle);
              comm->handle = nullptr;
              if (r != kSuccess && r != kInProgress)
                result = fail_nccl(r, nullptr, "%s", where(comm, "ncclCommDestroy").c_str());
            } else {
              result = fail_wait(w, r, comm, op, timeout_ms,
                                 "ncclCommFinalize did not complete (unfinished work, or a peer that "
                                 "does not close)");
            }
          } else {
            result = fail_wait(Wait::kError, r, comm, op, timeout_ms, "");
          }
        }
      }
      orphan_windows(comm);  // NCCL released them with the communicator
      if (comm->event != nullptr) {
        (void)use_device(comm->device);
        cudaEventDestroy(comm->event);
        cudaGetLastError();
        comm->event = nullptr;
      }
    }
    // Registered until here so that the watchdog ends a finalize that does not; symmem_abort may
    // still mark it aborted meanwhile, which changes nothing any more.
    unregister_comm(comm);
    delete comm;
    return result;
  });
}

symmem_status symmem_nccl_comm_synchronize(symmem_nccl_comm* comm, void* stream, int timeout_ms) {
  return guarded("symmem_nccl_comm_synchronize", [&]() -> symmem_status {
    if (comm == nullptr) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_nccl_comm_synchronize: comm is NULL");
    if (timeout_ms <= 0)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_nccl_comm_synchronize: timeout_ms must be > 0, got %d",
                  timeout_ms);
    const Api* a = nullptr;
    if (symmem_status s = require_loaded("symmem_nccl_comm_synchronize", &a); s != SYMMEM_OK) return s;
    std::lock_guard<std::mutex> lock(comm->mu);
    std::string op = last_op_text(comm);
    if (symmem_status s = usable(comm, op); s != SYMMEM_OK) return s;
    Deadline deadline(timeout_ms);
    if (cudaError_t e = use_device(comm->device); e != cudaSuccess)
      return fail_device(e, comm->device, where(comm, op));
    if (comm->event == nullptr) {
      cudaError_t e = cudaEventCreateWithFlags(&comm->event, cudaEventDisableTiming);
      if (e != cudaSuccess) {
        cudaGetLastError();
        comm->event = nullptr;
        return fail(SYMMEM_ERR_SYSTEM, "%s: cudaEventCreateWithFlags: %s", where(comm, op).c_str(),
                    cudaGetErrorString(e));
      }
    }
    cudaError_t e = cudaEventRecord(comm->event, static_cast<cudaStream_t>(stream));
    if (e != cudaSuccess) {
      cudaGetLastError();
      return fail(SYMMEM_ERR_SYSTEM, "%s: cudaEventRecord on the stream: %s", where(comm, op).c_str(),
                  cudaGetErrorString(e));
    }
    // The event completes when everything enqueued before it on the stream has; NCCL's async error
    // is checked along the way (a peer that failed shows there, not in the stream).
    Backoff backoff;
    for (unsigned turn = 0;; turn++) {
      e = cudaEventQuery(comm->event);
      bool done = e == cudaSuccess;
      if (!done && e != cudaErrorNotReady) {
        cudaGetLastError();
        return fail(SYMMEM_ERR_SYSTEM, "%s: cudaEventQuery: %s (%s)", where(comm, op).c_str(),
                    cudaGetErrorName(e), cudaGetErrorString(e));
      }
      if (done || turn % 16 == 0) {
        int async = kSuccess;
        int r = a->CommGetAsyncError(comm->handle, &async);
        if (r != kSuccess) return fail_wait(Wait::kError, r, comm, op, timeout_ms, "");
        if (async != kSuccess && async != kInProgress)
          return fail_wait(Wait::kError, async, comm, op, timeout_ms, "");
      }
      if (done && comm->lever_pulled.load())  // the abort flag rose while it ran: no trusted result
        return fail_wait(lever_wait(comm), kInProgress, comm, op, timeout_ms, "did not complete");
      if (done) return SYMMEM_OK;
      if (aborted() || comm->abort_requested.load())
        return fail_wait(Wait::kAborted, kInProgress, comm, op, timeout_ms, "");
      if (deadline.expired())
        return fail_wait(Wait::kTimeout, kInProgress, comm, op, timeout_ms, "did not complete");
      backoff.pause();
    }
  });
}

symmem_status symmem_nccl_all_reduce(symmem_nccl_comm* comm, const void* send, void* recv,
                                     uint64_t count, int dtype, int op, void* stream, int timeout_ms) {
  return guarded("symmem_nccl_all_reduce", [&]() -> symmem_status {
    CollArgs x{"allReduce", dtype, op, -1, count};
    if (send == nullptr || recv == nullptr)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "allReduce: %s is NULL", send == nullptr ? "send" : "recv");
    return run_collective(comm, x, timeout_ms, [&](const Api* a) {
      return a->AllReduce(send, recv, count, dtype, op, comm->handle, stream);
    });
  });
}

symmem_status symmem_nccl_all_reduce_repeated(symmem_nccl_comm* comm, const void* send, void* recv,
                                              uint64_t count, int dtype, int op, void* stream,
                                              int timeout_ms, int times) {
  return guarded("symmem_nccl_all_reduce_repeated", [&]() -> symmem_status {
    CollArgs x{"allReduce", dtype, op, -1, count};
    if (send == nullptr || recv == nullptr)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "allReduce: %s is NULL", send == nullptr ? "send" : "recv");
    if (times < 1)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "allReduce repeated: times must be >= 1, got %d", times);
    if (t_group_depth > 0)
      return fail(SYMMEM_ERR_STATE,
                  "allReduce repeated: not inside symmem_nccl_group_start/end (the group would hold "
                  "all %d calls until its end)",
                  times);
    // The loop needs the blocking data communicator: a non-blocking one (NCCL without
    // ncclCommSplit) answers a call in progress, and the next call may not follow until it is done.
    const Api* api = nullptr;
    if (symmem_status s = require_loaded(x.name, &api); s != SYMMEM_OK) return s;
    if (api->CommSplit == nullptr)
      return fail(SYMMEM_ERR_UNSUPPORTED,
                  "allReduce repeated: needs NCCL 2.18 or later (ncclCommSplit, for a blocking "
                  "communicator); this NCCL has none, call symmem_nccl_all_reduce %d times",
                  times);
    return run_collective(comm, x, timeout_ms, [&](const Api* a) {
      // Stops at the first call that fails; run_collective handles that answer as a single call's.
      int r = kSuccess;
      for (int i = 0; i < times && r == kSuccess; ++i)
        r = a->AllReduce(send, recv, count, dtype, op, comm->handle, stream);
      return r;
    });
  });
}

symmem_status symmem_nccl_reduce(symmem_nccl_comm* comm, const void* send, void* recv,
                                 uint64_t count, int dtype, int op, int root, void* stream,
                                 int timeout_ms) {
  return guarded("symmem_nccl_reduce", [&]() -> symmem_status {
    if (root < 0) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "reduce: root must be >= 0, got %d", root);
    if (send == nullptr) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "reduce: send is NULL");
    if (comm != nullptr && comm->rank == root && recv == nullptr)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "reduce: recv is NULL on the root rank %d", root);
    CollArgs x{"reduce", dtype, op, root, count};
    return run_collective(comm, x, timeout_ms, [&](const Api* a) {
      return a->Reduce(send, recv, count, dtype, op, root, comm->handle, stream);
    });
  });
}

symmem_status symmem_nccl_broadcast(symmem_nccl_comm* comm, const void* send, void* recv,
                                    uint64_t count, int dtype, int root, void* stream, int timeout_ms) {
  return guarded("symmem_nccl_broadcast", [&]() -> symmem_status {
    CollArgs x{"broadcast", dtype, -1, root, count};
    if (root < 0) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "broadcast: root must be >= 0, got %d", root);
    if (recv == nullptr) return fail(SYMMEM_ERR_INVALID_ARGUMENT, "broadcast: recv is NULL");
    if (comm != nullptr && comm->rank == root && send == nullptr)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "broadcast: send is NULL on the root rank %d", root);
    return run_collective(comm, x, timeout_ms, [&](const Api* a) {
      return a->Broadcast(send, recv, count, dtype, root, comm->handle, stream);
    });
  });
}

symmem_status symmem_nccl_all_gather(symmem_nccl_comm* comm, const void* send, void* recv,
                                     uint64_t send_count, int dtype, void* stream, int timeout_ms) {
  return guarded("symmem_nccl_all_gather", [&]() -> symmem_status {
    CollArgs x{"allGather", dtype, -1, -1, send_count};
    if (send == nullptr || recv == nullptr)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "allGather: %s is NULL", send == nullptr ? "send" : "recv");
    return run_collective(comm, x, timeout_ms, [&](const Api* a) {
      return a->AllGather(send, recv, send_count, dtype, comm->handle, stream);
    });
  });
}

symmem_status symmem_nccl_reduce_scatter(symmem_nccl_comm* comm, const void* send, void* recv,
                                         uint64_t recv_count, int dtype, int op, void* stream,
                                         int timeout_ms) {
  return guarded("symmem_nccl_reduce_scatter", [&]() -> symmem_status {
    CollArgs x{"reduceScatter", dtype, op, -1, recv_count};
    if (send == nullptr || recv == nullptr)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "reduceScatter: %s is NULL", send == nullptr ? "send" : "recv");
    return run_collective(comm, x, timeout_ms, [&](const Api* a) {
      return a->ReduceScatter(send, recv, recv_count, dtype, op, comm->handle, stream);
    });
  });
}

symmem_status symmem_nccl_group_start(void) {
  const Api* a = nullptr;
  if (symmem_status s = require_loaded("symmem_nccl_group_start", &a); s != SYMMEM_OK) return s;
  int r = a->GroupStart();
  if (r != kSuccess) return fail_nccl(r, nullptr, "ncclGroupStart");
  t_group_depth++;
  return SYMMEM_OK;
}

symmem_status symmem_nccl_group_end(int timeout_ms) {
  return guarded("symmem_nccl_group_end", [&]() -> symmem_status {
    if (timeout_ms <= 0)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_nccl_group_end: timeout_ms must be > 0, got %d", timeout_ms);
    if (t_group_depth == 0)
      return fail(SYMMEM_ERR_STATE, "symmem_nccl_group_end: no group is open on this thread");
    const Api* a = nullptr;
    if (symmem_status s = require_loaded("symmem_nccl_group_end", &a); s != SYMMEM_OK) return s;
    Deadline deadline(timeout_ms);
    // The outermost end launches the group; on blocking communicators in this thread, which may wait
    // for peers: busy, so that the watchdog or an abort can end it.
    const bool outermost = t_group_depth == 1;
    if (outermost)
      for (symmem_nccl_comm* c : t_group_comms) c->busy_until_ns.store(deadline.end_ns());
    int r = a->GroupEnd();
    if (outermost)
      for (symmem_nccl_comm* c : t_group_comms) end_busy(c);
    t_group_depth--;
    if (t_group_depth > 0) {  // an inner group end: NCCL launches only at the outermost one
      return r == kSuccess ? SYMMEM_OK : fail_nccl(r, nullptr, "ncclGroupEnd (nested)");
    }
    std::vector<symmem_nccl_comm*> comms;
    comms.swap(t_group_comms);
    // A communicator whose lever was pulled says why the group failed (deadline or abort), first.
    std::stable_partition(comms.begin(), comms.end(),
                          [](symmem_nccl_comm* c) { return c->lever_pulled.load(); });
    symmem_status result = SYMMEM_OK;
    bool levered = !comms.empty() && comms.front()->lever_pulled.load();
    if (!levered && r != kSuccess && r != kInProgress) result = fail_nccl(r, nullptr, "ncclGroupEnd");
    // Non-blocking communicators: the group's work continues in NCCL's threads; wait for each of
    // them (or abort them all at the deadline: a group is all or nothing). Blocking ones are done.
    for (symmem_nccl_comm* c : comms) {
      {
        std::lock_guard<std::mutex> lock(c->mu);
        Wait lw = lever_wait(c);
        if (result == SYMMEM_OK && lw != Wait::kDone && !c->aborted) {
          std::string op = "group of operations (last: " + last_op_text(c) + ")";
          result = fail_wait(lw, r, c, op, timeout_ms, "did not complete ncclGroupEnd");
        } else if (result == SYMMEM_OK && !c->aborted && c->handle != nullptr) {
          std::string op = "group of operations (last: " + last_op_text(c) + ")";
          int rr = kSuccess;
          Wait w = poll_async(a, c, deadline, &rr);
          if (w != Wait::kDone)
            result = fail_wait(w, rr, c, op, timeout_ms, "did not complete ncclGroupEnd");
        } else if (result != SYMMEM_OK && !c->aborted) {
          abort_locked(c, "ncclGroupEnd failed");
        }
      }
      c->in_group.fetch_sub(1);
    }
    return result;
  });
}

}  // extern "C"
