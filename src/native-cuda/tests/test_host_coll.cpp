// The collectives on the host backend (float32 here; test_host_dtypes covers every dtype):
// all_reduce sum/avg/max/min in and out of place, all_gather, reduce_scatter, memset32 and
// write_value32, and argument checks.
#include <cmath>

#include "test_util.h"

static const int kWorld = 3;
static const uint64_t kN = 1003;

static float in(int rank, uint64_t i, int round) {
  return float((i * 7919 + rank * 104729 + round * 31) % 2001) / 500.0f - 2.0f;
}

static int rank_main(int rank) {
  Names names("hostcoll", kWorld);
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_imported_buffer("host", 0, names, rank, kWorld, kN * 4 * kWorld, &be);
  float* mine = static_cast<float*>(symmem_buffer_ptr(b, rank));
  std::vector<float> out(kN * kWorld);
  int round = 0;
  for (int op = 0; op < 4; ++op)
    for (int ip = 0; ip < 2; ++ip) {
      ++round;
      for (uint64_t i = 0; i < kN; ++i) mine[i] = in(rank, i, round);
      CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, symmem_reduce_op(op), kN,
                                 ip ? nullptr : out.data(), nullptr, 10000));
      const float* res = ip ? mine : out.data();
      for (uint64_t i = 0; i < kN; ++i) {
        double ref = in(0, i, round);
        for (int r = 1; r < kWorld; ++r) {
          double x = in(r, i, round);
          ref = op == SYMMEM_MAX ? std::max(ref, x) : op == SYMMEM_MIN ? std::min(ref, x) : ref + x;
        }
        if (op == SYMMEM_AVG) ref /= kWorld;
        if (std::fabs(res[i] - ref) > 1e-5) TEST_FAIL("op %d ip %d [%llu] %g vs %g", op, ip, (unsigned long long)i, res[i], ref);
      }
      CHECK_OK(symmem_barrier(b, 0, 10000));  // everyone has checked before inputs change
    }
  // all_gather out of place and in place.
  ++round;
  for (uint64_t i = 0; i < kN; ++i) mine[i] = in(rank, i, round);
  CHECK_OK(symmem_all_gather(b, SYMMEM_FLOAT32, kN, out.data(), nullptr, 10000));
  for (int r = 0; r < kWorld; ++r)
    for (uint64_t i = 0; i < kN; ++i) CHECK(out[r * kN + i] == in(r, i, round));
  CHECK_OK(symmem_barrier(b, 0, 10000));
  for (uint64_t i = 0; i < kN; ++i) mine[rank * kN + i] = in(rank, i, round);
  CHECK_OK(symmem_all_gather(b, SYMMEM_FLOAT32, kN, nullptr, nullptr, 10000));
  for (int r = 0; r < kWorld; ++r)
    for (uint64_t i = 0; i < kN; ++i) CHECK(mine[r * kN + i] == in(r, i, round));
  CHECK_OK(symmem_barrier(b, 0, 10000));
  // reduce_scatter (sum) out of place, then in place.
  for (int ip = 0; ip < 2; ++ip) {
    for (uint64_t i = 0; i < kN * kWorld; ++i) mine[i] = in(rank, i, round + ip);
    CHECK_OK(symmem_reduce_scatter(b, SYMMEM_FLOAT32, SYMMEM_SUM, kN, ip ? nullptr : out.data(), nullptr, 10000));
    const float* res = ip ? mine + rank * kN : out.data();
    for (uint64_t i = 0; i < kN; ++i) {
      double ref = 0;
      for (int r = 0; r < kWorld; ++r) ref += in(r, rank * kN + i, round + ip);
      if (std::fabs(res[i] - ref) > 1e-5) TEST_FAIL("reduce_scatter ip %d [%llu]", ip, (unsigned long long)i);
    }
    CHECK_OK(symmem_barrier(b, 0, 10000));
  }
  // Checks and unsupported cases.
  // bfloat16/float16 work on the host too (test_host_dtypes checks their results); an unknown dtype
  // is refused with its name.
  CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, symmem_dtype(7), SYMMEM_SUM, 4, out.data(), nullptr, 1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("dtype 7 is unknown");
  CHECK_STATUS(symmem_reduce_scatter(b, SYMMEM_FLOAT32, SYMMEM_SUM, kN + 1, out.data(), nullptr, 1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("count 1004 x world 3 float32 elements need");
  CHECK_STATUS(symmem_all_gather(b, SYMMEM_FLOAT32, 4, mine + 8, nullptr, 1000), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("overlaps the symmetric buffer");
  CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_SUM, 4, out.data(), nullptr, 0),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("timeout_ms 0");
  CHECK(symmem_dtype_size(SYMMEM_BFLOAT16) == 2 && symmem_dtype_size(SYMMEM_FLOAT32) == 4);
  CHECK(symmem_dtype_size(symmem_dtype(3)) == 0);
  // memset32 / write_value32 into a peer's memory, then a barrier orders it.
  const int peer = (rank + 1) % kWorld;
  CHECK_OK(symmem_memset32(b, peer, 16, 0x1000u + rank, 4, nullptr));
  CHECK_OK(symmem_stream_write_value32(b, peer, 32, 0x2000u + rank, nullptr));
  CHECK_OK(symmem_barrier(b, 0, 10000));
  const uint32_t* w = reinterpret_cast<const uint32_t*>(mine);
  const int from = (rank + kWorld - 1) % kWorld;
  CHECK(w[4] == 0x1000u + from && w[7] == 0x1000u + from && w[8] == 0x2000u + from);
  CHECK_OK(symmem_stream_synchronize(b, nullptr));
  CHECK_OK(symmem_cuda_check(b));
  uint8_t u[16];
  CHECK_STATUS(symmem_buffer_device_uuid(b, SYMMEM_RANK_SELF, u), SYMMEM_ERR_UNSUPPORTED);
  symmem_topology t;
  CHECK_OK(symmem_cuda_topology(&t));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

int main() {
  RUN_RANKS(kWorld, rank_main);
  std::printf("test_host_coll: OK\n");
  return 0;
}
