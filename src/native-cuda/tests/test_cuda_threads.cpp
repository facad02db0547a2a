// Several host threads per rank on the cuda backend, at world 2 (one GPU is enough with
// SYMMEM_ALLOW_OVERLAPPING_DEVICES=1), and at worlds 3 and 4 where each rank has a GPU of its own
// (their kernels differ there: the 128-byte lines; SYMMEM_TEST_WORLDS picks others): each thread owns a buffer and a stream and repeats what a
// library user does (copy in, all-reduce, copy out and check), one-shot and two-shot alternating,
// with no coordination between the threads; the threads of the two ranks drift apart freely.
// A call on one buffer must wait only for that buffer's work. A copy that waited for the whole
// device would wait for another thread's collective, whose peer kernel is queued behind the peer
// thread's copy waiting for this thread's next launch: both ranks stall until the deadline.
// Each thread starts with another reduce op, so the threads' first launches are kernels no thread
// has launched before: a kernel loaded lazily at its first launch can wait for the device to go
// idle, that is for the other threads' collectives spinning on their peers (the library loads
// every kernel when it makes its first buffer on a device).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "cuda_test_util.h"

static const int kMaxThreads = 6;
// SYMMEM_TEST_THREADS (1..6) and SYMMEM_TEST_OPS=sum narrow a failure down by hand.
static int g_threads = kMaxThreads;
static int g_ops = 3;
static const int kRounds = 300;
static const uint64_t kCounts[] = {4099, 65541};  // odd: not a multiple of any vector width

static const symmem_reduce_op kOps[] = {SYMMEM_SUM, SYMMEM_MAX, SYMMEM_MIN};

static double reduce(symmem_reduce_op op, double a, double b) {
  return op == SYMMEM_SUM ? a + b : op == SYMMEM_MAX ? std::fmax(a, b) : std::fmin(a, b);
}

static float in(int rank, int thread, uint64_t i, int round) {
  return float((i * 13 + rank * 101 + thread * 37 + round * 5) % 251) / 16.0f - 8.0f;
}

static int rank_main(int rank, int world, int gpus) {
  symmem_backend* be[kMaxThreads] = {};
  symmem_buffer* b[kMaxThreads];
  for (int t = 0; t < g_threads; ++t) {
    char name[64];
    std::snprintf(name, sizeof name, "cudathreads%d", t);
    b[t] = make_cuda_buffer(name, rank, world, rank % gpus, kCounts[1] * 4, &be[t]);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < g_threads; ++t) {
    threads.emplace_back([&, t] {
      void* s = nullptr;
      if (symmem_stream_create(be[t], &s) != SYMMEM_OK) {
        std::fprintf(stderr, "rank %d thread %d: stream: %s\n", rank, t, symmem_last_error());
        failures++;
        return;
      }
      std::vector<float> x(kCounts[1]), got(kCounts[1]);
      for (int round = 0; round < kRounds && failures.load() == 0; ++round) {
        const uint64_t n = kCounts[(round + t) % 2];
        const symmem_algo algo = (round + t / 3) % 2 == 0 ? SYMMEM_ALGO_ONE_SHOT : SYMMEM_ALGO_TWO_SHOT;
        const symmem_reduce_op op = kOps[(round + t) % g_ops];
        for (uint64_t i = 0; i < n; ++i) x[i] = in(rank, t, i, round);
        symmem_status st = symmem_buffer_copy_in(b[t], SYMMEM_RANK_SELF, 0, x.data(), n * 4);
        if (st == SYMMEM_OK)
          st = symmem_all_reduce(b[t], algo, SYMMEM_FLOAT32, op, n, nullptr, s, 10000);
        if (st == SYMMEM_OK) st = symmem_stream_synchronize(b[t], s);
        if (st == SYMMEM_OK) st = symmem_buffer_copy_out(b[t], SYMMEM_RANK_SELF, 0, got.data(), n * 4);
        if (st != SYMMEM_OK) {
          std::fprintf(stderr, "rank %d thread %d round %d: %s\n", rank, t, round, symmem_last_error());
          failures++;
          break;
        }
        for (uint64_t i = 0; i < n; ++i) {
          double ref = in(0, t, i, round);
          for (int r = 1; r < world; ++r) ref = reduce(op, ref, in(r, t, i, round));
          if (std::fabs(got[i] - ref) > 1e-4) {
            std::fprintf(stderr, "rank %d thread %d round %d [%llu]: %g, expected %g\n", rank, t,
                         round, (unsigned long long)i, got[i], ref);
            failures++;
            break;
          }
        }
        // In place: the next copy_in overwrites what peers may still read (two-shot) only after
        // every rank has finished this round on this buffer.
        if (failures.load() == 0 && symmem_barrier_on_stream(b[t], 0, s, 10000) != SYMMEM_OK) failures++;
      }
      symmem_stream_destroy(be[t], s);
    });
  }
  for (auto& th : threads) th.join();
  if (failures.load() != 0) TEST_FAIL("rank %d: %d thread(s) failed", rank, failures.load());
  for (int t = 0; t < g_threads; ++t) {
    CHECK_OK(symmem_barrier(b[t], 0, 20000));
    CHECK_OK(symmem_buffer_free(b[t]));
    CHECK_OK(symmem_backend_close(be[t]));
  }
  return 0;
}

int main() {
  if (const char* n = std::getenv("SYMMEM_TEST_THREADS")) g_threads = std::max(1, std::min(kMaxThreads, std::atoi(n)));
  if (const char* o = std::getenv("SYMMEM_TEST_OPS")) g_ops = std::strcmp(o, "sum") == 0 ? 1 : 3;
  const int gpus = require_gpus("test_cuda_threads", 1);
  return run_worlds("test_cuda_threads", gpus, [gpus](int world) {
    if (!run_ranks(world, 120, [world, gpus](int rank) { return rank_main(rank, world, gpus); })) return false;
    std::printf("world %d: %d threads per rank, each its own buffer and stream, %d rounds of copy in, "
                "all-reduce (sum/max/min, one-shot/two-shot), copy out, exact: OK\n", world, g_threads,
                kRounds);
    return true;
  });
}
