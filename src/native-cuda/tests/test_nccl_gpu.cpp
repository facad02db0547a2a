// The nccl backend and NCCL windows on a real NCCL and GPU: buffers from ncclMemAlloc shared by fd,
// symmem's own all-reduce on them, the buffer registered as an NCCL_WIN_COLL_SYMMETRIC window and
// NCCL's all-reduce on its data (called from a thread on another GPU, which it leaves on the
// communicator's), free refused while the window lives, deregister then free, 200
// alloc/register/free cycles without leaking device memory, a cuda-backend buffer registered too,
// and NCCL_CUMEM_ENABLE=0: the nccl backend's message, and NCCL's "no window" answer reported as
// unsupported where NCCL gives it (NCCL 2.28.9 at world 1 was seen to give a window regardless).
// World = the GPUs (at most 2; NCCL refuses two ranks on one GPU). The library: SYMMEM_TEST_NCCL_LIB,
// else the loader's search path; not found: skipped.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_test_util.h"

namespace {

symmem_nccl_comm* join(int rank, int world, int device, int uid_pipe[2]) {
  const char* cand[] = {nccl_test_library()};
  CHECK_OK(symmem_nccl_load(cand, 1));
  uint8_t uid[SYMMEM_NCCL_UNIQUE_ID_BYTES] = {};
  if (rank == 0) {
    CHECK_OK(symmem_nccl_unique_id(uid));
    for (int r = 1; r < world; ++r) CHECK(write(uid_pipe[1], uid, sizeof uid) == sizeof uid);
  } else {
    CHECK(read(uid_pipe[0], uid, sizeof uid) == sizeof uid);
  }
  symmem_nccl_comm* c = nullptr;
  CHECK_OK(symmem_nccl_comm_init_rank(world, uid, rank, device, "group 'test'", 60000, &c));
  return c;
}

size_t device_free_bytes() {
  size_t free_b = 0, total = 0;
  CUDA_OK(cudaMemGetInfo(&free_b, &total));
  return free_b;
}

// Rank r's input element i: exact in fp32 sums for any world up to 8.
float input(int r, uint64_t i) { return static_cast<float>((i % 251) + 1000 * r); }

void check_sum(const std::vector<float>& got, int world, const char* what) {
  for (uint64_t i = 0; i < got.size(); ++i) {
    double want = 0;
    for (int r = 0; r < world; ++r) want += input(r, i);
    if (std::fabs(got[i] - want) > 0)
      TEST_FAIL("%s: element %llu is %g, expected %g", what, static_cast<unsigned long long>(i),
                got[i], want);
  }
}

void fill(symmem_buffer* b, int rank, uint64_t count) {
  std::vector<float> h(count);
  for (uint64_t i = 0; i < count; ++i) h[i] = input(rank, i);
  CHECK_OK(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 0, h.data(), count * 4));
}

std::vector<float> read_back(symmem_buffer* b, uint64_t count) {
  std::vector<float> h(count);
  CHECK_OK(symmem_buffer_copy_out(b, SYMMEM_RANK_SELF, 0, h.data(), count * 4));
  return h;
}

