// symmem_abort reaches device kernels: a barrier kernel and a collective kernel waiting for a rank
// that never comes give up (through the pinned abort word) long before their deadline, and the
// synchronising call reports SYMMEM_ERR_ABORTED naming the operation, the awaited rank and the
// reason. After a reset, the next wait times out as usual.
#include <chrono>
#include <thread>

#include "cuda_test_util.h"

static const int kLong = 30000;  // ms

static std::thread abort_after(int ms) {
  return std::thread([ms] {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    symmem_abort("rank 1 is gone (test)");
  });
}

// A bf16 one-shot of `count` elements launched while rank 1 never comes: symmem_abort 200 ms later
// must end it well before its deadline, with the operation and the awaited rank named.
static void one_shot_ends_at_abort(symmem_buffer* b, cudaStream_t s, void* out, uint64_t count) {
  symmem_abort_reset();
  std::thread t = abort_after(200);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_BFLOAT16, SYMMEM_SUM, count, out, s, kLong));
  CHECK_STATUS(symmem_stream_synchronize(b, s), SYMMEM_ERR_ABORTED);
  const double took = seconds_since(t0);
  t.join();
  if (took > 5.0) TEST_FAIL("all-reduce kernel of %llu elements took %.1f s to notice the abort",
                            (unsigned long long)count, took);
  CHECK_ERROR_HAS("all_reduce one-shot (barrier 1 of 2) waiting for rank 1");
  CHECK_ERROR_HAS("rank 1 is gone (test)");
}

static int rank_main(int rank, int world, int ngpu) {
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_cuda_buffer("cudaabort", rank, world, rank % ngpu, 1 << 20, &be);
  // A collective cut short leaves its buffer out of step (later collectives on it are refused): the
  // second one below runs on a buffer of its own.
  symmem_backend* be2 = nullptr;
  symmem_buffer* b2 = make_cuda_buffer("cudaabort2", rank, world, rank % ngpu, 1 << 20, &be2);
  if (rank == 1) {
    sleep(6);  // keeps its memory mapped, never signals: rank 0 can only be released by the abort
    CHECK_OK(symmem_buffer_free(b));
    CHECK_OK(symmem_backend_close(be));
    CHECK_OK(symmem_buffer_free(b2));
    CHECK_OK(symmem_backend_close(be2));
    return 0;
  }
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));

  std::thread t = abort_after(200);
  auto t0 = std::chrono::steady_clock::now();
  CHECK_OK(symmem_barrier_on_stream(b, 0, s, kLong));
  CHECK_STATUS(symmem_stream_synchronize(b, s), SYMMEM_ERR_ABORTED);
  double took = seconds_since(t0);
  t.join();
  if (took > 5.0) TEST_FAIL("barrier kernel took %.1f s to notice the abort", took);
  CHECK_ERROR_HAS("barrier(channel 0) waiting for rank 1: aborted: rank 1 is gone (test)");

  // Already aborted: a collective is refused before it is launched.
  void* out = nullptr;
  CUDA_OK(cudaMalloc(&out, 1 << 20));
  t0 = std::chrono::steady_clock::now();
  CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_BFLOAT16, SYMMEM_SUM, 1000, out, s, kLong),
               SYMMEM_ERR_ABORTED);
  if (seconds_since(t0) > 5.0) TEST_FAIL("all-reduce after the abort took %.1f s", seconds_since(t0));
  CHECK_ERROR_HAS("symmem_all_reduce, not started: aborted: rank 1 is gone (test)");
  CHECK_OK(symmem_stream_synchronize(b, s));  // nothing was launched

  // A collective kernel already waiting on the device leaves too.
  one_shot_ends_at_abort(b, s, out, 1000);
  // Host-synchronous calls report it as well.
  CHECK_STATUS(symmem_barrier(b, 2, kLong), SYMMEM_ERR_ABORTED);
  // The same from a one-shot whose warps wait chunk by chunk (the 128-byte lines at world 2 on GPUs
  // of their own, else the push one-shot).
  one_shot_ends_at_abort(b2, s, out, 300000);

  // Reset: a wait times out again at its own deadline.
  symmem_abort_reset();
  CHECK_STATUS(symmem_barrier(b, 3, 300), SYMMEM_ERR_TIMEOUT);
  CHECK_ERROR_HAS("rank 1 did not arrive within 300 ms");
  // The collective that was cut short left b out of step: its collectives are refused, saying what to do.
  CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_BFLOAT16, SYMMEM_SUM, 1000, out, s, kLong),
               SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("out of step");

  CUDA_OK(cudaFree(out));
  CUDA_OK(cudaStreamDestroy(s));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  CHECK_OK(symmem_buffer_free(b2));
  CHECK_OK(symmem_backend_close(be2));
  return 0;
}

int main() {
  const int ngpu = require_gpus("test_cuda_abort", 1);
  const int world = 2;
  if (ngpu < world) setenv("SYMMEM_ALLOW_OVERLAPPING_DEVICES", "1", 1);
  if (!run_ranks(world, 60, [&](int r) { return rank_main(r, world, ngpu); })) return 1;
  std::printf("test_cuda_abort: device waits cut short by symmem_abort: OK\n");
  return 0;
}
