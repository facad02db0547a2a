// CUDA-graph capture and replay on the cuda backend, world 2 (one GPU is enough with
// SYMMEM_ALLOW_OVERLAPPING_DEVICES=1).
//  1. One graph holds, per replay: a device-to-device copy of new input into the symmetric buffer,
//     one-shot out of place (pull: 1.2 MB; push: 256 KiB), all-gather and reduce-scatter out of
//     place, a barrier on a stream, two-shot out of place, one-shot in place (push) and two-shot in
//     place (1.2 MB), each result copied out inside the graph. It is replayed kReplays times with
//     new input written before each replay in one of the two ways ordered before it (cudaMemcpyAsync
//     on the replay's stream, symmem_local_copy_in), every result checked exactly (a failure says
//     whether it is one rank's stale input); every 10th round an eager
//     all-reduce on another stream runs between replays (the kernels' device-kept epochs are shared
//     by eager and replayed work).
//  2. What capture refuses, by name, without spoiling the capture: a host wait on the capturing
//     stream, a copy while the buffer's work is on it, an eager call on another stream that would
//     have to wait for it, a second begin, a device-wide wait (local alloc) from the capturing
//     thread, destroying the capturing stream; freeing a buffer a live graph uses.
//  3. A capture of the caller's own (cudaStreamBeginCapture on a foreign stream, as
//     torch.cuda.graph does), replayed 50 times with cudaGraphLaunch on new input, checked.
//  4. A peer that does not replay: the replaying rank's graph ends with the deadline error (not a
//     hang), reported by symmem_graph_synchronize.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cuda_test_util.h"

static const int kWorld = 2;
static const int kReplays = 120;
// floats: 5.2 MB, above the push scratch (pull one-shot): at the default
// SYMMEM_CUDA_PUSH_SCRATCH_BYTES (4 MiB) the scratch holds 4.5 MiB - 16 KiB per rank at world 2.
static const uint64_t kBig = 1300001;
static const uint64_t kN = 65541;     // floats: 256 KiB, push one-shot; odd on purpose
static const uint64_t kM = 4099;      // all-gather / reduce-scatter block
static const int kTimeoutMs = 20000;

// Each rank's input moves with the replay at its own stride (7 + 2 * rank), so that a sum holding
// one rank's input of another replay tells which rank's it was (with one stride for all, rank 0's
// old input plus rank 1's new one equals the converse).
static float in(int rank, uint64_t i, int round) {
  return float((i * 13 + rank * 101 + uint64_t(round) * (7 + 2 * rank)) % 251) / 16.0f - 8.0f;
}
static double sum_in(uint64_t i, int round) {
  double s = 0;
  for (int r = 0; r < kWorld; ++r) s += in(r, i, round);
  return s;
}

static std::vector<float> fetch(const float* dev, uint64_t n) {
  std::vector<float> h(n);
  CUDA_OK(cudaMemcpy(h.data(), dev, n * 4, cudaMemcpyDeviceToHost));
  return h;
}

// Which ranks' inputs of another replay (within 3) make `got` at element i: the mark of an input
// that had not landed (or was overwritten early) when the graph read it, as opposed to a wrong
// reduction. "" when none does.
static std::string stale_inputs(float got, uint64_t i, int round) {
  std::string found;
  for (int d = -3; d <= 3; ++d) {
    if (d == 0 || round + d < 0) continue;
    for (int r = 0; r < kWorld; ++r)
      if (std::fabs(got - (sum_in(i, round) - in(r, i, round) + in(r, i, round + d))) <= 1e-4)
        found += (found.empty() ? "" : " or ") + std::string("rank ") + std::to_string(r) +
                 "'s input of replay " + std::to_string(round + d);
  }
  return found;
}

