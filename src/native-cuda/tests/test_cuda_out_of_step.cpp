// After a missed deadline on the device, no wrong result: rank 1 comes 1.5 s late to one fp32
// all-reduce whose deadline is 300 ms, then both ranks run 50 more on the same buffer, a few ms apart,
// every element checked. Before, the ranks' epochs and flags stayed where the given-up kernel left them
// and a later call could pass a barrier on a stale arrival. Now every call is exact or fails, and from
// the first failure on each rank every collective on the buffer is refused ("out of step ... free it");
// a new buffer then works. One-shot and two-shot, in place and out of place. A graph captured before
// the failure holds the same collective: its replay afterwards is refused too, not run on stale state.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_test_util.h"

static const uint64_t kCount = 4096;
static const int kCalls = 50;

static float in(int rank, uint64_t i, int call) { return float((rank + 1) * 1000 + call) + float(i % 7); }

// A call that failed: 0. The first two failures of each rank say why (the log a failure is read with).
static int refused(int rank, int call, const char* where) {
  static int told = 0;
  if (told++ < 2) std::fprintf(stderr, "[rank %d] call %d failed in %s: %s\n", rank, call, where, symmem_last_error());
  return 0;
}

// One checked all-reduce: 1 exact, 0 failed; a wrong value that reported success fails the test.
static int checked(symmem_buffer* b, cudaStream_t s, float* out, int rank, int call, symmem_algo algo, bool in_place) {
  std::vector<float> host(kCount);
  for (uint64_t i = 0; i < kCount; ++i) host[i] = in(rank, i, call);
  float* mine = static_cast<float*>(symmem_buffer_ptr(b, rank));
  copy_to_device(mine, host.data(), kCount * 4);
  if (symmem_all_reduce(b, algo, SYMMEM_FLOAT32, SYMMEM_SUM, kCount, in_place ? nullptr : out, s, 300) != SYMMEM_OK)
    return refused(rank, call, "symmem_all_reduce");
  if (symmem_stream_synchronize(b, s) != SYMMEM_OK) return refused(rank, call, "symmem_stream_synchronize");
  CUDA_OK(cudaMemcpy(host.data(), in_place ? mine : out, kCount * 4, cudaMemcpyDeviceToHost));
  for (uint64_t i = 0; i < kCount; ++i) {
    const float want = in(0, i, call) + in(1, i, call);
    if (host[i] != want)
      TEST_FAIL("call %d (%s, %s) [%llu]: %g, expected %g, and the call reported success", call,
                algo == SYMMEM_ALGO_ONE_SHOT ? "one-shot" : "two-shot", in_place ? "in place" : "out of place",
                (unsigned long long)i, host[i], want);
  }
  return 1;
}

static int late_rank(int rank, int ngpu, symmem_algo algo, bool in_place, const char* name) {
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_cuda_buffer(name, rank, 2, rank % ngpu, kCount * 4, &be);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float* out = nullptr;
  CUDA_OK(cudaMalloc(&out, kCount * 4));
  // Captured while the buffer is in step, replayed only after the failure.
  symmem_graph* g = nullptr;
  CHECK_OK(symmem_graph_capture_begin(be, s));
  CHECK_OK(symmem_all_reduce(b, algo, SYMMEM_FLOAT32, SYMMEM_SUM, kCount, in_place ? nullptr : out, s, 300));
  CHECK_OK(symmem_graph_capture_end(be, s, &g));
  CHECK_OK(symmem_barrier(b, 0, 20000));
  if (rank == 1) usleep(1500000);
  const int first = checked(b, s, out, rank, 0, algo, in_place);
  if (rank == 0 && first != 0) TEST_FAIL("rank 0's call did not time out, although rank 1 came 1.5 s late");
  int exact = 0;
  for (int call = 1; call <= kCalls; ++call) {
    usleep(rank == 0 ? 1000 : 3000);
    exact += checked(b, s, out, rank, call, algo, in_place);
  }
  if (exact != 0) TEST_FAIL("%d of %d calls after the missed deadline reported success", exact, kCalls);
  CHECK_ERROR_HAS("out of step");
  CHECK_ERROR_HAS("free it");
  CHECK_STATUS(symmem_graph_replay(g, s), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("symmem_graph_replay");
  CHECK_ERROR_HAS("out of step");
  CHECK_OK(symmem_graph_free(g));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  // What to do next: a new buffer, and its collectives are right.
  symmem_backend* be2 = nullptr;
  symmem_buffer* fresh = make_cuda_buffer((std::string(name) + "-fresh").c_str(), rank, 2, rank % ngpu, kCount * 4, &be2);
  for (int call = 0; call < 5; ++call) {
    CHECK_OK(symmem_barrier(fresh, 0, 20000));  // both have read the last result before new input
    if (checked(fresh, s, out, rank, call, algo, in_place) != 1) TEST_FAIL("the new buffer's call %d failed: %s", call,
                                                                       symmem_last_error());
  }
  CHECK_OK(symmem_buffer_free(fresh));
  CHECK_OK(symmem_backend_close(be2));
  CUDA_OK(cudaFree(out));
  CUDA_OK(cudaStreamDestroy(s));
  return 0;
}

int main() {
  const int ngpu = require_gpus("test_cuda_out_of_step", 1);
  if (ngpu < 2) setenv("SYMMEM_ALLOW_OVERLAPPING_DEVICES", "1", 1);
  struct Case {
    symmem_algo algo;
    bool in_place;
    const char* name;
  };
  const Case cases[] = {{SYMMEM_ALGO_ONE_SHOT, false, "cudaoos-1o"}, {SYMMEM_ALGO_ONE_SHOT, true, "cudaoos-1i"},
                        {SYMMEM_ALGO_TWO_SHOT, false, "cudaoos-2o"}, {SYMMEM_ALGO_TWO_SHOT, true, "cudaoos-2i"}};
  for (const Case& c : cases)
    if (!run_ranks(2, 120, [&](int r) { return late_rank(r, ngpu, c.algo, c.in_place, c.name); })) return 1;
  std::printf("test_cuda_out_of_step: after a missed deadline, %d calls on each rank, none wrong, replays refused, 4 algorithms: OK\n",
              kCalls);
  return 0;
}
