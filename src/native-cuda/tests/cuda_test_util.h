// Support for the GPU tests: CUDA checks, a device count taken in a child (the parent must not
// initialise CUDA before it forks the ranks), the SKIP convention, fd exchange and import.
#pragma once
#include <cuda_runtime.h>

#include <random>

#include "test_util.h"

#define CUDA_OK(expr)                                                                   \
  do {                                                                                  \
    cudaError_t e_ = (expr);                                                            \
    if (e_ != cudaSuccess) TEST_FAIL("%s: %s", #expr, cudaGetErrorString(e_));          \
  } while (0)

// CTest marks exit code 77 as skipped (SKIP_RETURN_CODE).
constexpr int kSkip = 77;

// Visible CUDA devices, counted in a forked child so that this process stays CUDA-free.
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
