// Support for the GPU tests: CUDA checks, a device count taken in a child (the parent must not
// initialise CUDA before it forks the ranks), the SKIP convention, fd exchange and import.
#pragma once
#include <cuda_runtime.h>
#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "test_util.h"

#define CUDA_OK(expr)                                                                   \
  do {                                                                                  \
    cudaError_t e_ = (expr);                                                            \
    if (e_ != cudaSuccess) TEST_FAIL("%s: %s", #expr, cudaGetErrorString(e_));          \
  } while (0)

// CTest marks exit code 77 as skipped (SKIP_RETURN_CODE).
constexpr int kSkip = 77;

// Visible CUDA devices, counted in a forked child so that this process stays CUDA-free.
// Host data into device memory, landed before any stream reads it. cudaMemcpy from pageable memory
// may return once the data is staged, before its DMA on the legacy stream is done, and a
// collective on a non-blocking stream does not wait for that stream: a peer could read the old
// data (a stale element at the end of the input, seen on a shared H100).
inline void copy_to_device(void* dst, const void* src, size_t bytes) {
  CUDA_OK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());
}

inline int gpu_count_in_child() {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int n = 0;
    if (symmem_cuda_device_count(&n) != SYMMEM_OK) n = 0;
    _exit(n > 100 ? 100 : n);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

// The worlds a multi-rank test runs: SYMMEM_TEST_WORLDS=2,3,4 (each 2..8) where given, else
// `fallback`. A malformed value ends the test with a message naming it (exit 1).
inline std::vector<int> test_worlds(const char* test, const std::vector<int>& fallback) {
  const char* w = std::getenv("SYMMEM_TEST_WORLDS");
  if (w == nullptr || *w == '\0') return fallback;
  std::vector<int> worlds;
  for (const char* p = w; *p;) {
    char* end = nullptr;
    const long v = std::strtol(p, &end, 10);
    if (end == p || v < 2 || v > 8 || (*end != ',' && *end != '\0')) {
      std::fprintf(stderr, "%s: SYMMEM_TEST_WORLDS=%s: each world must be an integer in 2..8, "
                   "separated by commas\n", test, w);
      std::exit(1);
    }
    worlds.push_back(int(v));
    p = *end == ',' ? end + 1 : end;
  }
  return worlds;
}

// Whether several ranks may share a GPU (SYMMEM_ALLOW_OVERLAPPING_DEVICES=1: correctness only).
inline bool overlapping_devices_allowed() {
  const char* o = std::getenv("SYMMEM_ALLOW_OVERLAPPING_DEVICES");
  return o != nullptr && std::strcmp(o, "1") == 0;
}

// Runs a multi-rank test at world 2, and at worlds 3 and 4 where every rank has a GPU of its own
// (their kernels differ there), or at SYMMEM_TEST_WORLDS; a world above `gpus` runs only with
// SYMMEM_ALLOW_OVERLAPPING_DEVICES=1. run_world(world) forks the ranks and is true when all passed.
// Returns the test's exit code: 1 at the first world that failed, kSkip when none ran, else 0.
inline int run_worlds(const char* test, int gpus, const std::function<bool(int)>& run_world) {
  std::vector<int> fallback = {2};
  for (int w : {3, 4})
    if (w <= gpus) fallback.push_back(w);
  int ran = 0;
  for (int world : test_worlds(test, fallback)) {
    if (world > gpus && !overlapping_devices_allowed()) {
      std::printf("world %d: SKIPPED (%d GPU(s); SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 runs several ranks "
                  "per GPU)\n", world, gpus);
      continue;
    }
    if (!run_world(world)) {
      std::fprintf(stderr, "FAILED: %s, world %d\n", test, world);
      return 1;
    }
    ++ran;
  }
  if (ran == 0) {
    std::printf("SKIPPED: %s needs a GPU per rank, or SYMMEM_ALLOW_OVERLAPPING_DEVICES=1\n", test);
    return kSkip;
  }
  std::printf("%s: OK\n", test);
  return 0;
}

// Returns the GPU count, or exits 77 with the SKIPPED line when there is none (or too few).
inline int require_gpus(const char* test, int at_least) {
  if (!symmem_built_with_cuda()) {
    std::printf("SKIPPED: %s: libsymmem was built without CUDA\n", test);
    std::exit(kSkip);
  }
  int n = gpu_count_in_child();
  if (n == 0) {
    std::printf("SKIPPED: no CUDA device (%s)\n", test);
    std::exit(kSkip);
  }
  if (n < at_least) {
    std::printf("SKIPPED: %s needs %d CUDA devices, this machine has %d\n", test, at_least, n);
    std::exit(kSkip);
  }
  return n;
}

// Alloc on `device`, exchange fds over a channel, import. Returns the imported buffer.
inline symmem_buffer* make_cuda_buffer(const char* test, int rank, int world, int device,
                                       uint64_t bytes, symmem_backend** be_out) {
  Names names(test, world);
  CUDA_OK(cudaSetDevice(device));
  return make_imported_buffer("cuda", device, names, rank, world, bytes, be_out, 20000);
}

// The NCCL library the NCCL tests and benches open at run time: SYMMEM_TEST_NCCL_LIB, else libnccl.so.2
// through the loader's search path.
inline const char* nccl_test_library() {
  const char* p = std::getenv("SYMMEM_TEST_NCCL_LIB");
  return p != nullptr && *p != '\0' ? p : "libnccl.so.2";
}

// A barrier of `world` forked processes over two counters in memory they share (Shared has atomics
// `arrived` and `generation`): the last to arrive opens the next generation.
template <class Shared>
void shm_barrier(Shared* shared, int world) {
  const auto gen = shared->generation.load();
  if (shared->arrived.fetch_add(1) + 1 == world) {
    shared->arrived.store(0);
    shared->generation.fetch_add(1);
  } else {
    while (shared->generation.load() == gen) sched_yield();
  }
}

// NVSHMEM's host library for the GPU tests and the bench: SYMMEM_TEST_NVSHMEM_LIB, else the soname for
// the loader's search path.
inline const char* nvshmem_test_library() {
  const char* p = std::getenv("SYMMEM_TEST_NVSHMEM_LIB");
  return p != nullptr && *p != '\0' ? p : "libnvshmem_host.so.3";
}

// Loads NVSHMEM (its path into `path`, cap bytes) and joins the world of forked ranks: rank 0's unique
// id reaches the others over `uid_pipe` (made before fork), as the store carries it in the product.
inline void join_nvshmem_world(int rank, int world, int device, int uid_pipe[2], char* path, size_t cap) {
  const char* cand[] = {nvshmem_test_library()};
  CHECK_OK(symmem_nvshmem_load(cand, 1, path, cap));
  uint8_t uid[SYMMEM_NVSHMEM_UNIQUEID_BYTES] = {};
  if (rank == 0) {
    CHECK_OK(symmem_nvshmem_get_uniqueid(uid));
    for (int r = 1; r < world; ++r) CHECK(write(uid_pipe[1], uid, sizeof uid) == sizeof uid);
  } else {
    CHECK(read(uid_pipe[0], uid, sizeof uid) == sizeof uid);
  }
  CHECK_OK(symmem_nvshmem_init(device, rank, world, uid));
}
