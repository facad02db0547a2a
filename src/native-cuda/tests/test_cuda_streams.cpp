// Streams on the cuda backend, at world 2 (one GPU is enough with SYMMEM_ALLOW_OVERLAPPING_DEVICES=1),
// and at worlds 3 and 4 where each rank has a GPU of its own (SYMMEM_TEST_WORLDS picks others).
// One buffer, several streams: a one-shot on stream A, another on stream B and a two-shot on A
// again, enqueued back to back with no host synchronisation. Each launch waits for the previous
// launch on the buffer, so the kernels never share the signal pad at once (run concurrently, a
// one-shot and a two-shot on one pad wait for each other across ranks: PyTorch's issue 189228) and
// the two-shot, which uses the buffer as scratch, comes after both one-shots have read the input.
// Two buffers, each on its own stream, enqueued in opposite orders on the two ranks: independent, so
// both complete (on one shared stream each rank's first kernel would wait for the other's).
// The same with two large buffers, whose collectives launch full grids (132 blocks of 512 threads
// on H100): each rank's first kernel waits for its peer, which the peer launched second, so both
// grids must be on each GPU at once. Kernels that took every SM's registers for one block stalled
// here until the deadline (world 2 before its own kernels, worlds 3 and 4 on the generic ones); the
// kernels of worlds 2 to 4 fit two blocks per SM.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "cuda_test_util.h"

static int g_world = 2;  // set before the ranks fork
static const uint64_t kN = 65541;  // floats: odd, not a multiple of any vector width
static const uint64_t kLargeN = uint64_t{4} << 20;  // floats (16 MiB): full grids, above the push scratch

static float in(int rank, int buffer, uint64_t i, int round) {
  return float((i * 13 + rank * 101 + buffer * 37 + round * 5) % 251) / 16.0f - 8.0f;
}

static void expect_sum(symmem_backend* be, void* out, int buffer, int round, const char* what,
                       uint64_t n = kN) {
  std::vector<float> got(n);
  CHECK_OK(symmem_local_copy_out(be, out, 0, got.data(), n * 4));
  for (uint64_t i = 0; i < n; ++i) {
    double ref = 0;
    for (int r = 0; r < g_world; ++r) ref += in(r, buffer, i, round);
    if (std::fabs(got[i] - ref) > 1e-4)
      TEST_FAIL("%s, round %d [%llu]: %g, expected %g", what, round, (unsigned long long)i, got[i], ref);
  }
}

// Two buffers of n floats on their own streams, enqueued in opposite orders on the ranks, one-shot,
// two-shot and two-shot in place in turn; a deadline of 10 s, so that a stall fails fast. 16 MiB
// runs the pull kernels, 4 MiB the push ones (one-shot and, at world 2, two-shot through the
// scratch); each full grid must leave room on every SM for the other.
static void large_in_opposite_orders(int rank, int gpus, symmem_backend* be, void* const* s,
                                     uint64_t n, const char* tag) {
  symmem_backend* lb[2] = {nullptr, nullptr};
  symmem_buffer* b[2];
  for (int k = 0; k < 2; ++k) {
    char name[48];
    std::snprintf(name, sizeof name, "cudastreams%s%d", tag, k);
    b[k] = make_cuda_buffer(name, rank, g_world, rank % gpus, n * 4, &lb[k]);
  }
  void* out[2];
  for (auto& o : out) CHECK_OK(symmem_local_alloc(be, n * 4, &o));
  std::vector<float> x(n);
  for (int round = 0; round < 6; ++round) {
    // One-shot, two-shot, two-shot in place (one-shot in place stops at about 4 MiB).
    const symmem_algo algo = round % 3 == 0 ? SYMMEM_ALGO_ONE_SHOT : SYMMEM_ALGO_TWO_SHOT;
    const bool in_place = round % 3 == 2;
    for (int k = 0; k < 2; ++k) {
      for (uint64_t i = 0; i < n; ++i) x[i] = in(rank, k, i, round);
      CHECK_OK(symmem_buffer_copy_in(b[k], SYMMEM_RANK_SELF, 0, x.data(), n * 4));
    }
    for (int j = 0; j < 2; ++j) {
      const int k = rank == 0 ? j : 1 - j;  // opposite orders on the two ranks
      CHECK_OK(symmem_all_reduce(b[k], algo, SYMMEM_FLOAT32, SYMMEM_SUM, n,
                                 in_place ? nullptr : out[k], s[k], 10000));
    }
    for (int k = 0; k < 2; ++k) {
      CHECK_OK(symmem_stream_synchronize(b[k], s[k]));
      char what[96];
      std::snprintf(what, sizeof what, "%llu MiB buffer %d, %s%s, opposite orders",
                    static_cast<unsigned long long>(n * 4 >> 20), k,
                    algo == SYMMEM_ALGO_ONE_SHOT ? "one-shot" : "two-shot", in_place ? " in place" : "");
      if (in_place) {
        CHECK_OK(symmem_buffer_copy_out(b[k], SYMMEM_RANK_SELF, 0, x.data(), n * 4));
        CHECK_OK(symmem_local_copy_in(be, out[k], 0, x.data(), n * 4));
      }
      expect_sum(be, out[k], k, round, what, n);
    }
    for (auto* buf : b) CHECK_OK(symmem_barrier(buf, 0, 20000));
  }
  for (auto& o : out) CHECK_OK(symmem_local_free(be, o));
  for (auto* buf : b) CHECK_OK(symmem_buffer_free(buf));
  for (auto* x2 : lb) CHECK_OK(symmem_backend_close(x2));
}