int rank_main(int rank, int world, int uid_pipe[2]) {
  g_rank_for_log = rank;
  const int device = rank;
  CUDA_OK(cudaSetDevice(device));
  symmem_nccl_comm* comm = join(rank, world, device, uid_pipe);
  int ma = 0, mi = 0, pa = 0;
  CHECK_OK(symmem_nccl_version(nullptr, &ma, &mi, &pa));
  if (rank == 0) std::printf("NCCL %d.%d.%d from %s, world %d\n", ma, mi, pa, symmem_nccl_library_path(), world);
  Names names("test_nccl_gpu", world);
  symmem_backend* be = nullptr;
  const uint64_t count = 1000003;  // odd on purpose
  symmem_buffer* b = make_imported_buffer("nccl", device, names, rank, world, count * 4, &be, 20000);
  symmem_backend_info info;
  CHECK_OK(symmem_backend_get_info(be, &info));
  CHECK(std::strcmp(info.name, "nccl") == 0 && info.device == device);

  // symmem's kernels on ncclMemAlloc memory.
  fill(b, rank, count);
  CHECK_OK(symmem_barrier(b, 0, 20000));
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, count, nullptr,
                             nullptr, 20000));
  CHECK_OK(symmem_stream_synchronize(b, nullptr));
  check_sum(read_back(b, count), world, "symmem one-shot all-reduce on ncclMemAlloc memory");

  // The same memory as an NCCL symmetric window, and NCCL's all-reduce on its data.
  symmem_nccl_window* win = nullptr;
  CHECK_OK(symmem_nccl_window_register(comm, b, 1, 60000, &win));
  CHECK(win != nullptr);
  CHECK_STATUS(symmem_buffer_free(b), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("still registered");
  fill(b, rank, count);
  void* data = symmem_buffer_ptr(b, SYMMEM_RANK_SELF);
  // Called from a thread on another GPU (where there is one), the collective runs on the
  // communicator's device and leaves it the thread's current device (docs/nccl.md).
  int ngpu = 0;
  CUDA_OK(cudaGetDeviceCount(&ngpu));
  if (ngpu >= 2) CUDA_OK(cudaSetDevice((device + 1) % ngpu));
  CHECK_OK(symmem_nccl_all_reduce(comm, data, data, count, 7 /* fp32 */, 0 /* sum */, nullptr, 60000));
  int current = -1;
  CUDA_OK(cudaGetDevice(&current));
  if (current != device)
    TEST_FAIL("after symmem_nccl_all_reduce the thread's current device is %d, expected the communicator's %d",
              current, device);
  CHECK_OK(symmem_nccl_comm_synchronize(comm, nullptr, 60000));
  check_sum(read_back(b, count), world, "NCCL all-reduce on the symmetric window");
  CHECK_OK(symmem_nccl_window_deregister(win, 60000));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));

  // A cuda-backend buffer (cuMem memory of symmem's own) registers just as well.
  symmem_buffer* cb = make_imported_buffer("cuda", device, names, rank, world, 1 << 20, &be, 20000);
  CHECK_OK(symmem_nccl_window_register(comm, cb, 1, 60000, &win));
  CHECK_OK(symmem_nccl_window_deregister(win, 60000));
  CHECK_OK(symmem_buffer_free(cb));
  CHECK_OK(symmem_backend_close(be));

  // Cycles: allocate, share, register, deregister, free; the device memory comes back.
  CHECK_OK(symmem_backend_open("nccl", device, &be));
  const size_t before = device_free_bytes();
  for (int i = 0; i < 200; ++i) {
    symmem_buffer* x = nullptr;
    CHECK_OK(symmem_buffer_alloc(be, (i % 7 + 1) * 65536, &x));
    exchange_and_import(x, names, rank, world, 20000);
    CHECK_OK(symmem_nccl_window_register(comm, x, 1, 60000, &win));
    CHECK_OK(symmem_nccl_window_deregister(win, 60000));
    CHECK_OK(symmem_buffer_free(x));
  }
  const size_t after = device_free_bytes();
  if (after + (64u << 20) < before)
    TEST_FAIL("200 nccl alloc/register/free cycles lost %zu MiB of device memory",
              (before - after) >> 20);
  CHECK_OK(symmem_backend_close(be));

  // A window outlived by an aborted communicator: deregistering only frees the record, and the
  // buffer may be freed.
  CHECK_OK(symmem_backend_open("nccl", device, &be));
  symmem_buffer* y = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, 65536, &y));
  exchange_and_import(y, names, rank, world, 20000);
  CHECK_OK(symmem_nccl_window_register(comm, y, 1, 60000, &win));
  CHECK_OK(symmem_nccl_comm_abort(comm, "test: abort with a window registered"));
  CHECK_OK(symmem_nccl_window_deregister(win, 60000));
  CHECK_OK(symmem_buffer_free(y));
  CHECK_OK(symmem_backend_close(be));
  CHECK_OK(symmem_nccl_comm_destroy(comm, 60000));
  return 0;
}

