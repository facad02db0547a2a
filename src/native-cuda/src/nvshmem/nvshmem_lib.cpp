// The process's NVSHMEM: dlopen of libnvshmem_host from the caller's candidates, the environment
// NVSHMEM reads (set before its first call), the UID bootstrap, finalize and teams. See
// nvshmem_lib.h for why only the host library is used.
#include "nvshmem/nvshmem_lib.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "core/abort.h"
#include "core/dl.h"
#include "core/status.h"
#include "core/validate.h"

#if SYMMEM_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace symmem::nvshmem {
namespace {

struct State {
  std::mutex mutex;
  void* handle = nullptr;
  Api api;
  std::string path;
  bool env_read = false;  // NVSHMEM has read its environment: later setenv would be ignored
  bool initialized = false;
  bool finalized = false;
  int device = -1;
  int pe = -1;
  int n_pes = 0;
};

State& state() {
  static State s;
  return s;
}

std::atomic<uint64_t> g_heap_bytes{0};
std::atomic<int> g_heap_buffers{0};

// Every entry point symmem calls, or the names that are missing.
bool resolve_all(void* h, Api* a, std::string* missing) {
  bool ok = true;
  ok &= dl_symbol(h, "nvshmemx_get_uniqueid", &a->get_uniqueid, missing);
  ok &= dl_symbol(h, "nvshmemx_set_attr_uniqueid_args", &a->set_attr_uniqueid_args, missing);
  ok &= dl_symbol(h, "nvshmemx_hostlib_init_attr", &a->hostlib_init_attr, missing);
  ok &= dl_symbol(h, "nvshmemx_hostlib_finalize", &a->hostlib_finalize, missing);
  ok &= dl_symbol(h, "nvshmem_malloc", &a->malloc, missing);
  ok &= dl_symbol(h, "nvshmem_free", &a->free, missing);
  ok &= dl_symbol(h, "nvshmem_ptr", &a->ptr, missing);
  ok &= dl_symbol(h, "nvshmem_my_pe", &a->my_pe, missing);
  ok &= dl_symbol(h, "nvshmem_n_pes", &a->n_pes, missing);
  ok &= dl_symbol(h, "nvshmemx_vendor_get_version_info", &a->vendor_version, missing);
  ok &= dl_symbol(h, "nvshmem_team_split_strided", &a->team_split_strided, missing);
  ok &= dl_symbol(h, "nvshmem_team_destroy", &a->team_destroy, missing);
  ok &= dl_symbol(h, "nvshmem_team_translate_pe", &a->team_translate_pe, missing);
  ok &= dl_symbol(h, "nvshmem_team_n_pes", &a->team_n_pes, missing);
  return ok;
}

bool is_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// NVSHMEM opens its UID bootstrap plugin by file name, which the loader finds only on its search
// path: a pip wheel's lib directory is not on it. The plugin beside the loaded library is the one
// built for it, so it is named explicitly, unless the user chose one.
void point_at_bootstrap_plugin(const std::string& lib_path) {
  if (std::getenv("NVSHMEM_BOOTSTRAP_UID_PLUGIN") != nullptr) return;
  const size_t slash = lib_path.rfind('/');
  if (slash == std::string::npos) return;
  const std::string plugin = lib_path.substr(0, slash + 1) + "nvshmem_bootstrap_uid.so.3";
  if (is_file(plugin)) setenv("NVSHMEM_BOOTSTRAP_UID_PLUGIN", plugin.c_str(), 0);
}

}  // namespace

symmem_status api(const Api** out) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.handle == nullptr)
    return fail(SYMMEM_ERR_STATE, "NVSHMEM is not loaded: call symmem_nvshmem_load first");
  *out = &s.api;
  return SYMMEM_OK;
}

std::string loaded_path() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.path;
}

bool initialized() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.initialized;
}

int init_device() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.device;
}

symmem_status require_initialized(const char* call) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.handle == nullptr)
    return fail(SYMMEM_ERR_STATE, "%s: NVSHMEM is not loaded (symmem_nvshmem_load, then "
                "symmem_nvshmem_init)", call);
  if (s.finalized)
    return fail(SYMMEM_ERR_STATE, "%s: NVSHMEM was finalized in this process", call);
  if (!s.initialized)
    return fail(SYMMEM_ERR_STATE, "%s: NVSHMEM is not initialised (symmem_nvshmem_init)", call);
  return SYMMEM_OK;
}