// Checks every element; a failure names how many are wrong and their range, and whether the first
// is explained by one rank's stale input (on 2 x H200 a pageable cudaMemcpy of the new input,
// unordered with the replay's stream, left one rank's input stale from element 262144, the first
// past 1 MiB, on: both ranks reported that element, -2.75 = one rank's replay-2 input plus the
// other's replay-1 input, under the earlier in() with one stride for both ranks).
static void expect_sums(const float* dev, uint64_t n, int round, const char* what) {
  const std::vector<float> got = fetch(dev, n);
  uint64_t bad = 0, first = 0, last = 0;
  for (uint64_t i = 0; i < n; ++i)
    if (std::fabs(got[i] - sum_in(i, round)) > 1e-4) {
      if (bad++ == 0) first = i;
      last = i;
    }
  if (bad == 0) return;
  const std::string stale = stale_inputs(got[first], first, round);
  TEST_FAIL("%s, replay %d [%llu]: %g, expected %g (%llu of %llu wrong, in [%llu, %llu])%s%s%s",
            what, round, (unsigned long long)first, got[first], sum_in(first, round),
            (unsigned long long)bad, (unsigned long long)n, (unsigned long long)first,
            (unsigned long long)last, stale.empty() ? "" : "; it is the sum with ", stale.c_str(),
            stale.empty() ? "" : ": a stale input, not a wrong reduction");
}

struct Outs {
  float *big1, *n1, *ag, *rs, *n2, *n3, *big2;
};

// The graph's work, in the order it is captured (and replayed).
static void capture_round(symmem_buffer* b, void* s, const float* staging, const Outs& o, int rank) {
  auto st = static_cast<cudaStream_t>(s);
  float* sym = static_cast<float*>(symmem_buffer_ptr(b, SYMMEM_RANK_SELF));
  CUDA_OK(cudaMemcpyAsync(sym, staging, kBig * 4, cudaMemcpyDeviceToDevice, st));
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kBig, o.big1, s, kTimeoutMs));
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kN, o.n1, s, kTimeoutMs));
  CHECK_OK(symmem_all_gather(b, SYMMEM_FLOAT32, kM, o.ag, s, kTimeoutMs));
  CHECK_OK(symmem_reduce_scatter(b, SYMMEM_FLOAT32, SYMMEM_SUM, kM, o.rs, s, kTimeoutMs));
  CHECK_OK(symmem_barrier_on_stream(b, 3, s, kTimeoutMs));
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kN, o.n2, s, kTimeoutMs));
  CUDA_OK(cudaMemcpyAsync(sym, staging, kN * 4, cudaMemcpyDeviceToDevice, st));
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kN, nullptr, s, kTimeoutMs));
  CUDA_OK(cudaMemcpyAsync(o.n3, sym, kN * 4, cudaMemcpyDeviceToDevice, st));
  CUDA_OK(cudaMemcpyAsync(sym, staging, kBig * 4, cudaMemcpyDeviceToDevice, st));
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kBig, nullptr, s, kTimeoutMs));
  CUDA_OK(cudaMemcpyAsync(o.big2, sym, kBig * 4, cudaMemcpyDeviceToDevice, st));
  (void)rank;
}

static void check_round(const Outs& o, int rank, int round) {
  expect_sums(o.big1, kBig, round, "one-shot out of place (pull)");
  expect_sums(o.n1, kN, round, "one-shot out of place (push)");
  expect_sums(o.n2, kN, round, "two-shot out of place");
  expect_sums(o.n3, kN, round, "one-shot in place");
  expect_sums(o.big2, kBig, round, "two-shot in place");
  const std::vector<float> ag = fetch(o.ag, kWorld * kM);
  for (int p = 0; p < kWorld; ++p)
    for (uint64_t j = 0; j < kM; ++j)
      if (ag[p * kM + j] != in(p, j, round))
        TEST_FAIL("all-gather, replay %d, rank %d's [%llu]: %g, expected %g", round, p,
                  (unsigned long long)j, ag[p * kM + j], in(p, j, round));
  const std::vector<float> rs = fetch(o.rs, kM);
  for (uint64_t j = 0; j < kM; ++j)
    if (std::fabs(rs[j] - sum_in(rank * kM + j, round)) > 1e-4)
      TEST_FAIL("reduce-scatter, replay %d [%llu]: %g, expected %g", round, (unsigned long long)j,
                rs[j], sum_in(rank * kM + j, round));
}

