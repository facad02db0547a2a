// The copy-engine two-shot (SYMMEM_ALGO_TWO_SHOT_CE) at world 2, beyond test_cuda_collectives'
// per-dtype cases, with 128 KiB scratch slots (so a few MiB go in many chunks):
//  1. Three threads per rank, each with its own buffer and two streams, 16 rounds each (grids of at
//     most 32 blocks, so that three fit on the GPU together: see main): the
//     copy-engine two-shot on both streams in turn, between two-shots, one-shots and AUTO (which
//     picks it from 1 MiB here), every round a new size (chunk counts 1 to 17, odd tails); every
//     result checked exactly (small integers).
//  2. A CUDA graph whose only call is the copy-engine two-shot, captured before the buffer made any
//     eager one (its copy streams are made inside the capture), replayed 20 times on new inputs
//     with eager copy-engine calls on another stream between replays; every result checked.
//  3. A peer that does not come: the call ends at its deadline (500 ms) with the peer, the chunk
//     and what was awaited named, not a hang.
//  4. symmem_abort ends a call that waits for a peer within seconds of a 30 s deadline.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cuda_test_util.h"

static const int kWorld = 2;
static const int kTimeoutMs = 20000;
static const uint64_t kSlot = 128 << 10;

static float value(int rank, uint64_t i, int round) {
  return float(int((i * 7 + uint64_t(round) * 3 + uint64_t(rank) * 5) % 61) - 30);
}

static void write_input(symmem_buffer* b, int rank, uint64_t n, int round, cudaStream_t s) {
  std::vector<float> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = value(rank, i, round);
  CUDA_OK(cudaMemcpyAsync(symmem_buffer_ptr(b, rank), v.data(), n * 4, cudaMemcpyHostToDevice, s));
  CUDA_OK(cudaStreamSynchronize(s));
}

static void expect_sums(symmem_buffer* b, int rank, uint64_t n, int round, const char* what) {
  std::vector<float> got(n);
  CUDA_OK(cudaMemcpy(got.data(), symmem_buffer_ptr(b, rank), n * 4, cudaMemcpyDeviceToHost));
  uint64_t bad = 0, first = 0;
  for (uint64_t i = 0; i < n; ++i)
    if (got[i] != value(0, i, round) + value(1, i, round) && bad++ == 0) first = i;
  if (bad != 0)
    TEST_FAIL("%s, round %d, %llu floats: %llu wrong, the first at %llu: %g, expected %g", what, round,
              (unsigned long long)n, (unsigned long long)bad, (unsigned long long)first, got[first],
              value(0, first, round) + value(1, first, round));
}

// 1. One thread's rounds on its own buffer.
static void thread_rounds(int rank, int device, int t) {
  CUDA_OK(cudaSetDevice(device));
  char test[32];
  std::snprintf(test, sizeof test, "cethreads%d", t);
  symmem_backend* be = nullptr;
  const uint64_t max_n = 1100000;  // floats; the largest round has 1 035 021: 17 chunks per half
  symmem_buffer* b = make_cuda_buffer(test, rank, kWorld, device, max_n * 4, &be);
  cudaStream_t s[2];
  for (auto& x : s) CUDA_OK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  const symmem_algo others[] = {SYMMEM_ALGO_TWO_SHOT, SYMMEM_ALGO_ONE_SHOT, SYMMEM_ALGO_AUTO};
  for (int round = 0; round < 16; ++round) {
    // 1 chunk at round 0, then more: up to 4.4 MB (17 chunks per half at 128 KiB).
    const uint64_t n = round == 0 ? 1001 : uint64_t(round) * 69001 + uint64_t(t) * 7 + 3;
    const bool ce = round % 2 == 0;
    symmem_algo algo = ce ? SYMMEM_ALGO_TWO_SHOT_CE : others[(round / 2 + t) % 3];
    if (algo == SYMMEM_ALGO_ONE_SHOT && n * 4 > symmem_one_shot_in_place_max_bytes(b)) algo = SYMMEM_ALGO_TWO_SHOT;
    cudaStream_t on = s[(round / 2 + t) % 2];
    write_input(b, rank, n, round, on);
    CHECK_OK(symmem_all_reduce(b, algo, SYMMEM_FLOAT32, SYMMEM_SUM, n, nullptr, on, kTimeoutMs));
    CHECK_OK(symmem_stream_synchronize(b, on));
    char what[96];
    std::snprintf(what, sizeof what, "thread %d, algo %d", t, int(algo));
    expect_sums(b, rank, n, round, what);
  }
  for (auto& x : s) CUDA_OK(cudaStreamDestroy(x));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
}

// 2. Capture first, then replays and eager calls.
static void graph_rounds(int rank, int device) {
  symmem_backend* be = nullptr;
  const uint64_t n = 1000003;  // floats: 4 MB, 8 chunks per half
  symmem_buffer* b = make_cuda_buffer("cegraph", rank, kWorld, device, n * 4, &be);
  cudaStream_t s, eager;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&eager, cudaStreamNonBlocking));
  CHECK_OK(symmem_graph_capture_begin(be, s));
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT_CE, SYMMEM_FLOAT32, SYMMEM_SUM, n, nullptr, s, kTimeoutMs));
  symmem_graph* g = nullptr;
  CHECK_OK(symmem_graph_capture_end(be, s, &g));
  for (int round = 0; round < 20; ++round) {
    write_input(b, rank, n, round, s);
    CHECK_OK(symmem_graph_replay(g, s));
    CHECK_OK(symmem_graph_synchronize(g, s));
    expect_sums(b, rank, n, round, "graph replay");
    if (round % 4 == 3) {
      const int r2 = 1000 + round;
      write_input(b, rank, n - round, r2, eager);
      CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT_CE, SYMMEM_FLOAT32, SYMMEM_SUM, n - round, nullptr, eager,
                                 kTimeoutMs));
      CHECK_OK(symmem_stream_synchronize(b, eager));
      expect_sums(b, rank, n - round, r2, "eager call between replays");
    }
  }
  CHECK_OK(symmem_graph_free(g));
  CUDA_OK(cudaStreamDestroy(s));
  CUDA_OK(cudaStreamDestroy(eager));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
}