void heap_allocated(uint64_t bytes) {
  g_heap_bytes += bytes;
  ++g_heap_buffers;
}

void heap_freed(uint64_t bytes) {
  g_heap_bytes -= bytes;
  --g_heap_buffers;
}

}  // namespace symmem::nvshmem

using namespace symmem;
using namespace symmem::nvshmem;

extern "C" {

symmem_status symmem_nvshmem_load(const char* const* candidates, int count, char* loaded,
                                  size_t cap) {
  return guarded("symmem_nvshmem_load", [&]() -> symmem_status {
    SYMMEM_REQUIRE(count >= 1, "count %d: give at least one candidate path", count);
    SYMMEM_REQUIRE_NOT_NULL(candidates);
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.handle == nullptr) {
      std::string looked;
      for (int i = 0; i < count; ++i) {
        SYMMEM_REQUIRE(candidates[i] != nullptr && candidates[i][0] != '\0',
                       "candidates[%d] is NULL or empty", i);
        dlerror();
        // RTLD_LOCAL: NVSHMEM's symbols stay out of the global namespace (a second copy loaded by
        // another library in this JVM would otherwise bind to ours, or ours to it).
        void* h = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        std::string why;
        if (h == nullptr) {
          why = dl_reason(candidates[i]);
        } else {
          Api a;
          std::string missing;
          if (resolve_all(h, &a, &missing)) {
            s.handle = h;
            s.api = a;
            char real[4096];
            // The file actually opened (the loader resolves a bare soname itself).
            if (dlinfo(h, RTLD_DI_ORIGIN, real) == 0) {
              const char* base = std::strrchr(candidates[i], '/');
              s.path = std::string(real) + "/" + (base != nullptr ? base + 1 : candidates[i]);
            } else {
              s.path = candidates[i];
            }
            point_at_bootstrap_plugin(s.path);
            break;
          }
          dlclose(h);
          why = "opened, but it lacks " + missing + " (not NVSHMEM 3.x's host library?)";
        }
        looked += "\n  " + std::string(candidates[i]) + ": " + why;
      }
      if (s.handle == nullptr)
        return fail(SYMMEM_ERR_UNSUPPORTED, "NVSHMEM's host library (libnvshmem_host.so.3) was "
                    "not found; looked at:%s", looked.c_str());
    }
    if (loaded != nullptr && cap > 0) {
      std::strncpy(loaded, s.path.c_str(), cap - 1);
      loaded[cap - 1] = '\0';
    }
    return SYMMEM_OK;
  });
}

symmem_status symmem_nvshmem_version(int* major, int* minor, int* patch) {
  SYMMEM_REQUIRE_NOT_NULL(major);
  SYMMEM_REQUIRE_NOT_NULL(minor);
  SYMMEM_REQUIRE_NOT_NULL(patch);
  const Api* a = nullptr;
  SYMMEM_TRY(api(&a));
  a->vendor_version(major, minor, patch);
  return SYMMEM_OK;
}

symmem_status symmem_nvshmem_setenv(const char* name, const char* value) {
  SYMMEM_REQUIRE_NOT_NULL(name);
  SYMMEM_REQUIRE_NOT_NULL(value);
  SYMMEM_REQUIRE(std::strncmp(name, "NVSHMEM_", 8) == 0 && std::strchr(name, '=') == nullptr,
                 "name '%s' is not an NVSHMEM_ variable", name);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.env_read)
    return fail(SYMMEM_ERR_STATE, "%s=%s: too late, NVSHMEM has already read its environment "
                "(set NVSHMEM variables before symmem_nvshmem_get_uniqueid/init)", name, value);
  if (setenv(name, value, 1) != 0) return fail_errno(errno, "setenv(%s)", name);
  return SYMMEM_OK;
}

symmem_status symmem_nvshmem_getenv(const char* name, char* out, size_t cap, int* is_set) {
  SYMMEM_REQUIRE_NOT_NULL(name);
  SYMMEM_REQUIRE_NOT_NULL(is_set);
  SYMMEM_REQUIRE(out != nullptr && cap > 0, "out is NULL or cap is 0");
  const char* v = std::getenv(name);
  *is_set = v != nullptr;
  std::strncpy(out, v != nullptr ? v : "", cap - 1);
  out[cap - 1] = '\0';
  return SYMMEM_OK;
}

