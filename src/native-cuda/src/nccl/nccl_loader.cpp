// Finding libnccl at run time: libsymmem never links NCCL and is built without nccl.h, so one
// libsymmem works with whichever NCCL the machine has (PyTorch's pip wheel, the system package, a
// NCCL_HOME build) or none at all. The caller (Java) decides where to look and passes the candidates
// in order; every failure is kept, so "not found" names each place and why it was refused.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "core/abi.h"
#include "core/dl.h"
#include "core/status.h"
#include "nccl/nccl_api.h"
#include "nccl/nccl_internal.h"

namespace symmem::nccl {
namespace {

// Loaded once per process and never unloaded: NCCL starts threads and registers CUDA state that a
// dlclose could pull out from under them.
std::mutex g_load_mutex;
Api g_table;
const Api* g_api = nullptr;  // set (under g_load_mutex) once g_table is complete
int g_version_code = 0;
std::string g_path;

// NCCL_RUNTIME_CONNECT as NCCL will read it, and from where; "" before loading.
std::string g_runtime_connect;

// NCCL 2.22+ connects an algorithm's peers at its first collective (NCCL_RUNTIME_CONNECT, default 1),
// in the calling thread of a blocking communicator, which then waits for a peer that never comes
// where no deadline of ours ends it reliably (nccl_comm.cpp). With 0, NCCL's init connects every
// algorithm (ring, tree, PAT, NVLS, CollNet: init.cc, initTransportsRank) and a collective never
// connects (enqueue.cc tests comm->runtimeConn only): the connections are made by the init and the
// split, which are non-blocking and under the init's deadline. NCCL reads the variable once per
// process, at its first communicator init (NCCL_PARAM's cache), so it is set here, before any
// init. A value the user set (even 1) is kept. Every rank of a communicator must agree (a rank that
// connects at init waits for exchanges a lazy one makes at its first collective): symmem's processes
// all do this. Its one cost: buffers for every algorithm at init.
void settle_runtime_connect() {
  const char* v = std::getenv("NCCL_RUNTIME_CONNECT");
  if (v != nullptr && v[0] != '\0') {  // NCCL treats "" as unset
    g_runtime_connect = std::string("NCCL_RUNTIME_CONNECT=") + v + " (from the environment)";
    return;
  }
  setenv("NCCL_RUNTIME_CONNECT", "0", 1);
  g_runtime_connect = "NCCL_RUNTIME_CONNECT=0 (set by symmem)";
}

// NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z before 2.9, X*10000+Y*100+Z from 2.9 on.
void decode(int code, int* major, int* minor, int* patch) {
  if (code < 10000) {
    *major = code / 1000;
    *minor = (code % 1000) / 100;
  } else {
    *major = code / 10000;
    *minor = (code % 10000) / 100;
  }
  *patch = code % 100;
}

// The oldest NCCL we accept: non-blocking communicators (config.blocking = 0, ncclInProgress,
// ncclCommFinalize) exist from 2.14 on, and the deadline logic depends on them.
constexpr int kMinVersionCode = 21400;

// Tries one candidate; on success fills g_table and returns true, else appends why not to `why`.
bool try_load(const char* path, std::string* why) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    *why = dl_reason(path);
    return false;
  }
  Api t;
  std::string missing;
  auto get = [&](const char* name, auto* fn) { dl_symbol(h, name, fn, &missing); };
  get("ncclGetVersion", &t.GetVersion);
  get("ncclGetUniqueId", &t.GetUniqueId);
  get("ncclCommInitRankConfig", &t.CommInitRankConfig);
  get("ncclCommFinalize", &t.CommFinalize);
  get("ncclCommDestroy", &t.CommDestroy);
  get("ncclCommAbort", &t.CommAbort);
  get("ncclCommGetAsyncError", &t.CommGetAsyncError);
  get("ncclGetErrorString", &t.GetErrorString);
  get("ncclGetLastError", &t.GetLastError);
  get("ncclAllReduce", &t.AllReduce);
  get("ncclReduce", &t.Reduce);
  get("ncclBroadcast", &t.Broadcast);
  get("ncclAllGather", &t.AllGather);
  get("ncclReduceScatter", &t.ReduceScatter);
  get("ncclGroupStart", &t.GroupStart);
  get("ncclGroupEnd", &t.GroupEnd);
  std::string optional_missing;  // allowed: the calls that need them say so
  dl_symbol(h, "ncclCommSplit", &t.CommSplit, &optional_missing);
  dl_symbol(h, "ncclMemAlloc", &t.MemAlloc, &optional_missing);
  dl_symbol(h, "ncclMemFree", &t.MemFree, &optional_missing);
  dl_symbol(h, "ncclCommWindowRegister", &t.CommWindowRegister, &optional_missing);
  dl_symbol(h, "ncclCommWindowDeregister", &t.CommWindowDeregister, &optional_missing);
  if (!missing.empty()) {
    *why = "loaded, but it does not export " + missing + " (not NCCL, or a NCCL older than 2.14)";
    dlclose(h);
    return false;
  }
  int code = 0;
  int r = t.GetVersion(&code);
  if (r != kSuccess) {
    *why = "loaded, but ncclGetVersion returned " + std::to_string(r);
    dlclose(h);
    return false;
  }
  if (code < kMinVersionCode) {
    int major, minor, patch;
    decode(code, &major, &minor, &patch);
    *why = "NCCL " + std::to_string(major) + "." + std::to_string(minor) + "." +
           std::to_string(patch) + " is too old (symmem needs 2.14 or later: non-blocking communicators)";
    dlclose(h);
    return false;
  }
  // Where the loader actually found it (a bare soname resolves through the loader path).
  Dl_info info;
  g_path = dladdr(reinterpret_cast<void*>(t.GetVersion), &info) != 0 && info.dli_fname != nullptr
               ? info.dli_fname
               : path;
  g_table = t;
  g_version_code = code;
  return true;
}

}  // namespace

