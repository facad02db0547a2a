// NCCL loading and the communicator's deadline/abort logic, against a fake libnccl.so.2 (built in
// this test tree, see fake_nccl.cpp) so that it runs without a GPU or a real NCCL. NCCL is loaded
// once per process, so each case runs in its own forked process.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "test_util.h"

#ifndef FAKE_NCCL_PATH
#error FAKE_NCCL_PATH must name the fake libnccl.so.2
#endif

static const char* kFake = FAKE_NCCL_PATH;
static const char* kPartial = FAKE_NCCL_PARTIAL_PATH;

template <class T>
static T fake_fn(const char* name) {
  void* h = dlopen(kFake, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) TEST_FAIL("the fake NCCL is not loaded: %s", dlerror());
  void* f = dlsym(h, name);
  if (f == nullptr) TEST_FAIL("fake NCCL lacks %s", name);
  return reinterpret_cast<T>(f);
}
static int fake_count(const char* name) { return fake_fn<int (*)()>(name)(); }

static double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

static void load_fake() {
  const char* paths[] = {kFake};
  CHECK_OK(symmem_nccl_load(paths, 1));
}

static symmem_nccl_comm* init(int nranks, int rank, const char* label, int timeout_ms) {
  uint8_t uid[SYMMEM_NCCL_UNIQUE_ID_BYTES];
  CHECK_OK(symmem_nccl_unique_id(uid));
  symmem_nccl_comm* c = nullptr;
  CHECK_OK(symmem_nccl_comm_init_rank(nranks, uid, rank, -1, label, timeout_ms, &c));
  CHECK(c != nullptr);
  return c;
}

static int buf[64];

// ---- cases ----------------------------------------------------------------------------------