// Calls that capture refuses, each checked not to spoil the capture in progress on `s`.
static void check_refusals_during_capture(symmem_backend* be, symmem_buffer* b, void* s, void* other) {
  CHECK_STATUS(symmem_stream_synchronize(b, s), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("capturing a CUDA graph");
  std::vector<float> x(16, 1.0f);
  CHECK_STATUS(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 0, x.data(), 64), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("symmem_buffer_copy_in: the buffer's work went to stream");
  CHECK_STATUS(symmem_barrier_on_stream(b, 4, other, kTimeoutMs), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("which is capturing a CUDA graph now");
  CHECK_STATUS(symmem_graph_capture_begin(be, s), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("capturing already");
  void* local = nullptr;
  CHECK_STATUS(symmem_local_alloc(be, 64, &local), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("symmem_local_alloc: this thread is capturing a CUDA graph");
  CHECK_STATUS(symmem_stream_destroy(be, s), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("symmem_stream_destroy: stream");
  cudaStreamCaptureStatus st;
  CUDA_OK(cudaStreamIsCapturing(static_cast<cudaStream_t>(s), &st));
  if (st != cudaStreamCaptureStatusActive) TEST_FAIL("a refused call spoiled the capture (status %d)", (int)st);
}

static void replays(int rank, symmem_backend* be, symmem_buffer* b) {
  void *s, *other;
  CHECK_OK(symmem_stream_create(be, &s));
  CHECK_OK(symmem_stream_create(be, &other));
  float* staging = nullptr;  // local memory: symmem_local_copy_in writes it in odd rounds
  CHECK_OK(symmem_local_alloc(be, kBig * 4, reinterpret_cast<void**>(&staging)));
  Outs o;
  for (float** p : {&o.big1, &o.n1, &o.ag, &o.rs, &o.n2, &o.n3, &o.big2})
    CUDA_OK(cudaMalloc(p, kBig * 4));
  float* eager_out = nullptr;
  CUDA_OK(cudaMalloc(&eager_out, kN * 4));

  // The buffer's previous launch goes to `s` before the capture, so the refusals below apply.
  CHECK_OK(symmem_barrier_on_stream(b, 0, s, kTimeoutMs));
  CHECK_STATUS(symmem_graph_capture_begin(be, nullptr), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_OK(symmem_graph_capture_begin(be, s));
  check_refusals_during_capture(be, b, s, other);
  capture_round(b, s, staging, o, rank);
  symmem_graph* g = nullptr;
  CHECK_OK(symmem_graph_capture_end(be, s, &g));
  CHECK(symmem_graph_buffer_count(g) == 1);
  CHECK(symmem_graph_node_count(g) >= 13);  // 5 copies, 7 collectives, 1 barrier
  symmem_graph* none = nullptr;
  CHECK_STATUS(symmem_graph_capture_end(be, s, &none), SYMMEM_ERR_STATE);  // no capture open now
  CHECK_ERROR_HAS("has no capture begun by symmem_graph_capture_begin");
  CHECK(g != nullptr);

  // New input goes into `staging` by one of the two ways that order it before the replay, in turn.
  // Not a plain cudaMemcpy: from pageable memory it returns once the data are in the driver's
  // staging area, before the DMA has landed, and `s` (non-blocking) does not wait for the legacy
  // stream, so the graph's first copy could read the previous replay's input (2 x H200: the part
  // past the first MiB, replay 2; both ranks then reduced that rank's stale values).
  std::vector<float> x(kBig);
  for (int round = 0; round < kReplays; ++round) {
    for (uint64_t i = 0; i < kBig; ++i) x[i] = in(rank, i, round);
    if (round % 2 == 0) {
      // On the replay's stream: stream order puts the copy before the replay (x may be reused at
      // return: a pageable source is staged before cudaMemcpyAsync returns).
      CUDA_OK(cudaMemcpyAsync(staging, x.data(), kBig * 4, cudaMemcpyHostToDevice,
                              static_cast<cudaStream_t>(s)));
    } else {
      // symmem's own copy into local memory (the façade's path): complete when it returns.
      CHECK_OK(symmem_local_copy_in(be, staging, 0, x.data(), kBig * 4));
    }
    CHECK_OK(symmem_graph_replay(g, s));
    CHECK_OK(symmem_graph_synchronize(g, s));
    check_round(o, rank, round);
    if (round % 10 == 9) {  // eager work between replays, on another stream
      CHECK_OK(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 0, x.data(), kN * 4));
      CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kN, eager_out,
                                 other, kTimeoutMs));
      CHECK_OK(symmem_stream_synchronize(b, other));
      expect_sums(eager_out, kN, round, "eager one-shot between replays");
    }
  }
  CHECK_STATUS(symmem_buffer_free(b), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("CUDA graph captured with this buffer's work");
  CHECK_OK(symmem_graph_free(g));
  CHECK_OK(symmem_barrier(b, 0, kTimeoutMs));  // no peer reads this rank's buffer any more
  for (float* p : {o.big1, o.n1, o.ag, o.rs, o.n2, o.n3, o.big2, eager_out}) CUDA_OK(cudaFree(p));
  CHECK_OK(symmem_local_free(be, staging));
  CHECK_OK(symmem_stream_destroy(be, s));
  CHECK_OK(symmem_stream_destroy(be, other));
}

// A capture of the caller's own (cudaStreamBeginCapture on a stream symmem did not make, as
// torch.cuda.graph does): symmem's kernels are recorded and replay correctly through
// cudaGraphLaunch; the caller orders and synchronises the replays.
static void raw_capture(int rank, symmem_buffer* b) {
  cudaStream_t fs;
  CUDA_OK(cudaStreamCreateWithFlags(&fs, cudaStreamNonBlocking));
  float *staging = nullptr, *out = nullptr, *out2 = nullptr;
  for (float** p : {&staging, &out, &out2}) CUDA_OK(cudaMalloc(p, kN * 4));
  float* sym = static_cast<float*>(symmem_buffer_ptr(b, SYMMEM_RANK_SELF));
  CHECK_OK(symmem_barrier_on_stream(b, 2, fs, kTimeoutMs));  // eager work on the stream first
  CUDA_OK(cudaStreamBeginCapture(fs, cudaStreamCaptureModeThreadLocal));
  CUDA_OK(cudaMemcpyAsync(sym, staging, kN * 4, cudaMemcpyDeviceToDevice, fs));
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kN, out, fs, kTimeoutMs));
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kN, nullptr, fs, kTimeoutMs));
  CUDA_OK(cudaMemcpyAsync(out2, sym, kN * 4, cudaMemcpyDeviceToDevice, fs));
  cudaGraph_t graph = nullptr;
  CUDA_OK(cudaStreamEndCapture(fs, &graph));
  cudaGraphExec_t exec = nullptr;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<float> x(kN);
  for (int round = 0; round < 50; ++round) {
    for (uint64_t i = 0; i < kN; ++i) x[i] = in(rank, i, round);
    // On fs, before the launch (a plain cudaMemcpy would not be ordered with fs: see replays()).
    CUDA_OK(cudaMemcpyAsync(staging, x.data(), kN * 4, cudaMemcpyHostToDevice, fs));
    CUDA_OK(cudaGraphLaunch(exec, fs));
    CHECK_OK(symmem_stream_synchronize(b, fs));
    expect_sums(out, kN, round, "one-shot in a capture of the caller's own");
    expect_sums(out2, kN, round, "two-shot in place in a capture of the caller's own");
  }
  CUDA_OK(cudaGraphExecDestroy(exec));
  CUDA_OK(cudaGraphDestroy(graph));
  CHECK_OK(symmem_barrier(b, 0, kTimeoutMs));  // eager again, ordered after the stream's eager work
  for (float* p : {staging, out, out2}) CUDA_OK(cudaFree(p));
  CUDA_OK(cudaStreamDestroy(fs));
}

