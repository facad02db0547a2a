// After a missed deadline, no wrong result: rank 1 comes 1.5 s late to one all-reduce whose deadline is
// 300 ms (rank 0 gives it up, as it should), then both ranks run 50 more all-reduces on the same
// buffer, a few ms apart, checking every element. Before, rank 0 passed the next calls' barriers on
// rank 1's stale arrivals and returned wrong sums with no error. Now every call is exact or fails, on
// every rank, and a rank is never told a sum that is wrong; a new buffer then works. In place and
// out of place, one-shot and two-shot. And a peer that is still waiting when another gives the call up
// is told at once, not at its own deadline.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"

static const uint64_t kCount = 2048;
static const int kCalls = 50;

static float in(int rank, uint64_t i, int call) { return float((rank + 1) * 1000 + call) + float(i % 7); }

// One checked all-reduce: 1 exact, 0 failed (an error), and a wrong value fails the test.
static int checked_all_reduce(symmem_buffer* b, int rank, int call, symmem_algo algo, bool in_place) {
  float* mine = static_cast<float*>(symmem_buffer_ptr(b, rank));
  for (uint64_t i = 0; i < kCount; ++i) mine[i] = in(rank, i, call);
  std::vector<float> out(kCount);
  const symmem_status s = symmem_all_reduce(b, algo, SYMMEM_FLOAT32, SYMMEM_SUM, kCount,
                                            in_place ? nullptr : out.data(), nullptr, 300);
  if (s != SYMMEM_OK) return 0;
  const float* res = in_place ? mine : out.data();
  for (uint64_t i = 0; i < kCount; ++i) {
    const float want = in(0, i, call) + in(1, i, call);
    if (res[i] != want)
      TEST_FAIL("call %d (%s, %s) [%llu]: %g, expected %g, and the call reported success", call,
                algo == SYMMEM_ALGO_ONE_SHOT ? "one-shot" : "two-shot", in_place ? "in place" : "out of place",
                (unsigned long long)i, res[i], want);
  }
  return 1;
}

static int late_rank_main(int rank, symmem_algo algo, bool in_place, const char* name) {
  Names names(name, 2);
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_imported_buffer("host", 0, names, rank, 2, kCount * 4, &be);
  CHECK_OK(symmem_barrier(b, 0, 10000));
  if (rank == 1) usleep(1500000);
  const int first = checked_all_reduce(b, rank, 0, algo, in_place);
  if (rank == 0 && first != 0) TEST_FAIL("rank 0's call did not time out, although rank 1 came 1.5 s late");
  int exact = 0;
  int failed_since = -1;
  for (int call = 1; call <= kCalls; ++call) {
    usleep(rank == 0 ? 1000 : 3000);  // the ranks a few ms apart
    const int ok = checked_all_reduce(b, rank, call, algo, in_place);
    exact += ok;
    if (!ok && failed_since < 0) failed_since = call;
    if (ok && failed_since >= 0) TEST_FAIL("call %d succeeded after call %d had failed on this rank", call, failed_since);
  }
  if (exact != 0) TEST_FAIL("%d of %d calls after the missed deadline reported success", exact, kCalls);
  if (std::strstr(symmem_last_error(), "out of step") == nullptr ||
      std::strstr(symmem_last_error(), "free it") == nullptr)
    TEST_FAIL("the refusal does not say what happened and what to do: %s", symmem_last_error());
  CHECK_OK(symmem_buffer_free(b));
  // What to do next: a new buffer, and its collectives are right.
  Names fresh_names((std::string(name) + "-fresh").c_str(), 2);
  symmem_backend* be2 = nullptr;
  symmem_buffer* fresh = make_imported_buffer("host", 0, fresh_names, rank, 2, kCount * 4, &be2);
  CHECK_OK(symmem_barrier(fresh, 0, 10000));
  for (int call = 0; call < 5; ++call) {
    float* mine = static_cast<float*>(symmem_buffer_ptr(fresh, rank));
    for (uint64_t i = 0; i < kCount; ++i) mine[i] = in(rank, i, call);
    std::vector<float> out(kCount);
    CHECK_OK(symmem_all_reduce(fresh, algo, SYMMEM_FLOAT32, SYMMEM_SUM, kCount, in_place ? nullptr : out.data(),
                               nullptr, 10000));
    const float* res = in_place ? mine : out.data();
    for (uint64_t i = 0; i < kCount; ++i)
      if (res[i] != in(0, i, call) + in(1, i, call)) TEST_FAIL("the new buffer's call %d is wrong at %llu", call,
                                                                (unsigned long long)i);
    CHECK_OK(symmem_barrier(fresh, 0, 10000));  // inputs of the next call only once both have read
  }
  CHECK_OK(symmem_buffer_free(fresh));
  CHECK_OK(symmem_backend_close(be2));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

// Three ranks; rank 2 never calls. Rank 0 waits with a deadline of 20 s, rank 1 with 300 ms: when rank
// 1 gives the call up, rank 0 (still waiting) is told at once, naming rank 1 and the missing rank 2.
static int waiting_rank_main(int rank) {
  Names names("outofstep-waiting", 3);
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_imported_buffer("host", 0, names, rank, 3, kCount * 4, &be);
  std::vector<float> out(kCount);
  if (rank == 1) {
    CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kCount, out.data(), nullptr, 300),
                 SYMMEM_ERR_TIMEOUT);
  } else if (rank == 0) {
    const auto start = std::chrono::steady_clock::now();
    symmem_status s = symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kCount, out.data(),
                                        nullptr, 20000);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (s == SYMMEM_OK) TEST_FAIL("rank 0's call succeeded without rank 2");
    if (ms > 5000) TEST_FAIL("rank 0 was told only after %.0f ms", ms);
    CHECK_ERROR_HAS("rank 1 gave up this collective");
    CHECK_ERROR_HAS("waiting for rank(s) 2;");
    // Later calls are refused at once on both.
    CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kCount, out.data(), nullptr, 20000),
                 SYMMEM_ERR_STATE);
  } else {
    usleep(2000000);  // mapped, but never calls
  }
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

int main() {
  RUN_RANKS(2, [](int rank) { return late_rank_main(rank, SYMMEM_ALGO_ONE_SHOT, false, "outofstep-1o"); });
  RUN_RANKS(2, [](int rank) { return late_rank_main(rank, SYMMEM_ALGO_ONE_SHOT, true, "outofstep-1i"); });
  RUN_RANKS(2, [](int rank) { return late_rank_main(rank, SYMMEM_ALGO_TWO_SHOT, false, "outofstep-2o"); });
  RUN_RANKS(2, [](int rank) { return late_rank_main(rank, SYMMEM_ALGO_TWO_SHOT, true, "outofstep-2i"); });
  RUN_RANKS(3, waiting_rank_main);
  std::printf("test_host_out_of_step: after a missed deadline, %d calls on each rank, none wrong: OK\n", kCalls);
  return 0;
}