static void not_loaded() {
  uint8_t uid[SYMMEM_NCCL_UNIQUE_ID_BYTES];
  CHECK(symmem_nccl_loaded() == 0);
  CHECK_STATUS(symmem_nccl_unique_id(uid), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("NCCL is not loaded");
  CHECK_STATUS(symmem_nccl_version(nullptr, nullptr, nullptr, nullptr), SYMMEM_ERR_STATE);
  CHECK(std::strcmp(symmem_nccl_library_path(), "") == 0);
  CHECK_STATUS(symmem_nccl_load(nullptr, 0), SYMMEM_ERR_INVALID_ARGUMENT);
  const char* empty[] = {""};
  CHECK_STATUS(symmem_nccl_load(empty, 1), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("candidate 0");
}

static void missing_paths() {
  const char* paths[] = {"/nonexistent/symmem-a/libnccl.so.2", "/nonexistent/symmem-b/lib/libnccl.so.2",
                         "libnccl-symmem-test-absent.so.9"};
  CHECK_STATUS(symmem_nccl_load(paths, 3), SYMMEM_ERR_NO_DEVICE);
  CHECK_ERROR_HAS("NCCL not found: tried 3 places:");
  for (const char* p : paths) {
    std::string line = std::string("\n  ") + p + ": ";
    CHECK_ERROR_HAS(line.c_str());
  }
  CHECK_ERROR_HAS("No such file or directory");
  CHECK(symmem_nccl_loaded() == 0);
}

static void partial_then_fake() {
  const char* paths[] = {"/nonexistent/libnccl.so.2", kPartial, kFake};
  CHECK_OK(symmem_nccl_load(paths, 3));
  CHECK(symmem_nccl_loaded() == 1);
  CHECK(std::strstr(symmem_nccl_library_path(), "fake_nccl/libnccl.so.2") != nullptr);
  int code = 0, major = 0, minor = 0, patch = 0;
  CHECK_OK(symmem_nccl_version(&code, &major, &minor, &patch));
  CHECK(code == 22809 && major == 2 && minor == 28 && patch == 9);
  // Loaded once: a later call with nothing loadable still succeeds and keeps the first.
  const char* none[] = {"/nonexistent/libnccl.so.2"};
  CHECK_OK(symmem_nccl_load(none, 1));
}

static void partial_only() {
  const char* paths[] = {kPartial};
  CHECK_STATUS(symmem_nccl_load(paths, 1), SYMMEM_ERR_NO_DEVICE);
  CHECK_ERROR_HAS(kPartial);
  CHECK_ERROR_HAS("does not export ncclGetUniqueId, ncclCommInitRankConfig");
}

static void too_old() {
  setenv("FAKE_NCCL_VERSION", "21305", 1);
  const char* paths[] = {kFake};
  CHECK_STATUS(symmem_nccl_load(paths, 1), SYMMEM_ERR_NO_DEVICE);
  CHECK_ERROR_HAS("NCCL 2.13.5 is too old");
}

static void init_and_collectives_ok() {
  load_fake();
  symmem_nccl_comm* c = init(2, 1, "group 'tp'", 5000);
  size_t size = 0;
  unsigned magic = 0, version = 0;
  int blocking = -1;
  fake_fn<void (*)(size_t*, unsigned*, unsigned*, int*)>("fake_nccl_last_config")(&size, &magic, &version,
                                                                                   &blocking);
  CHECK(size == 80);             // sizeof(ncclConfig_v22800)
  CHECK(magic == 0xcafebeefu);   // NCCL_CONFIG_INITIALIZER's magic
  CHECK(version == 22800);       // the layout's version, not the loaded library's
  CHECK(blocking == 0);          // non-blocking: the init's wait has a deadline
  // The data communicator: a blocking split sharing the parent's resources and abort flag.
  int split_blocking = -1, split_share = -1;
  fake_fn<void (*)(int*, int*)>("fake_nccl_split_config")(&split_blocking, &split_share);
  CHECK(fake_count("fake_nccl_splits") == 1);
  CHECK(split_blocking == 1 && split_share == 1);
  CHECK_OK(symmem_nccl_all_reduce(c, buf, buf, 7, 7, 0, nullptr, 1000));
  CHECK_OK(symmem_nccl_reduce(c, buf, nullptr, 7, 9, 1, 0, nullptr, 1000));  // rank 1: no recv needed
  CHECK_OK(symmem_nccl_broadcast(c, nullptr, buf, 7, 8, 0, nullptr, 1000));  // send only on root
  CHECK_OK(symmem_nccl_all_gather(c, buf, buf, 3, 0, nullptr, 1000));
  CHECK_OK(symmem_nccl_reduce_scatter(c, buf, buf, 3, 4, 4, nullptr, 1000));
  CHECK(fake_count("fake_nccl_collectives") == 5);
  // The measurement aid: every repetition reaches NCCL; nothing for a bad count or inside a group.
  CHECK_OK(symmem_nccl_all_reduce_repeated(c, buf, buf, 7, 7, 0, nullptr, 1000, 3));
  CHECK(fake_count("fake_nccl_collectives") == 8);
  CHECK_STATUS(symmem_nccl_all_reduce_repeated(c, buf, buf, 7, 7, 0, nullptr, 1000, 0),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("times must be >= 1, got 0");
  CHECK_STATUS(symmem_nccl_all_reduce_repeated(c, buf, buf, 7, 12, 0, nullptr, 1000, 2),
               SYMMEM_ERR_INVALID_ARGUMENT);  // a bad dtype, as for one call
  CHECK(fake_count("fake_nccl_collectives") == 8);
  CHECK_OK(symmem_nccl_group_start());
  CHECK_STATUS(symmem_nccl_all_reduce_repeated(c, buf, buf, 7, 7, 0, nullptr, 1000, 2), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("not inside symmem_nccl_group_start/end");
  CHECK(fake_count("fake_nccl_collectives") == 8);
  CHECK_OK(symmem_nccl_all_reduce(c, buf, buf, 7, 7, 0, nullptr, 1000));
  CHECK_OK(symmem_nccl_all_reduce(c, buf, buf, 7, 7, 0, nullptr, 1000));
  CHECK_STATUS(symmem_nccl_comm_destroy(c, 1000), SYMMEM_ERR_STATE);  // in an open group
  CHECK_ERROR_HAS("group that is still open");
  CHECK_OK(symmem_nccl_group_end(1000));
  CHECK_STATUS(symmem_nccl_group_end(1000), SYMMEM_ERR_STATE);
  CHECK(symmem_nccl_comm_aborted(c) == 0);
  CHECK_OK(symmem_nccl_comm_destroy(c, 1000));
  CHECK(fake_count("fake_nccl_finalizes") == 2 && fake_count("fake_nccl_destroys") == 2);  // child, parent
  CHECK(fake_count("fake_nccl_aborts") == 0);
  CHECK_OK(symmem_nccl_comm_destroy(nullptr, 1000));
}

static void bad_args() {
  load_fake();
  uint8_t uid[SYMMEM_NCCL_UNIQUE_ID_BYTES] = {};
  symmem_nccl_comm* c = nullptr;
  CHECK_STATUS(symmem_nccl_comm_init_rank(0, uid, 0, -1, nullptr, 100, &c), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("nranks must be >= 1, got 0");
  CHECK_STATUS(symmem_nccl_comm_init_rank(2, uid, 2, -1, nullptr, 100, &c), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("rank 2 is out of range 0..1");
  CHECK_STATUS(symmem_nccl_comm_init_rank(2, nullptr, 0, -1, nullptr, 100, &c), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("unique_id is NULL");
  CHECK_STATUS(symmem_nccl_comm_init_rank(2, uid, 0, -1, nullptr, 0, &c), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("timeout_ms must be > 0");
  CHECK_STATUS(symmem_nccl_comm_init_rank(2, uid, 0, -2, nullptr, 100, &c), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("device must be >= -1");
  CHECK(fake_count("fake_nccl_inits") == 0);  // nothing reached NCCL

  c = init(2, 0, nullptr, 1000);
  CHECK_STATUS(symmem_nccl_all_reduce(c, buf, buf, 7, 12, 0, nullptr, 100), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("datatype 12");
  CHECK_STATUS(symmem_nccl_all_reduce(c, buf, buf, 7, 7, 5, nullptr, 100), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("op 5");
  CHECK_STATUS(symmem_nccl_all_reduce(c, nullptr, buf, 7, 7, 0, nullptr, 100), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("send is NULL");
  CHECK_STATUS(symmem_nccl_broadcast(c, buf, buf, 7, 7, 2, nullptr, 100), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("root 2 is out of range for communicator of 2 ranks (0..1)");
  CHECK_STATUS(symmem_nccl_reduce(c, buf, nullptr, 7, 7, 0, 0, nullptr, 100), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("recv is NULL on the root rank 0");
  CHECK_STATUS(symmem_nccl_all_reduce(nullptr, buf, buf, 7, 7, 0, nullptr, 100), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(symmem_nccl_all_reduce(c, buf, buf, 7, 7, 0, nullptr, 0), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK(fake_count("fake_nccl_collectives") == 0);
  CHECK_OK(symmem_nccl_comm_destroy(c, 1000));
}

// A rank that never joins: non-blocking init ends at the deadline, aborted, naming what and who;
// then a new communicator works.
static void init_deadline_then_recover() {
  load_fake();
  setenv("FAKE_NCCL_MODE", "init_hang", 1);
  uint8_t uid[SYMMEM_NCCL_UNIQUE_ID_BYTES];
  CHECK_OK(symmem_nccl_unique_id(uid));
  symmem_nccl_comm* c = reinterpret_cast<symmem_nccl_comm*>(0x1);
  auto t0 = std::chrono::steady_clock::now();
  CHECK_STATUS(symmem_nccl_comm_init_rank(2, uid, 0, -1, "group 'world'", 300, &c), SYMMEM_ERR_TIMEOUT);
  double took = ms_since(t0);
  CHECK(c == nullptr);
  CHECK(took >= 290 && took < 2000);
  CHECK_ERROR_HAS("ncclCommInitRank(device -1) on group 'world' (rank 0 of 2)");
  CHECK_ERROR_HAS("within 300 ms; communicator aborted");
  CHECK(fake_count("fake_nccl_aborts") == 1);

  setenv("FAKE_NCCL_MODE", "ok", 1);
  symmem_nccl_comm* fresh = init(1, 0, nullptr, 1000);
  CHECK_OK(symmem_nccl_all_reduce(fresh, buf, buf, 7, 7, 0, nullptr, 1000));
  CHECK_OK(symmem_nccl_comm_destroy(fresh, 1000));
}

// A collective that never completes: aborted at the deadline; the communicator refuses more work;
// destroy just frees it; a new one works.
static void collective_deadline() {
  load_fake();
  symmem_nccl_comm* c = init(2, 1, "group 'dp'", 1000);
  setenv("FAKE_NCCL_MODE", "coll_hang", 1);
  auto t0 = std::chrono::steady_clock::now();
  CHECK_STATUS(symmem_nccl_all_reduce(c, buf, buf, 7, 9, 4, nullptr, 250), SYMMEM_ERR_TIMEOUT);
  double took = ms_since(t0);
  CHECK(took >= 240 && took < 2000);
  CHECK_ERROR_HAS("allReduce(bf16 avg, 7 elements) on group 'dp' (rank 1 of 2)");
  CHECK_ERROR_HAS("within 250 ms; communicator aborted");
  CHECK(fake_count("fake_nccl_aborts") == 2);  // the parent (the lever), then the blocked child
  CHECK(symmem_nccl_comm_aborted(c) == 1);
  setenv("FAKE_NCCL_MODE", "ok", 1);
  CHECK_STATUS(symmem_nccl_all_reduce(c, buf, buf, 7, 7, 0, nullptr, 250), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("the communicator was aborted");
  CHECK_OK(symmem_nccl_comm_destroy(c, 1000));
  CHECK(fake_count("fake_nccl_finalizes") == 0);  // no finalize on an aborted communicator

  // A group whose end never completes: every communicator in it is aborted.
  symmem_nccl_comm* g = init(1, 0, nullptr, 1000);
  CHECK_OK(symmem_nccl_group_start());
  setenv("FAKE_NCCL_MODE", "coll_hang", 1);
  CHECK_OK(symmem_nccl_all_gather(g, buf, buf, 1, 7, nullptr, 1000));
  CHECK_STATUS(symmem_nccl_group_end(200), SYMMEM_ERR_TIMEOUT);
  CHECK_ERROR_HAS("group of operations (last: allGather(fp32, 1 element)) on communicator of 1 rank");
  CHECK(symmem_nccl_comm_aborted(g) == 1);
  CHECK_OK(symmem_nccl_comm_destroy(g, 1000));
  setenv("FAKE_NCCL_MODE", "ok", 1);
  symmem_nccl_comm* fresh = init(1, 0, nullptr, 1000);
  CHECK_OK(symmem_nccl_all_reduce(fresh, buf, buf, 7, 7, 0, nullptr, 1000));
  CHECK_OK(symmem_nccl_comm_destroy(fresh, 1000));
}

static void async_error() {
  load_fake();
  symmem_nccl_comm* c = init(2, 0, nullptr, 1000);
  setenv("FAKE_NCCL_MODE", "async_error", 1);
  CHECK_STATUS(symmem_nccl_all_reduce(c, buf, buf, 7, 7, 0, nullptr, 1000), SYMMEM_ERR_SYSTEM);
  CHECK_ERROR_HAS("NCCL error 6 ncclRemoteError (remote process exited or there was a network error)");
  CHECK_ERROR_HAS("communicator aborted");
  CHECK(symmem_nccl_comm_aborted(c) == 1);
  CHECK_OK(symmem_nccl_comm_destroy(c, 1000));
}

// symmem_abort ends a waiting collective at once and aborts an idle communicator too; while the
// process is aborted nothing new starts; after a reset a new communicator works.
static void process_abort() {
  load_fake();
  symmem_nccl_comm* idle = init(2, 0, "group 'idle'", 1000);
  symmem_nccl_comm* busy = init(2, 0, "group 'busy'", 1000);
  setenv("FAKE_NCCL_MODE", "coll_hang", 1);
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    symmem_abort("rank 1 is gone (test)");
  });
  auto t0 = std::chrono::steady_clock::now();
  CHECK_STATUS(symmem_nccl_all_reduce(busy, buf, buf, 7, 7, 0, nullptr, 30000), SYMMEM_ERR_ABORTED);
  double took = ms_since(t0);
  killer.join();
  CHECK(took < 3000);
  CHECK_ERROR_HAS("allReduce(fp32 sum, 7 elements) on group 'busy' (rank 0 of 2): aborted: symmem_abort: rank 1 is gone (test)");
  CHECK(symmem_nccl_comm_aborted(idle) == 1);
  CHECK(symmem_nccl_comm_aborted(busy) == 1);
  CHECK(fake_count("fake_nccl_aborts") == 4);  // parent and child of each
  setenv("FAKE_NCCL_MODE", "ok", 1);
  uint8_t uid[SYMMEM_NCCL_UNIQUE_ID_BYTES];
  CHECK_OK(symmem_nccl_unique_id(uid));
  symmem_nccl_comm* c = nullptr;
  CHECK_STATUS(symmem_nccl_comm_init_rank(1, uid, 0, -1, nullptr, 1000, &c), SYMMEM_ERR_ABORTED);
  CHECK_ERROR_HAS("ncclCommInitRank, not started: aborted: rank 1 is gone (test)");
  CHECK_OK(symmem_nccl_comm_destroy(idle, 1000));
  CHECK_OK(symmem_nccl_comm_destroy(busy, 1000));
  symmem_abort_reset();
  symmem_nccl_comm* fresh = init(1, 0, nullptr, 1000);
  CHECK_OK(symmem_nccl_all_reduce(fresh, buf, buf, 7, 7, 0, nullptr, 1000));
  CHECK_OK(symmem_nccl_comm_destroy(fresh, 1000));
  CHECK(fake_count("fake_nccl_aborts") == 4);
}

static void explicit_abort() {
  load_fake();
  symmem_nccl_comm* c = init(2, 0, nullptr, 1000);
  CHECK_STATUS(symmem_nccl_comm_abort(c, ""), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_OK(symmem_nccl_comm_abort(c, "the application gave up"));
  CHECK(symmem_nccl_comm_aborted(c) == 1);
  CHECK_STATUS(symmem_nccl_all_gather(c, buf, buf, 1, 7, nullptr, 1000), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("the communicator was aborted (the application gave up)");
  CHECK_OK(symmem_nccl_comm_destroy(c, 1000));
  CHECK(fake_count("fake_nccl_aborts") == 2);
}

// symmem_nccl_comm_abort from another thread ends a collective blocked inside NCCL (its thread holds
// the communicator's mutex): the abort pulls the lever instead of waiting for the mutex.
static void abort_ends_a_blocked_collective() {
  load_fake();
  symmem_nccl_comm* c = init(2, 0, "group 'tp'", 1000);
  setenv("FAKE_NCCL_MODE", "coll_hang", 1);
  std::thread aborter([c] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    CHECK_OK(symmem_nccl_comm_abort(c, "the peer is gone (test)"));
  });
  auto t0 = std::chrono::steady_clock::now();
  CHECK_STATUS(symmem_nccl_all_reduce(c, buf, buf, 7, 7, 0, nullptr, 30000), SYMMEM_ERR_ABORTED);
  double took = ms_since(t0);
  aborter.join();
  CHECK(took >= 140 && took < 3000);
  CHECK_ERROR_HAS("allReduce(fp32 sum, 7 elements) on group 'tp' (rank 0 of 2): aborted: the peer is gone (test)");
  CHECK(symmem_nccl_comm_aborted(c) == 1);
  CHECK(fake_count("fake_nccl_aborts") == 2);
  setenv("FAKE_NCCL_MODE", "ok", 1);
  CHECK_OK(symmem_nccl_comm_destroy(c, 1000));
  symmem_nccl_comm* fresh = init(1, 0, nullptr, 1000);
  CHECK_OK(symmem_nccl_all_reduce(fresh, buf, buf, 7, 7, 0, nullptr, 1000));
  CHECK_OK(symmem_nccl_comm_destroy(fresh, 1000));
}

// A split that never completes (a rank stopped between its init and the split): the init ends at
// its deadline, naming the split, with the parent aborted.
static void split_deadline() {
  load_fake();
  setenv("FAKE_NCCL_MODE", "split_hang", 1);
  uint8_t uid[SYMMEM_NCCL_UNIQUE_ID_BYTES];
  CHECK_OK(symmem_nccl_unique_id(uid));
  symmem_nccl_comm* c = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  CHECK_STATUS(symmem_nccl_comm_init_rank(2, uid, 1, -1, "group 'world'", 300, &c), SYMMEM_ERR_TIMEOUT);
  double took = ms_since(t0);
  CHECK(c == nullptr);
  CHECK(took >= 290 && took < 2000);
  CHECK_ERROR_HAS("ncclCommSplit(blocking data communicator) on group 'world' (rank 1 of 2)");
  CHECK_ERROR_HAS("within 300 ms; communicator aborted");
  CHECK(fake_count("fake_nccl_aborts") == 1);
}

// A peer that never calls the collective (it skipped it, or hangs elsewhere): the collective must not
// wait for it in the calling thread, where no deadline reaches reliably (NCCL's default since 2.22
// connects an algorithm's peers at its first collective, in that thread). symmem has NCCL connect
// everything at init, under the init's deadline, so the call enqueues at once and the wait happens
// on the device, where synchronize's deadline and abort end it (not reachable without a GPU).
static void a_first_collective_does_not_wait_for_an_absent_peer() {
  load_fake();
  symmem_nccl_comm* c = init(2, 0, "group 'dp'", 1000);
  setenv("FAKE_NCCL_MODE", "peer_absent", 1);
  auto t0 = std::chrono::steady_clock::now();
  CHECK_OK(symmem_nccl_all_reduce(c, buf, buf, 7, 7, 0, nullptr, 250));
  CHECK_OK(symmem_nccl_group_start());
  CHECK_OK(symmem_nccl_all_gather(c, buf, buf, 1, 7, nullptr, 250));
  CHECK_OK(symmem_nccl_group_end(250));
  double took = ms_since(t0);
  CHECK(took < 200);
  CHECK(symmem_nccl_comm_aborted(c) == 0);
  CHECK_OK(symmem_nccl_comm_abort(c, "the peer never came (test)"));
  CHECK_OK(symmem_nccl_comm_destroy(c, 1000));
  CHECK(fake_count("fake_nccl_runtime_connect") == 0);  // what NCCL's first init read
  CHECK(std::strcmp(symmem_nccl_runtime_connect(), "NCCL_RUNTIME_CONNECT=0 (set by symmem)") == 0);
}

// A NCCL_RUNTIME_CONNECT the user set is NCCL's to read, unchanged; symmem says where it came from.
static void runtime_connect_from_the_environment() {
  setenv("NCCL_RUNTIME_CONNECT", "1", 1);
  CHECK(std::strcmp(symmem_nccl_runtime_connect(), "") == 0);  // before loading
  load_fake();
  CHECK(std::strcmp(symmem_nccl_runtime_connect(), "NCCL_RUNTIME_CONNECT=1 (from the environment)") == 0);
  symmem_nccl_comm* c = init(1, 0, nullptr, 1000);
  CHECK(fake_count("fake_nccl_runtime_connect") == 1);
  CHECK(std::strcmp(std::getenv("NCCL_RUNTIME_CONNECT"), "1") == 0);
  CHECK_OK(symmem_nccl_all_reduce(c, buf, buf, 7, 7, 0, nullptr, 1000));
  CHECK_OK(symmem_nccl_comm_destroy(c, 1000));
}

// The fake is a NCCL without ncclMemAlloc and the window calls (as a NCCL older than 2.19 / 2.27
// is): the nccl backend and window registration must say which NCCL they need, and argument
// errors come first. Registration of real GPU buffers is covered on the GPU (test_nccl_gpu).
static void symmetric_memory_needs_newer_nccl() {
  load_fake();
  symmem_backend* be = nullptr;
  CHECK_STATUS(symmem_backend_open("nccl", 0, &be), SYMMEM_ERR_UNSUPPORTED);
  CHECK_ERROR_HAS("no ncclMemAlloc");
  CHECK(be == nullptr);
  symmem_nccl_comm* c = init(1, 0, "group 'world'", 5000);
  CHECK_OK(symmem_backend_open("host", -1, &be));
  symmem_buffer* b = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, 4096, &b));
  symmem_nccl_window* w = reinterpret_cast<symmem_nccl_window*>(&buf);
  CHECK_STATUS(symmem_nccl_window_register(c, b, 1, 1000, nullptr), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("out is NULL");
  CHECK_STATUS(symmem_nccl_window_register(nullptr, b, 1, 1000, &w), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("comm is NULL");
  CHECK(w == nullptr);
  CHECK_STATUS(symmem_nccl_window_register(c, nullptr, 1, 1000, &w), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("buffer is NULL");
  CHECK_STATUS(symmem_nccl_window_register(c, b, 2, 1000, &w), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("flags 2");
  CHECK_STATUS(symmem_nccl_window_register(c, b, 1, 0, &w), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("timeout_ms must be > 0");
  CHECK_STATUS(symmem_nccl_window_register(c, b, 1, 1000, &w), SYMMEM_ERR_UNSUPPORTED);
  CHECK_ERROR_HAS("has no ncclCommWindowRegister");
  CHECK_ERROR_HAS("2.27");
  CHECK(w == nullptr);
  CHECK_OK(symmem_nccl_window_deregister(nullptr, 1000));
  CHECK_OK(symmem_buffer_free(b));  // no window was registered on it
  CHECK_OK(symmem_backend_close(be));
  CHECK(symmem_nccl_comm_aborted(c) == 0);  // refusals leave the communicator usable
  CHECK_OK(symmem_nccl_comm_destroy(c, 1000));
}

struct Case {
  const char* name;
  void (*fn)();
};

int main() {
  if (!symmem_built_with_cuda()) {
    // The NCCL module is built with CUDA only; the stub must say so rather than pretend.
    const char* paths[] = {kFake};
    CHECK_STATUS(symmem_nccl_load(paths, 1), SYMMEM_ERR_UNSUPPORTED);
    CHECK_ERROR_HAS("built without CUDA");
    std::printf("no CUDA in this build: checked that the NCCL calls say so\n");
    return 0;
  }
  const Case cases[] = {{"not_loaded", not_loaded},
                        {"missing_paths", missing_paths},
                        {"partial_then_fake", partial_then_fake},
                        {"partial_only", partial_only},
                        {"too_old", too_old},
                        {"init_and_collectives_ok", init_and_collectives_ok},
                        {"bad_args", bad_args},
                        {"init_deadline_then_recover", init_deadline_then_recover},
                        {"collective_deadline", collective_deadline},
                        {"async_error", async_error},
                        {"process_abort", process_abort},
                        {"explicit_abort", explicit_abort},
                        {"abort_ends_a_blocked_collective", abort_ends_a_blocked_collective},
                        {"split_deadline", split_deadline},
                        {"a_first_collective_does_not_wait_for_an_absent_peer",
                         a_first_collective_does_not_wait_for_an_absent_peer},
                        {"runtime_connect_from_the_environment", runtime_connect_from_the_environment},
                        {"symmetric_memory_needs_newer_nccl", symmetric_memory_needs_newer_nccl}};
  int failed = 0;
  for (const Case& c : cases) {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      alarm(20);  // a hang is a failure, not a stuck ctest
      unsetenv("FAKE_NCCL_MODE");
      unsetenv("FAKE_NCCL_VERSION");
      unsetenv("NCCL_RUNTIME_CONNECT");
      c.fn();
      std::fflush(stderr);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::printf("%-52s %s\n", c.name, ok ? "ok" : "FAILED");
    if (!ok) failed++;
  }
  return failed == 0 ? 0 : 1;
}