// Rank 1 captures but never replays: rank 0's replay must end at its deadline with the error.
static void missing_peer(int rank, symmem_backend* be, symmem_buffer* b) {
  void* s;
  CHECK_OK(symmem_stream_create(be, &s));
  float* out = nullptr;
  CUDA_OK(cudaMalloc(&out, 4096 * 4));
  const int deadline_ms = 700;
  CHECK_OK(symmem_graph_capture_begin(be, s));
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, 4096, out, s, deadline_ms));
  symmem_graph* g = nullptr;
  CHECK_OK(symmem_graph_capture_end(be, s, &g));
  if (rank == 0) {
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_OK(symmem_graph_replay(g, s));
    CHECK_STATUS(symmem_graph_synchronize(g, s), SYMMEM_ERR_TIMEOUT);
    CHECK_ERROR_HAS("rank 1 did not arrive within 700 ms");
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (ms > 10000) TEST_FAIL("the missing peer's deadline error came after %.0f ms", ms);
    std::printf("rank 0: a graph whose peer never replays ended after %.0f ms: %s\n", ms, symmem_last_error());
  } else {
    usleep(3000 * 1000);  // rank 0's replay reads this rank's memory until its deadline
  }
  CHECK_OK(symmem_graph_free(g));
  CUDA_OK(cudaFree(out));
  CHECK_OK(symmem_stream_destroy(be, s));
}

