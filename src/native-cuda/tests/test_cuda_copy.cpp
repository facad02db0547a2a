// Host <-> device copies, device-local memory and streams on the cuda backend, world 2: copy_in
// at an offset, all_reduce (every algorithm, out of place into symmem_local_alloc memory) on a
// symmem_stream_create stream, local_copy_out, copy_out of the peer's data, the range checks.
// Exits 77 (skipped) without 2 GPUs.
#include "cuda_test_util.h"

static const int kWorld = 2;

int main() {
  require_gpus("test_cuda_copy", kWorld);
  const uint64_t n = 1000003, bytes = n * 4 + 64;
  bool ok = run_ranks(kWorld, 120, [&](int rank) {
    symmem_backend* be = nullptr;
    symmem_buffer* b = make_cuda_buffer("cudacopy", rank, kWorld, rank, bytes, &be);
    std::vector<float> in(n), res(n);
    for (uint64_t i = 0; i < n; ++i) in[i] = float(i % 1000) * 0.25f + float(rank);
    void* out = nullptr;
    CHECK_OK(symmem_local_alloc(be, n * 4, &out));
    void* stream = nullptr;
    CHECK_OK(symmem_stream_create(be, &stream));
    CHECK(stream != nullptr);
    for (int algo = SYMMEM_ALGO_AUTO; algo <= SYMMEM_ALGO_TWO_SHOT; ++algo) {
      CHECK_OK(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 0, in.data(), n * 4));
      CHECK_OK(symmem_all_reduce(b, symmem_algo(algo), SYMMEM_FLOAT32, SYMMEM_SUM, n, out, stream, 20000));
      CHECK_OK(symmem_stream_synchronize(b, stream));
      std::fill(res.begin(), res.end(), -1.0f);
      CHECK_OK(symmem_local_copy_out(be, out, 0, res.data(), n * 4));
      for (uint64_t i = 0; i < n; ++i)
        if (res[i] != float(i % 1000) * 0.5f + 1.0f)
          TEST_FAIL("algo %d [%llu] %g", algo, (unsigned long long)i, res[i]);
      CHECK_OK(symmem_barrier(b, 1, 20000));
    }
    // The peer's data through copy_out (P2P mapping), at an offset.
    CHECK_OK(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 64, in.data(), 4000));
    CHECK_OK(symmem_barrier(b, 2, 20000));
    std::vector<float> theirs(1000);
    CHECK_OK(symmem_buffer_copy_out(b, 1 - rank, 64, theirs.data(), 4000));
    for (int i = 0; i < 1000; ++i)
      if (theirs[i] != float(i % 1000) * 0.25f + float(1 - rank)) TEST_FAIL("peer [%d] %g", i, theirs[i]);
    CHECK_STATUS(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, bytes - 3, in.data(), 4), SYMMEM_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("exceed the symmetric buffer's");
    CHECK_STATUS(symmem_local_copy_in(be, out, 4, in.data(), n * 4), SYMMEM_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("exceed the local allocation's");
    // local_copy_in round trip.
    CHECK_OK(symmem_local_copy_in(be, out, 0, in.data(), n * 4));
    CHECK_OK(symmem_local_copy_out(be, out, 0, res.data(), n * 4));
    CHECK(std::memcmp(in.data(), res.data(), n * 4) == 0);
    CHECK_OK(symmem_barrier(b, 3, 20000));
    CHECK_OK(symmem_stream_destroy(be, stream));
    CHECK_OK(symmem_local_free(be, out));
    CHECK_OK(symmem_buffer_free(b));
    CHECK_OK(symmem_backend_close(be));
    return 0;
  });
  if (!ok) return 1;
  std::printf("test_cuda_copy: passed (world %d, %llu floats, every algorithm)\n", kWorld,
              (unsigned long long)n);
  return 0;
}