// NCCL_CUMEM_ENABLE=0 (world 1): ncclMemAlloc falls back to cudaMalloc, which cannot be shared by fd
// (the nccl backend must say so), and the communicator has no symmetric support, so NCCL answers a
// registration with success but no window (symmem must report it).
int no_window_main(int uid_pipe[2]) {
  setenv("NCCL_CUMEM_ENABLE", "0", 1);
  CUDA_OK(cudaSetDevice(0));
  symmem_nccl_comm* comm = join(0, 1, 0, uid_pipe);
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("nccl", 0, &be));
  symmem_buffer* nb = nullptr;
  CHECK_STATUS(symmem_buffer_alloc(be, 65536, &nb), SYMMEM_ERR_SYSTEM);
  CHECK_ERROR_HAS("not a cuMem (VMM) allocation");
  std::printf("nccl backend with NCCL_CUMEM_ENABLE=0: %s\n", symmem_last_error());
  CHECK_OK(symmem_backend_close(be));
  Names names("test_nccl_gpu_nowin", 1);
  symmem_buffer* b = make_imported_buffer("cuda", 0, names, 0, 1, 65536, &be, 20000);
  symmem_nccl_window* win = nullptr;
  symmem_status st = symmem_nccl_window_register(comm, b, 1, 60000, &win);
  if (st == SYMMEM_OK) {
    // NCCL 2.28.9 at world 1 was seen to hand out a window even without cuMem: then the "no window"
    // answer cannot be provoked on this machine, and that is said rather than counted as checked.
    CHECK(win != nullptr);
    std::printf("NOTE: NCCL gave a window with NCCL_CUMEM_ENABLE=0 at world 1: the no-window report "
                "could not be provoked here (not checked)\n");
    CHECK_OK(symmem_nccl_window_deregister(win, 60000));
  } else {
    CHECK(st == SYMMEM_ERR_UNSUPPORTED);
    CHECK_ERROR_HAS("no window");
    CHECK(win == nullptr);
    std::printf("window with NCCL_CUMEM_ENABLE=0: %s\n", symmem_last_error());
  }
  CHECK_OK(symmem_buffer_free(b));  // nothing was registered
  CHECK_OK(symmem_backend_close(be));
  CHECK(symmem_nccl_comm_aborted(comm) == 0);
  CHECK_OK(symmem_nccl_comm_destroy(comm, 60000));
  return 0;
}

}  // namespace

int main() {
  const int ngpu = require_gpus("test_nccl_gpu", 1);
  std::fflush(nullptr);
  pid_t probe = fork();
  if (probe == 0) {
    const char* cand[] = {nccl_test_library()};
    _exit(symmem_nccl_load(cand, 1) == SYMMEM_OK ? 0 : 1);
  }
  int st = 0;
  waitpid(probe, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    std::printf("SKIPPED: NCCL not found at %s (set SYMMEM_TEST_NCCL_LIB)\n", nccl_test_library());
    return kSkip;
  }
  const int world = ngpu >= 2 ? 2 : 1;
  int pipe_fds[2];
  CHECK(pipe(pipe_fds) == 0);
  if (!run_ranks(world, 240, [&](int r) { return rank_main(r, world, pipe_fds); })) {
    std::printf("nccl world %d: FAILED\n", world);
    return 1;
  }
  if (!run_ranks(1, 120, [&](int) { return no_window_main(pipe_fds); })) {
    std::printf("nccl no-window case: FAILED\n");
    return 1;
  }
  std::printf("nccl world %d and the no-window case: passed\n", world);
  return 0;
}
