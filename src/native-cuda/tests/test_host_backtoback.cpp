// Back-to-back host all-reduces with nothing between them: each rank checks its result and writes
// its next input the moment a call returns, while slower peers may still be inside that call. Two
// barriers per call must be enough for that (host_coll.cpp: the inputs are read by the peers only
// before barrier 2, the exchange area only until the next collective's barrier 1), and the
// collectives' barrier counts must stay in step. Every result is checked bit for bit against the
// float32 sum in rank order, on every rank, for out-of-place two-shot (the exchange area),
// in-place two-shot and one-shot, at sizes whose slices end inside a cache line and across several
// blocks of the element kernels, on 4 ranks (the unrolled kernel) and on 3 (the general one).
#include <unistd.h>

#include <cmath>
#include <cstring>

#include "test_util.h"

static const int kRounds = 600;
static const uint64_t kCounts[] = {1003, 4099, 16389};
static const uint64_t kMaxCount = 16389;

// Spread over 2^-12 .. 2^12 so that float32 sums round, and a wrong slice, an input of another
// round or a different order of the ranks shows in the bits.
static float in(int rank, uint64_t i, int round) {
  const int e = static_cast<int>((i * 13 + rank * 5 + round * 3) % 25) - 12;
  return std::ldexp(float((i * 7919 + rank * 104729 + round * 31) % 2001) - 1000.0f, e);
}

static int rank_main(int world, int rank) {
  Names names(world == 4 ? "backtoback4" : "backtoback3", world);
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_imported_buffer("host", 0, names, rank, world, kMaxCount * 4, &be);
  float* mine = static_cast<float*>(symmem_buffer_ptr(b, rank));
  std::vector<float> out(kMaxCount);
  for (uint64_t i = 0; i < kMaxCount; ++i) mine[i] = in(rank, i, 0);
  CHECK_OK(symmem_barrier(b, 0, 10000));  // the first inputs are written everywhere
  for (int round = 0; round < kRounds; ++round) {
    const uint64_t n = kCounts[(round / 3) % 3];
    const int kind = round % 3;  // 0: two-shot out of place, 1: two-shot in place, 2: one-shot
    const symmem_algo algo = kind == 2 ? SYMMEM_ALGO_ONE_SHOT : SYMMEM_ALGO_TWO_SHOT;
    float* res = kind == 1 ? mine : out.data();
    CHECK_OK(symmem_all_reduce(b, algo, SYMMEM_FLOAT32, SYMMEM_SUM, n, kind == 1 ? nullptr : out.data(),
                               nullptr, 20000));
    for (uint64_t i = 0; i < n; ++i) {
      float ref = in(0, i, round);
      for (int r = 1; r < world; ++r) ref += in(r, i, round);
      if (std::memcmp(&ref, &res[i], 4) != 0)
        TEST_FAIL("world %d round %d (%s, %llu elements) [%llu]: %a, expected %a", world, round,
                  kind == 0 ? "two-shot out of place" : kind == 1 ? "two-shot in place" : "one-shot",
                  (unsigned long long)n, (unsigned long long)i, res[i], ref);
    }
    // The next input, at once: no barrier, no signal.
    for (uint64_t i = 0; i < kMaxCount; ++i) mine[i] = in(rank, i, round + 1);
  }
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

// A rank that never comes: the collective barrier's deadline names it (and only it).
static int missing_main(int rank) {
  Names names("backtoback-missing", 3);
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_imported_buffer("host", 0, names, rank, 3, 4096, &be);
  std::vector<float> out(1024);
  if (rank == 2) {
    usleep(1500000);  // mapped, but never calls
  } else {
    CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, 1024, out.data(),
                                   nullptr, 300),
                 SYMMEM_ERR_TIMEOUT);
    // The first of ranks 0 and 1 to reach its deadline gives the call up; the other, still waiting, is
    // told at once (by the first one's out-of-step mark). Both name rank 2, and only rank 2.
    const char* err = symmem_last_error();
    if (std::strstr(err, "all_reduce two-shot (barrier 1, waiting for inputs): barrier(channel 32): ") == nullptr ||
        (std::strstr(err, "timed out after 300 ms waiting for rank(s) 2") == nullptr &&
         (std::strstr(err, "gave up this collective (its deadline passed: ") == nullptr ||
          std::strstr(err, "while this rank was waiting for rank(s) 2;") == nullptr)))
      TEST_FAIL("rank %d: the timeout does not name rank 2 as missing: %s", rank, err);
    if (std::strstr(symmem_last_error(), "rank(s) 2,") != nullptr || std::strstr(symmem_last_error(), ", 2") != nullptr)
      TEST_FAIL("named more than rank 2: %s", symmem_last_error());
  }
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

int main() {
  RUN_RANKS(4, [](int rank) { return rank_main(4, rank); });
  RUN_RANKS(3, [](int rank) { return rank_main(3, rank); });
  RUN_RANKS(3, missing_main);
  std::printf("test_host_backtoback: %d back-to-back all-reduces on 4 and on 3 ranks, every result exact: OK\n",
              kRounds);
  return 0;
}
