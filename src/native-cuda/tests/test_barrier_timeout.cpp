// A rank that never reaches the barrier is named in the timeout; put/wait timeouts too.
#include "test_util.h"

static const int kWorld = 4;

static int rank_main(int rank) {
  Names names("btimeout", kWorld);
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_imported_buffer("host", 0, names, rank, kWorld, 4096, &be);
  if (rank == 3) return 0;  // imported, then leaves without ever entering a barrier

  CHECK_STATUS(symmem_barrier(b, 0, 500), SYMMEM_ERR_TIMEOUT);
  const char* expected = "barrier(channel 0): timed out after 500 ms waiting for rank(s) 3";
  if (std::strcmp(symmem_last_error(), expected) != 0)
    TEST_FAIL("message \"%s\", expected \"%s\"", symmem_last_error(), expected);

  if (rank == 0) {
    // Rank 3 never consumes: the first put lands, the second cannot.
    CHECK_OK(symmem_put_signal(b, 3, 5, 100));
    CHECK_STATUS(symmem_put_signal(b, 3, 5, 100), SYMMEM_ERR_TIMEOUT);
    CHECK_ERROR_HAS("put_signal(peer 3, channel 5): timed out after 100 ms; rank 3 has not consumed");
    CHECK_STATUS(symmem_wait_signal(b, 3, 5, 100), SYMMEM_ERR_TIMEOUT);
    CHECK_ERROR_HAS("wait_signal(peer 3, channel 5): timed out after 100 ms; no signal from rank 3");
    // The all-reduce reports its first barrier, with context.
    std::vector<float> out(4);
    CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, 4, out.data(), nullptr, 200),
                 SYMMEM_ERR_TIMEOUT);
    CHECK_ERROR_HAS("all_reduce (waiting for inputs): barrier(channel 32)");
    CHECK_ERROR_HAS("rank(s) 1, 2, 3");
  }
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

int main() {
  RUN_RANKS(kWorld, rank_main);
  std::printf("test_barrier_timeout: missing rank named: OK\n");
  return 0;
}