symmem_status symmem_nvshmem_get_uniqueid(uint8_t* out) {
  SYMMEM_REQUIRE_NOT_NULL(out);
  const Api* a = nullptr;
  SYMMEM_TRY(api(&a));
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.env_read = true;
  }
  UniqueId id;
  std::memset(&id, 0, sizeof id);
  id.version = (1 << 16) + static_cast<int>(sizeof(UniqueId));
  const int rc = a->get_uniqueid(&id);
  if (rc != 0)
    return fail(SYMMEM_ERR_SYSTEM, "nvshmemx_get_uniqueid failed (status %d): NVSHMEM could not "
                "set up the UID bootstrap (check NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME; NVSHMEM_DEBUG=INFO "
                "says more)", rc);
  std::memcpy(out, &id, sizeof id);
  return SYMMEM_OK;
}

symmem_status symmem_nvshmem_init(int device, int rank, int world, const uint8_t* uid) {
  return guarded("symmem_nvshmem_init", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(uid);
    SYMMEM_REQUIRE(world >= 1, "world %d must be >= 1", world);
    SYMMEM_REQUIRE(rank >= 0 && rank < world, "rank %d is out of range 0..%d (world %d)", rank,
                   world - 1, world);
    SYMMEM_REQUIRE(device >= 0, "device %d must be >= 0", device);
    SYMMEM_TRY(refuse_if_aborted("symmem_nvshmem_init"));
    const Api* a = nullptr;
    SYMMEM_TRY(api(&a));
    State& s = state();
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (s.finalized)
        return fail(SYMMEM_ERR_STATE, "NVSHMEM was finalized in this process; it cannot be "
                    "initialised again here");
      if (s.initialized)
        return fail(SYMMEM_ERR_STATE, "NVSHMEM is already initialised here (PE %d of %d on "
                    "device %d)", s.pe, s.n_pes, s.device);
      s.env_read = true;
    }
#if SYMMEM_WITH_CUDA
    cudaError_t e = cudaSetDevice(device);
    // NVSHMEM expects a CUDA context to exist already: without one its init fails obscurely.
    if (e == cudaSuccess) e = cudaFree(nullptr);
    if (e != cudaSuccess)
      return fail(SYMMEM_ERR_NO_DEVICE, "symmem_nvshmem_init: CUDA device %d: %s", device,
                  cudaGetErrorString(e));
#else
    return fail(SYMMEM_ERR_UNSUPPORTED,
                "this libsymmem was built without CUDA (nvcc not found at build time)");
#endif
    UniqueId id;
    std::memcpy(&id, uid, sizeof id);
    InitAttr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.version = (2 << 16) + static_cast<int>(sizeof(InitAttr));
    attr.args.version = (2 << 16) + static_cast<int>(sizeof(InitArgs));
    attr.args.uid_args.version = (1 << 16) + static_cast<int>(sizeof(UniqueIdArgs));
    attr.args.uid_args.myrank = -1;
    attr.args.uid_args.nranks = -1;
    attr.args.cuda_device_id = -1;  // the device just made current
    int rc = a->set_attr_uniqueid_args(rank, world, &id, &attr);
    if (rc != 0)
      return fail(SYMMEM_ERR_SYSTEM, "nvshmemx_set_attr_uniqueid_args(rank %d, world %d) failed "
                  "(status %d)", rank, world, rc);
    rc = a->hostlib_init_attr(kInitWithUniqueId, &attr);
    if (rc != 0)
      return fail(SYMMEM_ERR_SYSTEM, "nvshmemx_hostlib_init_attr (PE %d of %d, device %d) failed "
                  "(status %d); NVSHMEM_DEBUG=INFO says why", rank, world, device, rc);
    const int pe = a->my_pe(), n = a->n_pes();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.initialized = true;
    s.device = device;
    s.pe = pe;
    s.n_pes = n;
    if (pe != rank || n != world)
      return fail(SYMMEM_ERR_MISMATCH, "NVSHMEM made this process PE %d of %d, asked for %d of %d",
                  pe, n, rank, world);
    return SYMMEM_OK;
  });
}

int symmem_nvshmem_initialized(void) { return initialized() ? 1 : 0; }