static int rank_main(int rank, int gpus) {
  symmem_backend* be = nullptr;
  symmem_backend* be2 = nullptr;
  symmem_buffer* b = make_cuda_buffer("cudagraphs", rank, kWorld, rank % gpus, kBig * 4, &be);
  replays(rank, be, b);
  raw_capture(rank, b);
  CHECK_OK(symmem_buffer_free(b));
  symmem_buffer* b2 = make_cuda_buffer("cudagraphs2", rank, kWorld, rank % gpus, 4096 * 4, &be2);
  missing_peer(rank, be2, b2);
  CHECK_OK(symmem_buffer_free(b2));  // its signal state is undefined after the timeout: freed
  CHECK_OK(symmem_backend_close(be));
  CHECK_OK(symmem_backend_close(be2));
  return 0;
}

int main() {
  int gpus = require_gpus("test_cuda_graphs", 1);
  if (gpus < kWorld) {
    const char* o = std::getenv("SYMMEM_ALLOW_OVERLAPPING_DEVICES");
    if (o == nullptr || std::strcmp(o, "1") != 0) {
      std::printf("SKIPPED: test_cuda_graphs needs 2 GPUs, or SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 on one\n");
      return kSkip;
    }
  }
  if (!run_ranks(kWorld, 240, [gpus](int rank) { return rank_main(rank, gpus); })) {
    std::fprintf(stderr, "FAILED: test_cuda_graphs\n");
    return 1;
  }
  std::printf("test_cuda_graphs: one graph (copy in, one-shot pull/push, all-gather, reduce-scatter, "
              "barrier, two-shot, in place one-shot and two-shot) replayed %d times with new input, "
              "exact, eager calls between replays; capture refusals; a raw CUDA capture replayed 50 "
              "times; a peer that never replays ends "
              "with the deadline error: OK\n",
              kReplays);
  return 0;
}
