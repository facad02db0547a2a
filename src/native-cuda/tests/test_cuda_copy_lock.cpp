// A buffer copy waits for the buffer's last launch without stopping other threads, world 2 (one GPU
// is enough with SYMMEM_ALLOW_OVERLAPPING_DEVICES=1). Two threads per rank, each with its own
// buffer and stream. Per round, on each rank one thread (the holder: buffer 0 on rank 0, buffer 1
// on rank 1, swapped every round) enqueues a channel barrier and at once copies into its buffer, so
// its copy waits until the peer's thread of the same buffer enqueues its barrier. The other thread
// (late) sleeps, then copies into its buffer and enqueues its barrier, which the peer's holder is
// waiting for. Each rank's late thread is the barrier the other rank's holder waits for, so if a
// holder's wait stopped the late thread of its own rank (a process-wide lock held across the wait:
// the stall of test_cuda_threads), both ranks would wait for each other until the barriers'
// deadline. Deterministic: it fails on every round with such a lock, and takes about 0.3 s a round
// without.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "cuda_test_util.h"

static const int kWorld = 2;
static const int kRounds = 6;
static const int kBarrierMs = 3000;  // a stalled round fails after this
static const int kLateMs = 300;      // the late thread starts after the holder is waiting
static const uint64_t kBytes = 4096;

static int rank_main(int rank, int gpus) {
  symmem_backend* be[2] = {};
  symmem_buffer* b[2];
  void* s[2];
  for (int t = 0; t < 2; ++t) {
    char name[64];
    std::snprintf(name, sizeof name, "cudacopylock%d", t);
    b[t] = make_cuda_buffer(name, rank, kWorld, rank % gpus, kBytes, &be[t]);
    CHECK_OK(symmem_stream_create(be[t], &s[t]));
    // A first launch on each buffer's stream, so that a copy has a launch to wait for.
    CHECK_OK(symmem_barrier_on_stream(b[t], 0, s[t], 20000));
    CHECK_OK(symmem_stream_synchronize(b[t], s[t]));
  }
  std::vector<char> x(kBytes, static_cast<char>(rank));
  for (int round = 0; round < kRounds; ++round) {
    const int holder = (rank + round) % 2;
    std::atomic<int> failures{0};
    const auto start = std::chrono::steady_clock::now();
    std::thread threads[2];
    for (int t = 0; t < 2; ++t) {
      threads[t] = std::thread([&, t] {
        auto report = [&](const char* step) {
          std::fprintf(stderr, "rank %d round %d %s thread (buffer %d): %s: %s\n", rank, round,
                       t == holder ? "holder" : "late", t, step, symmem_last_error());
          failures++;
        };
        if (t == holder) {
          if (symmem_barrier_on_stream(b[t], 0, s[t], kBarrierMs) != SYMMEM_OK) return report("barrier");
          if (symmem_buffer_copy_in(b[t], SYMMEM_RANK_SELF, 0, x.data(), kBytes) != SYMMEM_OK)
            return report("copy_in");
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(kLateMs));
          if (symmem_buffer_copy_in(b[t], SYMMEM_RANK_SELF, 0, x.data(), kBytes) != SYMMEM_OK)
            return report("copy_in");
          if (symmem_barrier_on_stream(b[t], 0, s[t], kBarrierMs) != SYMMEM_OK) return report("barrier");
        }
        // A device-side timeout of the barrier is reported here.
        if (symmem_stream_synchronize(b[t], s[t]) != SYMMEM_OK) return report("synchronize");
      });
    }
    for (auto& th : threads) th.join();
    const long ms = static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::steady_clock::now() - start)
                                          .count());
    if (failures.load() != 0)
      TEST_FAIL("round %d: %d thread(s) failed after %ld ms (a copy that waits for its buffer must "
                "not stop the other threads)", round, failures.load(), ms);
    std::printf("rank %d round %d: %ld ms\n", rank, round, ms);
    for (auto* buf : b) CHECK_OK(symmem_barrier(buf, 0, 20000));
  }
  for (int t = 0; t < 2; ++t) {
    CHECK_OK(symmem_stream_destroy(be[t], s[t]));
    CHECK_OK(symmem_buffer_free(b[t]));
    CHECK_OK(symmem_backend_close(be[t]));
  }
  return 0;
}

int main() {
  int gpus = require_gpus("test_cuda_copy_lock", 1);
  if (gpus < kWorld) {
    const char* o = std::getenv("SYMMEM_ALLOW_OVERLAPPING_DEVICES");
    if (o == nullptr || std::strcmp(o, "1") != 0) {
      std::printf("SKIPPED: test_cuda_copy_lock needs 2 GPUs, or SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 on one\n");
      return kSkip;
    }
  }
  RUN_RANKS(kWorld, [gpus](int rank) { return rank_main(rank, gpus); });
  std::printf("test_cuda_copy_lock: %d rounds, a copy waiting for its buffer's barrier never held "
              "up the other thread: OK\n", kRounds);
  return 0;
}
