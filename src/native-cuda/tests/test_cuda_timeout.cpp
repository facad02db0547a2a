// A rank that never enters the barrier: the device-side wait gives up at its deadline, and the
// synchronising call names the missing rank. Also put/wait and a collective.
#include <string>

#include "cuda_test_util.h"

// A bf16 all-reduce of `count` elements with a 300 ms deadline while rank `missing` never comes: the
// synchronising call reports the timeout, naming the operation, its first wait and the rank, and
// clears the record.
static void all_reduce_times_out(symmem_buffer* b, cudaStream_t s, void* out, symmem_algo algo,
                                 uint64_t count, int missing) {
  CHECK_OK(symmem_all_reduce(b, algo, SYMMEM_BFLOAT16, SYMMEM_SUM, count, out, s, 300));
  CHECK_STATUS(symmem_stream_synchronize(b, s), SYMMEM_ERR_TIMEOUT);
  char rank_text[64];
  std::snprintf(rank_text, sizeof rank_text, "rank %d did not arrive within 300 ms", missing);
  CHECK_ERROR_HAS(algo == SYMMEM_ALGO_ONE_SHOT ? "all_reduce one-shot (barrier 1 of 2, waiting for inputs)"
                                               : "all_reduce two-shot (barrier 1 of ");
  CHECK_ERROR_HAS(rank_text);
  // The record was cleared by the report.
  CHECK_OK(symmem_cuda_check(b));
}

static int rank_main(int rank, int world, int ngpu) {
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_cuda_buffer("cudatimeout", rank, world, rank % ngpu, 1 << 20, &be);
  // A collective that gave up leaves its buffer out of step (every later collective on it is refused):
  // each timeout below has a buffer of its own.
  symmem_backend* cbe[3] = {};
  symmem_buffer* c[3] = {};
  for (int i = 0; i < 3; ++i) {
    const std::string name = "cudatimeout-c" + std::to_string(i);
    c[i] = make_cuda_buffer(name.c_str(), rank, world, rank % ngpu, 1 << 20, &cbe[i]);
  }
  const int missing = world - 1;
  if (rank == missing) {
    sleep(4);  // keeps its memory alive while the others time out, never signals
    CHECK_OK(symmem_buffer_free(b));
    for (int i = 0; i < 3; ++i) CHECK_OK(symmem_buffer_free(c[i]));
    return 0;
  }
  char expected[128];
  std::snprintf(expected, sizeof expected, "barrier(channel 0): rank %d did not arrive within 500 ms",
                missing);
  CHECK_STATUS(symmem_barrier(b, 0, 500), SYMMEM_ERR_TIMEOUT);
  if (std::strcmp(symmem_last_error(), expected) != 0)
    TEST_FAIL("message \"%s\", expected \"%s\"", symmem_last_error(), expected);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  void* out = nullptr;
  CUDA_OK(cudaMalloc(&out, 1 << 20));
  all_reduce_times_out(c[0], s, out, SYMMEM_ALGO_ONE_SHOT, 1000, missing);
  // From then on that buffer's collectives are refused at once, saying what to do.
  CHECK_STATUS(symmem_all_reduce(c[0], SYMMEM_ALGO_ONE_SHOT, SYMMEM_BFLOAT16, SYMMEM_SUM, 1000, out, s, 300),
               SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("out of step");
  CHECK_ERROR_HAS("free it");
  // The same from a one-shot whose warps wait chunk by chunk (the 128-byte lines at world 2 on GPUs
  // of their own, else the push one-shot), and from a two-shot (at world 4 on GPUs of their own
  // the 128-byte lines, waiting chunk by chunk too).
  all_reduce_times_out(c[1], s, out, SYMMEM_ALGO_ONE_SHOT, 300000, missing);
  all_reduce_times_out(c[2], s, out, SYMMEM_ALGO_TWO_SHOT, 300000, missing);
  // Only rank 0 goes on: the others must not wait for it in a collective meanwhile.
  if (rank == 0) {
    CHECK_OK(symmem_wait_signal_on_stream(b, missing, 5, s, 200));
    CHECK_STATUS(symmem_stream_synchronize(b, s), SYMMEM_ERR_TIMEOUT);
    CHECK_ERROR_HAS("wait_signal(peer ");
    CHECK_ERROR_HAS("no signal from rank");
    // The first put lands (slot empty), the second finds it unconsumed.
    CHECK_OK(symmem_put_signal(b, missing, 6, 200));
    CHECK_STATUS(symmem_put_signal(b, missing, 6, 200), SYMMEM_ERR_TIMEOUT);
    CHECK_ERROR_HAS("did not consume the previous signal within 200 ms");
  }
  if (rank == 0) std::printf("rank 0 saw: %s\n", symmem_last_error());
  CUDA_OK(cudaFree(out));
  CUDA_OK(cudaStreamDestroy(s));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  for (int i = 0; i < 3; ++i) {
    CHECK_OK(symmem_buffer_free(c[i]));
    CHECK_OK(symmem_backend_close(cbe[i]));
  }
  return 0;
}

int main() {
  const int ngpu = require_gpus("test_cuda_timeout", 1);
  const int world = ngpu >= 4 ? 4 : 2;
  if (ngpu < world) setenv("SYMMEM_ALLOW_OVERLAPPING_DEVICES", "1", 1);
  if (!run_ranks(world, 60, [&](int r) { return rank_main(r, world, ngpu); })) return 1;
  std::printf("test_cuda_timeout: missing rank named (world %d): OK\n", world);
  return 0;
}