const Api* api() {
  std::lock_guard<std::mutex> lock(g_load_mutex);
  return g_api;
}

const char* result_name(int r) {
  switch (r) {
    case kSuccess: return "ncclSuccess";
    case kUnhandledCudaError: return "ncclUnhandledCudaError";
    case kSystemError: return "ncclSystemError";
    case kInternalError: return "ncclInternalError";
    case kInvalidArgument: return "ncclInvalidArgument";
    case kInvalidUsage: return "ncclInvalidUsage";
    case kRemoteError: return "ncclRemoteError";
    case kInProgress: return "ncclInProgress";
    default: return "unknown ncclResult_t";
  }
}

symmem_status require_loaded(const char* call, const Api** out) {
  const Api* a = api();
  if (a == nullptr)
    return fail(SYMMEM_ERR_STATE, "%s: NCCL is not loaded (call symmem_nccl_load first)", call);
  *out = a;
  return SYMMEM_OK;
}

}  // namespace symmem::nccl

using namespace symmem;
using namespace symmem::nccl;

extern "C" {

symmem_status symmem_nccl_load(const char* const* paths, int n) {
  return guarded("symmem_nccl_load", [&]() -> symmem_status {
    if (n < 1 || paths == nullptr)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                  "symmem_nccl_load: the candidate list is empty (n = %d): give at least one path "
                  "or the bare soname libnccl.so.2", n);
    for (int i = 0; i < n; i++)
      if (paths[i] == nullptr || paths[i][0] == '\0')
        return fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_nccl_load: candidate %d is null or empty", i);
    std::lock_guard<std::mutex> lock(g_load_mutex);
    if (g_api != nullptr) return SYMMEM_OK;  // loaded once per process; see symmem_nccl_library_path
    std::string tried;
    for (int i = 0; i < n; i++) {
      std::string why;
      if (try_load(paths[i], &why)) {
        settle_runtime_connect();
        g_api = &g_table;
        return SYMMEM_OK;
      }
      tried += "\n  ";
      tried += paths[i];
      tried += ": ";
      tried += why;
    }
    return fail(SYMMEM_ERR_NO_DEVICE, "NCCL not found: tried %d place%s:%s", n, n == 1 ? "" : "s",
                tried.c_str());
  });
}

int symmem_nccl_loaded(void) { return api() != nullptr ? 1 : 0; }

const char* symmem_nccl_library_path(void) {
  std::lock_guard<std::mutex> lock(g_load_mutex);
  return g_api != nullptr ? g_path.c_str() : "";
}

const char* symmem_nccl_runtime_connect(void) {
  std::lock_guard<std::mutex> lock(g_load_mutex);
  return g_api != nullptr ? g_runtime_connect.c_str() : "";
}

symmem_status symmem_nccl_version(int* out_code, int* out_major, int* out_minor, int* out_patch) {
  const Api* a = nullptr;
  if (symmem_status s = require_loaded("symmem_nccl_version", &a); s != SYMMEM_OK) return s;
  int major, minor, patch;
  decode(g_version_code, &major, &minor, &patch);
  if (out_code != nullptr) *out_code = g_version_code;
  if (out_major != nullptr) *out_major = major;
  if (out_minor != nullptr) *out_minor = minor;
  if (out_patch != nullptr) *out_patch = patch;
  return SYMMEM_OK;
}

symmem_status symmem_nccl_unique_id(uint8_t* out_id) {
  return guarded("symmem_nccl_unique_id", [&]() -> symmem_status {
    const Api* a = nullptr;
    if (symmem_status s = require_loaded("symmem_nccl_unique_id", &a); s != SYMMEM_OK) return s;
    if (out_id == nullptr)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_nccl_unique_id: out_id is NULL");
    nccl_unique_id id;
    int r = a->GetUniqueId(&id);
    if (r != kSuccess) return fail_nccl(r, nullptr, "ncclGetUniqueId");
    std::memcpy(out_id, id.internal, kUniqueIdBytes);
    return SYMMEM_OK;
  });
}

}  // extern "C"
