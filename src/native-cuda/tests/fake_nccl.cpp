// A fake libnccl.so.2 for the tests: it exports the entry points symmem resolves, with behaviour
// chosen per call by FAKE_NCCL_MODE, so the loader, the version check and every deadline/abort path
// can be exercised on a machine without a GPU or a real NCCL:
//   ok          init and collectives succeed at once
//   init_hang   ncclCommInitRankConfig answers ncclInProgress and the communicator never gets ready
//               (as when a rank never joins)
//   coll_hang   collectives (and ncclGroupEnd) answer ncclInProgress forever; on a BLOCKING
//               communicator (a split with blocking = 1) they block in the call instead, until its
//               abort flag is raised (as NCCL's bootstrap waits do), then answer ncclInternalError
//   async_error collectives answer ncclInProgress, then the async error becomes ncclRemoteError
//               (a blocking communicator answers ncclRemoteError at once)
//   split_hang  ncclCommSplit answers ncclInProgress and never completes
//   peer_absent a peer that never calls the collective. A communicator whose connections were made
//               at init (NCCL_RUNTIME_CONNECT=0 when the first init read it) enqueues at once: the
//               wait is on the device. One that connects at its first collective (NCCL's default
//               since 2.22) waits for the peer in the calling thread instead, and that wait does not
//               end on the abort flag (a 2-GPU run saw NCCL 2.28.9 stay there 60 s after the parent
//               was aborted): it gives up after kConnectGiveUpMs with ncclSystemError
// ncclCommSplit with splitShare = 1 shares the parent's abort flag, as NCCL does; ncclCommAbort
// raises the flag first.
// NCCL_RUNTIME_CONNECT is read once, at the first init of the process, as NCCL's parameter cache
// does (default 1).
// FAKE_NCCL_VERSION sets ncclGetVersion's code (default 22809). Built with FAKE_NCCL_PARTIAL it
// exports ncclGetVersion alone (a library that is not a usable NCCL).
// The fake_nccl_* functions let the test see what symmem did (aborts, finalizes, the config).
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {
struct FakeComm {
  int state;  // what ncclCommGetAsyncError reports
  int blocking = 0;
  bool connected = false;  // every algorithm's connections made at init
  std::atomic<int>* abort_flag = new std::atomic<int>(0);  // never freed: a child may share it
};
std::atomic<int> g_aborts{0}, g_finalizes{0}, g_destroys{0}, g_inits{0}, g_collectives{0}, g_splits{0};
struct {
  int blocking, split_share;
} g_split_config;
thread_local int t_group_depth = 0;
thread_local FakeComm* t_group_blocking = nullptr;  // a blocking communicator used in the open group

// Blocks as a NCCL wait for a peer does: until the communicator's abort flag is raised.
int block_until_abort(FakeComm* c) {
  while (c->abort_flag->load() == 0) usleep(200);
  return 3;
}

// NCCL_RUNTIME_CONNECT as the first init read it; -1 before.
int g_runtime_connect = -1;
int runtime_connect() {
  if (g_runtime_connect < 0) {
    const char* v = std::getenv("NCCL_RUNTIME_CONNECT");
    g_runtime_connect = v != nullptr && v[0] != '\0' ? std::atoi(v) : 1;
  }
  return g_runtime_connect;
}

// A first collective's connect to a peer that never comes, in the calling thread: deaf to the abort
// flag, it ends only when its own patience does.
constexpr int kConnectGiveUpMs = 3000;
int connect_to_absent_peer() {
  usleep(kConnectGiveUpMs * 1000);
  return 2;  // ncclSystemError
}
struct {
  size_t size;
  unsigned magic, version;
  int blocking;
  const char* commName;
} g_config;

bool mode(const char* m) {
  const char* v = std::getenv("FAKE_NCCL_MODE");
  return std::strcmp(v != nullptr ? v : "ok", m) == 0;
}
int collective(void* comm) {
  g_collectives++;
  auto* c = static_cast<FakeComm*>(comm);
  if (mode("peer_absent") && !c->connected) {
    if (!c->blocking) {
      c->state = 7;
      return 7;
    }
    if (t_group_depth > 0) return 0;  // connected at the group's end
    return connect_to_absent_peer();
  }
  if (c->blocking) {
    if (mode("async_error")) return 6;
    if (!mode("coll_hang")) return 0;
    if (t_group_depth > 0) {
      t_group_blocking = c;
      return 0;
    }
    return block_until_abort(c);
  }
  if (mode("coll_hang")) {
    c->state = 7;
    return 7;
  }
  if (mode("async_error")) {
    c->state = 6;
    return 7;
  }
  return 0;
}
}  // namespace

FAKE_API int ncclGetVersion(int* v) {
  const char* s = std::getenv("FAKE_NCCL_VERSION");
  *v = s != nullptr ? std::atoi(s) : 22809;
  return 0;
}