// 3 and 4: rank 1 allocates and maps, then stays away; rank 0's calls must end on their own.
static void missing_peer(int rank, int device) {
  symmem_backend* be = nullptr;
  const uint64_t n = 20000;  // one chunk: the first wait is the reduce kernel's, for the push
  symmem_buffer* b = make_cuda_buffer("cemissing", rank, kWorld, device, 2 << 20, &be);
  // The timeout leaves b out of step (its collectives are refused from then on): the abort's case
  // runs on a buffer of its own.
  symmem_backend* be2 = nullptr;
  symmem_buffer* b2 = make_cuda_buffer("cemissing2", rank, kWorld, device, 2 << 20, &be2);
  if (rank == 1) {
    sleep(5);  // keeps its memory mapped while rank 0 waits, never calls
    CHECK_OK(symmem_buffer_free(b));
    CHECK_OK(symmem_backend_close(be));
    CHECK_OK(symmem_buffer_free(b2));
    CHECK_OK(symmem_backend_close(be2));
    return;
  }
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  auto t0 = std::chrono::steady_clock::now();
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT_CE, SYMMEM_FLOAT32, SYMMEM_SUM, n, nullptr, s, 500));
  CHECK_STATUS(symmem_stream_synchronize(b, s), SYMMEM_ERR_TIMEOUT);
  const double took = seconds_since(t0);
  CHECK_ERROR_HAS("all_reduce two-shot-ce: rank 1 did not answer within 500 ms (waiting for the push of chunk 1)");
  if (took > 3.0) TEST_FAIL("the 500 ms deadline ended the call after %.1f s", took);
  CHECK_OK(symmem_cuda_check(b));  // the report cleared the record
  CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT_CE, SYMMEM_FLOAT32, SYMMEM_SUM, n, nullptr, s, 500),
               SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("out of step");

  std::thread aborter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    symmem_abort("rank 1 is gone (test)");
  });
  t0 = std::chrono::steady_clock::now();
  CHECK_OK(symmem_all_reduce(b2, SYMMEM_ALGO_TWO_SHOT_CE, SYMMEM_FLOAT32, SYMMEM_SUM, n, nullptr, s, 30000));
  CHECK_STATUS(symmem_stream_synchronize(b2, s), SYMMEM_ERR_ABORTED);
  aborter.join();
  if (seconds_since(t0) > 5.0) TEST_FAIL("the abort ended the call after %.1f s", seconds_since(t0));
  CHECK_ERROR_HAS("all_reduce two-shot-ce waiting for the push of chunk 1 of rank 1");
  CHECK_ERROR_HAS("rank 1 is gone (test)");
  symmem_abort_reset();
  CUDA_OK(cudaStreamDestroy(s));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_buffer_free(b2));
  CHECK_OK(symmem_backend_close(be2));
  CHECK_OK(symmem_backend_close(be));
}

static int rank_main(int rank, int ngpu) {
  const int device = rank % ngpu;
  CUDA_OK(cudaSetDevice(device));
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back(thread_rounds, rank, device, t);
  for (auto& t : threads) t.join();
  if (rank == 0) std::printf("threads: 3 x 16 rounds checked\n");
  graph_rounds(rank, device);
  if (rank == 0) std::printf("graph: 20 replays and 5 eager calls checked\n");
  missing_peer(rank, device);
  if (rank == 0) std::printf("missing peer: deadline and abort named it\n");
  return 0;
}

int main() {
  const int ngpu = require_gpus("test_cuda_ce", 1);
  if (ngpu < kWorld) setenv("SYMMEM_ALLOW_OVERLAPPING_DEVICES", "1", 1);
  setenv("SYMMEM_CUDA_CE_SLOT_BYTES", std::to_string(kSlot).c_str(), 1);
  setenv("SYMMEM_CUDA_CE_MIN_BYTES", "1048576", 1);
  // Part 1 runs three large float32 collectives per GPU at once, beside the copy-engine two-shot's
  // reduce kernels. Full grids of the world-2 kernels take half of every SM, so two fit on a GPU,
  // but not three with those kernels beside them: a grid then gets onto one GPU only in part, its
  // blocks there wait for peer blocks that cannot start, and both ranks stall until the deadline
  // (default grids: 3 of 28 or more runs with the host's cores busy, 1 of 50 quiet; 2 x H200).
  // Grids of at most 32 blocks leave room for all of them (no stall in about 25 runs with the
  // cores busy; docs/cuda-backend.md, concurrency). Caps the caller set are kept
  // (scripts/gpu/run-grid.sh runs this test with other grid sizes).
  setenv("SYMMEM_CUDA_ONE_SHOT_BLOCKS", "32", 0);
  setenv("SYMMEM_CUDA_TWO_SHOT_BLOCKS", "32", 0);
  if (!run_ranks(kWorld, 240, [&](int r) { return rank_main(r, ngpu); })) return 1;
  std::printf("test_cuda_ce: OK\n");
  return 0;
}