static int rank_main(int rank, int gpus) {
  symmem_backend* be = nullptr;
  symmem_backend* be2 = nullptr;
  symmem_buffer* b[2] = {make_cuda_buffer("cudastreams0", rank, g_world, rank % gpus, kN * 4, &be),
                         make_cuda_buffer("cudastreams1", rank, g_world, rank % gpus, kN * 4, &be2)};
  void* s[2];
  for (auto& x : s) CHECK_OK(symmem_stream_create(be, &x));
  void* out[3];
  for (auto& o : out) CHECK_OK(symmem_local_alloc(be, kN * 4, &o));
  std::vector<float> x(kN);

  for (int round = 0; round < 40; ++round) {
    for (uint64_t i = 0; i < kN; ++i) x[i] = in(rank, 0, i, round);
    CHECK_OK(symmem_buffer_copy_in(b[0], SYMMEM_RANK_SELF, 0, x.data(), kN * 4));
    CHECK_OK(symmem_all_reduce(b[0], SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kN, out[0], s[0], 20000));
    CHECK_OK(symmem_all_reduce(b[0], SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kN, out[1], s[1], 20000));
    CHECK_OK(symmem_all_reduce(b[0], SYMMEM_ALGO_TWO_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kN, out[2], s[0], 20000));
    CHECK_OK(symmem_stream_synchronize(b[0], s[0]));
    CHECK_OK(symmem_stream_synchronize(b[0], s[1]));
    expect_sum(be, out[0], 0, round, "one-shot on stream A");
    expect_sum(be, out[1], 0, round, "one-shot on stream B");
    expect_sum(be, out[2], 0, round, "two-shot on stream A after both");
    // Peers may still read this rank's two-shot scratch: the next input waits for them.
    CHECK_OK(symmem_barrier(b[0], 0, 20000));
  }

  for (int round = 0; round < 40; ++round) {
    for (int k = 0; k < 2; ++k) {
      for (uint64_t i = 0; i < kN; ++i) x[i] = in(rank, k, i, round);
      CHECK_OK(symmem_buffer_copy_in(b[k], SYMMEM_RANK_SELF, 0, x.data(), kN * 4));
    }
    for (int j = 0; j < 2; ++j) {
      const int k = rank == 0 ? j : 1 - j;  // opposite orders on the two ranks
      const symmem_algo algo = round % 2 == 0 ? SYMMEM_ALGO_ONE_SHOT : SYMMEM_ALGO_TWO_SHOT;
      CHECK_OK(symmem_all_reduce(b[k], algo, SYMMEM_FLOAT32, SYMMEM_SUM, kN, out[k], s[k], 20000));
    }
    for (int k = 0; k < 2; ++k) CHECK_OK(symmem_stream_synchronize(b[k], s[k]));
    expect_sum(be, out[0], 0, round, "buffer 0 on its stream");
    expect_sum(be, out[1], 1, round, "buffer 1 on its stream");
    for (auto* buf : b) CHECK_OK(symmem_barrier(buf, 0, 20000));
  }

  for (auto* buf : b) CHECK_OK(symmem_barrier(buf, 0, 20000));
  for (auto& o : out) CHECK_OK(symmem_local_free(be, o));
  for (auto* buf : b) CHECK_OK(symmem_buffer_free(buf));
  CHECK_OK(symmem_backend_close(be2));
  large_in_opposite_orders(rank, gpus, be, s, kLargeN, "L");
  large_in_opposite_orders(rank, gpus, be, s, kLargeN / 4, "M");
  for (auto& x2 : s) CHECK_OK(symmem_stream_destroy(be, x2));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

int main() {
  const int gpus = require_gpus("test_cuda_streams", 1);
  return run_worlds("test_cuda_streams", gpus, [gpus](int world) {
    g_world = world;
    if (!run_ranks(world, 120, [gpus](int rank) { return rank_main(rank, gpus); })) return false;
    std::printf("world %d: one buffer on two streams (one-shot, one-shot, two-shot back to back) and two "
                "buffers in opposite orders on their own streams, 40 rounds each, and two 16 MiB and two "
                "4 MiB buffers in opposite orders, 6 rounds each, exact: OK\n", world);
    return true;
  });
}
