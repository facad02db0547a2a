// The host backend's worker threads (SYMMEM_HOST_THREADS): started once, with the first imported
// buffer, not per call; joined when the backend and its last buffer are gone (in either order);
// and symmem_abort ends a collective whose element work is running on them.
#include <dirent.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "test_util.h"

static int count_threads() {
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) TEST_FAIL("opendir /proc/self/task");
  int n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

// Waits until the process has `want` threads, at most 2 s. A joined thread can still be listed in
// /proc/self/task for a moment: join returns when the thread has cleared its id, and the kernel
// removes its entry a little later (seen on a loaded 2-core machine). A thread that was not joined
// stays listed, so the wait still fails then.
static void expect_threads(int want, int line) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  int n = count_threads();
  while (n != want && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = count_threads();
  }
  if (n != want) TEST_FAIL("line %d: %d threads after 2 s, expected %d", line, n, want);
}
#define EXPECT_THREADS(n) expect_threads((n), __LINE__)

static const uint64_t kCount = 8u << 20;  // 32 MiB of float32: many chunks per call

int main() {
  setenv("SYMMEM_HOST_THREADS", "4", 1);
  const int before = count_threads();
  Names names("hostpool", 1);

  // Started at import (3 workers besides the caller), not at open or per call.
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("host", 0, &be));
  EXPECT_THREADS(before);
  symmem_buffer* b = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, kCount * 4, &b));
  exchange_and_import(b, names, 0, 1);
  EXPECT_THREADS(before + 3);
  float* in = static_cast<float*>(symmem_buffer_ptr(b, 0));
  void* out = nullptr;
  CHECK_OK(symmem_local_alloc(be, kCount * 4, &out));
  for (uint64_t i = 0; i < kCount; ++i) in[i] = float(i % 1000) * 0.5f;
  for (int k = 0; k < 3; ++k)
    CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_AVG, kCount, out, nullptr, 10000));
  for (uint64_t i = 0; i < kCount; ++i)
    if (static_cast<float*>(out)[i] != in[i]) TEST_FAIL("world 1 avg [%llu]", (unsigned long long)i);
  EXPECT_THREADS(before + 3);

  // An abort while calls run back to back ends them promptly, with the reason.
  std::atomic<int64_t> aborted_at{0};
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    aborted_at = std::chrono::steady_clock::now().time_since_epoch().count();
    CHECK_OK(symmem_abort("test abort"));
  });
  symmem_status s = SYMMEM_OK;
  int calls = 0;
  while (s == SYMMEM_OK && calls < 100000) {
    s = symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kCount, out, nullptr, 10000);
    ++calls;
  }
  const int64_t ended = std::chrono::steady_clock::now().time_since_epoch().count();
  aborter.join();
  CHECK(s == SYMMEM_ERR_ABORTED);
  CHECK_ERROR_HAS("aborted: test abort");
  const double late_ms = (ended - aborted_at.load()) / 1e6;
  if (late_ms > 1000) TEST_FAIL("the collective ended %.1f ms after the abort", late_ms);
  symmem_abort_reset();
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_SUM, kCount, out, nullptr, 10000));
  CHECK(static_cast<float*>(out)[kCount - 1] == in[kCount - 1]);

  // The backend closed first: the buffer keeps the workers until it is freed, then they are joined.
  CHECK_OK(symmem_local_free(be, out));
  CHECK_OK(symmem_backend_close(be));
  EXPECT_THREADS(before + 3);
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_SUM, 1024, nullptr, nullptr, 10000));
  CHECK_OK(symmem_buffer_free(b));
  EXPECT_THREADS(before);

  // One thread per rank: no workers at all.
  setenv("SYMMEM_HOST_THREADS", "1", 1);
  CHECK_OK(symmem_backend_open("host", 0, &be));
  CHECK_OK(symmem_buffer_alloc(be, 4096, &b));
  exchange_and_import(b, names, 0, 1);
  EXPECT_THREADS(before);
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  std::printf("test_host_pool: OK (abort ended the calls %.1f ms after it, after %d calls)\n", late_ms, calls);
  return 0;
}