#ifndef FAKE_NCCL_PARTIAL
FAKE_API int ncclGetUniqueId(void* id) {
  std::memset(id, 0x5a, 128);
  return 0;
}
// The unique id travels by value: 128 bytes, as in NCCL.
struct Uid { char b[128]; };
FAKE_API int ncclCommInitRankConfig(void** comm, int nranks, Uid id, int rank, void* config) {
  (void)id;
  if (nranks < 1 || rank < 0 || rank >= nranks) return 4;
  std::memcpy(&g_config.size, config, sizeof(size_t));
  std::memcpy(&g_config.magic, static_cast<char*>(config) + 8, 4);
  std::memcpy(&g_config.version, static_cast<char*>(config) + 12, 4);
  std::memcpy(&g_config.blocking, static_cast<char*>(config) + 16, 4);
  std::memcpy(&g_config.commName, static_cast<char*>(config) + 48, sizeof(char*));
  g_inits++;
  auto* c = new FakeComm{0};
  c->connected = runtime_connect() == 0;
  *comm = c;
  if (mode("init_hang")) {
    c->state = 7;
    return 7;
  }
  return 0;
}
FAKE_API int ncclCommFinalize(void* comm) {
  g_finalizes++;
  (void)comm;
  return 0;
}
FAKE_API int ncclCommDestroy(void* comm) {
  g_destroys++;
  delete static_cast<FakeComm*>(comm);
  return 0;
}
FAKE_API int ncclCommSplit(void* comm, int color, int key, void** newcomm, void* config) {
  (void)color;
  (void)key;
  auto* parent = static_cast<FakeComm*>(comm);
  g_splits++;
  std::memcpy(&g_split_config.blocking, static_cast<char*>(config) + 16, 4);
  std::memcpy(&g_split_config.split_share, static_cast<char*>(config) + 40, 4);
  *newcomm = nullptr;
  if (mode("split_hang")) {
    parent->state = 7;
    return 7;
  }
  auto* child = new FakeComm{0};
  child->blocking = g_split_config.blocking == 1;
  child->connected = runtime_connect() == 0;
  if (g_split_config.split_share == 1) child->abort_flag = parent->abort_flag;
  *newcomm = child;
  return parent->blocking ? 0 : 7;  // a non-blocking parent: done at the next ncclCommGetAsyncError
}
FAKE_API int ncclCommAbort(void* comm) {
  static_cast<FakeComm*>(comm)->abort_flag->store(1);
  g_aborts++;
  delete static_cast<FakeComm*>(comm);
  return 0;
}
FAKE_API int ncclCommGetAsyncError(void* comm, int* err) {
  *err = static_cast<FakeComm*>(comm)->state;
  return 0;
}
FAKE_API const char* ncclGetErrorString(int r) { return r == 6 ? "remote process exited or there was a network error" : "fake error"; }
FAKE_API const char* ncclGetLastError(void*) { return "fake last error"; }
FAKE_API int ncclAllReduce(const void*, void*, size_t, int, int, void* comm, void*) { return collective(comm); }
FAKE_API int ncclReduce(const void*, void*, size_t, int, int, int, void* comm, void*) { return collective(comm); }
FAKE_API int ncclBroadcast(const void*, void*, size_t, int, int, void* comm, void*) { return collective(comm); }
FAKE_API int ncclAllGather(const void*, void*, size_t, int, void* comm, void*) { return collective(comm); }
FAKE_API int ncclReduceScatter(const void*, void*, size_t, int, int, void* comm, void*) { return collective(comm); }
FAKE_API int ncclGroupStart() {
  t_group_depth++;
  return 0;
}
FAKE_API int ncclGroupEnd() {
  if (--t_group_depth > 0) return 0;
  if (mode("peer_absent") && g_runtime_connect != 0) return connect_to_absent_peer();
  FakeComm* blocking = t_group_blocking;
  t_group_blocking = nullptr;
  if (blocking != nullptr) return block_until_abort(blocking);
  return mode("coll_hang") ? 7 : 0;
}

FAKE_API int fake_nccl_aborts() { return g_aborts; }
FAKE_API int fake_nccl_finalizes() { return g_finalizes; }
FAKE_API int fake_nccl_destroys() { return g_destroys; }
FAKE_API int fake_nccl_inits() { return g_inits; }
FAKE_API int fake_nccl_collectives() { return g_collectives; }
FAKE_API int fake_nccl_splits() { return g_splits; }
FAKE_API int fake_nccl_runtime_connect() { return g_runtime_connect; }
FAKE_API void fake_nccl_split_config(int* blocking, int* split_share) {
  *blocking = g_split_config.blocking;
  *split_share = g_split_config.split_share;
}
FAKE_API void fake_nccl_last_config(size_t* size, unsigned* magic, unsigned* version, int* blocking) {
  *size = g_config.size;
  *magic = g_config.magic;
  *version = g_config.version;
  *blocking = g_config.blocking;
}
#endif