symmem_status symmem_nvshmem_pe(int* my_pe, int* n_pes) {
  SYMMEM_REQUIRE_NOT_NULL(my_pe);
  SYMMEM_REQUIRE_NOT_NULL(n_pes);
  SYMMEM_TRY(require_initialized("symmem_nvshmem_pe"));
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  *my_pe = s.pe;
  *n_pes = s.n_pes;
  return SYMMEM_OK;
}

symmem_status symmem_nvshmem_heap_usage(uint64_t* bytes, int* buffers) {
  SYMMEM_REQUIRE_NOT_NULL(bytes);
  SYMMEM_REQUIRE_NOT_NULL(buffers);
  *bytes = g_heap_bytes.load();
  *buffers = g_heap_buffers.load();
  return SYMMEM_OK;
}

symmem_status symmem_nvshmem_finalize(void) {
  SYMMEM_TRY(require_initialized("symmem_nvshmem_finalize"));
  // NVSHMEM's finalize runs barriers over every PE: with a PE known dead it would never return.
  SYMMEM_TRY(refuse_if_aborted("symmem_nvshmem_finalize"));
  const int live = g_heap_buffers.load();
  if (live != 0)
    return fail(SYMMEM_ERR_STATE, "symmem_nvshmem_finalize: %d buffer(s) still live on the "
                "NVSHMEM heap (%llu bytes): free them first", live,
                static_cast<unsigned long long>(g_heap_bytes.load()));
  const Api* a = nullptr;
  SYMMEM_TRY(api(&a));
#if SYMMEM_WITH_CUDA
  cudaSetDevice(init_device());
#endif
  a->hostlib_finalize();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.initialized = false;
  s.finalized = true;
  return SYMMEM_OK;
}

symmem_status symmem_nvshmem_team_split_strided(int start, int stride, int size, int* out_team) {
  SYMMEM_REQUIRE_NOT_NULL(out_team);
  SYMMEM_TRY(require_initialized("symmem_nvshmem_team_split_strided"));
  SYMMEM_TRY(refuse_if_aborted("symmem_nvshmem_team_split_strided"));
  int pe = -1, n = 0;
  SYMMEM_TRY(symmem_nvshmem_pe(&pe, &n));
  SYMMEM_REQUIRE(size >= 1 && stride >= 1 && start >= 0 && start + (size - 1) * stride < n,
                 "team PEs start %d, stride %d, size %d do not fit the %d PEs", start, stride, size,
                 n);
  const Api* a = nullptr;
  SYMMEM_TRY(api(&a));
  int32_t team = kTeamInvalid;
  const int rc = a->team_split_strided(kTeamWorld, start, stride, size, nullptr, 0, &team);
  if (rc != 0)
    return fail(SYMMEM_ERR_SYSTEM, "nvshmem_team_split_strided(start %d, stride %d, size %d) "
                "failed (status %d; NVSHMEM has a fixed number of teams: NVSHMEM_MAX_TEAMS)",
                start, stride, size, rc);
  *out_team = team;
  return SYMMEM_OK;
}

symmem_status symmem_nvshmem_team_translate_pe(int team, int team_pe, int* out_world_pe) {
  SYMMEM_REQUIRE_NOT_NULL(out_world_pe);
  SYMMEM_REQUIRE(team >= 0, "team %d is not a team (NVSHMEM_TEAM_INVALID is -1)", team);
  SYMMEM_TRY(require_initialized("symmem_nvshmem_team_translate_pe"));
  const Api* a = nullptr;
  SYMMEM_TRY(api(&a));
  const int n = a->team_n_pes(team);
  SYMMEM_REQUIRE(n > 0, "team %d is not a valid team here", team);
  SYMMEM_REQUIRE(team_pe >= 0 && team_pe < n, "team PE %d is out of range 0..%d", team_pe, n - 1);
  *out_world_pe = a->team_translate_pe(team, team_pe, kTeamWorld);
  return SYMMEM_OK;
}

symmem_status symmem_nvshmem_team_destroy(int team) {
  if (team < 0) return SYMMEM_OK;  // NVSHMEM_TEAM_INVALID: nothing to destroy (as on non-members)
  SYMMEM_REQUIRE(team != kTeamWorld, "team 0 is NVSHMEM_TEAM_WORLD, which cannot be destroyed");
  SYMMEM_TRY(require_initialized("symmem_nvshmem_team_destroy"));
  const Api* a = nullptr;
  SYMMEM_TRY(api(&a));
  a->team_destroy(team);
  return SYMMEM_OK;
}

}  // extern "C"
