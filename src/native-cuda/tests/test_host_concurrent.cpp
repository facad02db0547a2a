// Threads of one rank on the host backend. Two buffers are independent: two threads per rank, one
// per buffer (started in the opposite order on rank 1), all-reduce at once with nothing ordering
// them, so the ranks issue the two buffers' calls in whatever interleaving the scheduler makes;
// any state shared between the buffers (barrier epochs, scratch, the worker pool) would mix their
// data or pair one buffer's barrier with the other's: every result is checked exactly.
// One buffer is one sequence: a second thread that calls while another is inside a call on the
// same buffer is refused at once (SYMMEM_ERR_STATE), and the first call is unaffected.
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

#include "test_util.h"

static const int kRounds = 300;
static const uint64_t kCount = 4099;

static float in(int rank, int buffer, uint64_t i, int round) {
  return float((i * 31 + rank * 7 + buffer * 1000 + round * 3) % 977) - 488.0f;
}

static void drive(symmem_buffer* b, int rank, int world, int which) {
  float* mine = static_cast<float*>(symmem_buffer_ptr(b, rank));
  for (int round = 0; round < kRounds; ++round) {
    for (uint64_t i = 0; i < kCount; ++i) mine[i] = in(rank, which, i, round);
    const symmem_algo algo = round % 2 == 0 ? SYMMEM_ALGO_ONE_SHOT : SYMMEM_ALGO_TWO_SHOT;
    CHECK_OK(symmem_all_reduce(b, algo, SYMMEM_FLOAT32, SYMMEM_SUM, kCount, nullptr, nullptr, 30000));
    for (uint64_t i = 0; i < kCount; ++i) {
      float ref = 0;
      for (int r = 0; r < world; ++r) ref += in(r, which, i, round);
      if (ref != mine[i])
        TEST_FAIL("buffer %d round %d [%llu]: %g, expected %g", which, round, (unsigned long long)i,
                  mine[i], ref);
    }
  }
}

static int two_buffers_main(int rank) {
  const int world = 2;
  Names na("concurrent-a", world), nb("concurrent-b", world);
  symmem_backend* be = nullptr;
  symmem_backend* be2 = nullptr;
  symmem_buffer* a = make_imported_buffer("host", 0, na, rank, world, kCount * 4, &be);
  symmem_buffer* b = make_imported_buffer("host", 0, nb, rank, world, kCount * 4, &be2);
  CHECK_OK(symmem_barrier(a, 0, 10000));
  CHECK_OK(symmem_barrier(b, 0, 10000));
  std::thread ta([&] { drive(rank == 0 ? a : b, rank, world, rank == 0 ? 0 : 1); });
  std::thread tb([&] { drive(rank == 0 ? b : a, rank, world, rank == 0 ? 1 : 0); });
  ta.join();
  tb.join();
  CHECK_OK(symmem_buffer_free(a));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  CHECK_OK(symmem_backend_close(be2));
  return 0;
}

// Rank 0's first thread waits for rank 1's signal on channel 0; rank 1 sends it only after rank 0
// has seen its second thread refused (told through a pipe, so no timing is assumed).
static int refused_main(int rank, int tell[2]) {
  const int world = 2;
  Names names("concurrent-refused", world);
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_imported_buffer("host", 0, names, rank, world, 4096, &be);
  if (rank == 1) {
    close(tell[1]);
    char c;
    CHECK(read(tell[0], &c, 1) == 1);
    CHECK_OK(symmem_put_signal(b, 0, 0, 10000));
  } else {
    close(tell[0]);
    std::atomic<bool> done{false};
    std::thread waiter([&] {
      // Refused only while the probe below is inside its own short call: then simply again.
      symmem_status s;
      while ((s = symmem_wait_signal(b, 1, 0, 30000)) == SYMMEM_ERR_STATE) {
      }
      CHECK_STATUS(s, SYMMEM_OK);
      done = true;
    });
    // Until the waiter is inside its call, this short wait on another channel simply times out;
    // refused, it proves the waiter is inside (no other thread calls on this buffer).
    for (;;) {
      const symmem_status s = symmem_wait_signal(b, 1, 1, 1);
      if (s == SYMMEM_ERR_STATE) break;
      CHECK_STATUS(s, SYMMEM_ERR_TIMEOUT);
      if (done) TEST_FAIL("the waiter finished before rank 1 signalled");
    }
    // Names the call inside (or, for the instant before it names itself, "a call just starting").
    CHECK_ERROR_HAS("symmem_wait_signal: another thread is issuing a signal, barrier or collective "
                    "on this buffer right now (");
    CHECK(write(tell[1], "x", 1) == 1);
    waiter.join();
    CHECK(done);
  }
  CHECK_OK(symmem_barrier(b, 2, 10000));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

int main() {
  RUN_RANKS(2, two_buffers_main);
  int tell[2];
  CHECK(pipe(tell) == 0);
  RUN_RANKS(2, [&](int rank) { return refused_main(rank, tell); });
  std::printf("test_host_concurrent: two buffers driven by two threads in opposite orders, %d "
              "all-reduces each, exact; a second caller on one buffer refused at once: OK\n",
              kRounds);
  return 0;
}
