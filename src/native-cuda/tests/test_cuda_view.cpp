// Views (pool blocks) on the cuda backend, world 2: all-reduce and all-gather on views at non-zero
// offsets give what the host computes, each touches only its window (a one-shot's push scratch
// included), work on two streams
// alternating between views of one segment stays ordered, and stream markers report passing.
// One GPU is enough with SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 (two ranks on one GPU).
#include <cmath>
#include <cstdlib>

#include "cuda_test_util.h"

static const int kWorld = 2;
static const uint64_t kN = 100003;                            // floats per block
static const uint64_t kOff[2] = {0, (1u << 20) + 4096};       // view offsets
static const uint64_t kSegment = (2u << 20) + 8192;

static float in(int rank, uint64_t i, int round) {
  return float((i * 17 + rank * 131 + round * 7) % 509) / 64.0f - 4.0f;
}

static int rank_main(int rank, int gpus) {
  symmem_backend* be = nullptr;
  symmem_buffer* seg = make_cuda_buffer("cudaview", rank, kWorld, rank % gpus, kSegment, &be);
  symmem_buffer* v[2];
  for (int k = 0; k < 2; ++k) CHECK_OK(symmem_buffer_view(seg, kOff[k], kN * 4, &v[k]));
  void* streams[2];
  for (auto& s : streams) CHECK_OK(symmem_stream_create(be, &s));
  void* out = nullptr;
  CHECK_OK(symmem_local_alloc(be, kN * 4 * kWorld, &out));
  std::vector<float> x(kN), got(kN * kWorld), guard(kN);
  // Guard: block 1 holds a pattern that block 0's in-place work must not touch.
  for (uint64_t i = 0; i < kN; ++i) guard[i] = float(i % 1000) + 0.5f;
  CHECK_OK(symmem_buffer_copy_in(v[1], SYMMEM_RANK_SELF, 0, guard.data(), kN * 4));
  for (int round = 0; round < 6; ++round) {
    void* s = streams[round % 2];  // alternate streams: the segment orders its launches itself
    for (uint64_t i = 0; i < kN; ++i) x[i] = in(rank, i, round);
    CHECK_OK(symmem_buffer_copy_in(v[0], SYMMEM_RANK_SELF, 0, x.data(), kN * 4));
    CHECK_OK(symmem_all_reduce(v[0], SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_SUM, kN, nullptr, s, 20000));
    // Out of place, one-shot and two-shot by turns. Two-shot uses the symmetric buffer as scratch
    // (symmem.h: its contents are unspecified afterwards), so the in-place sum is read back only
    // after a one-shot round.
    const symmem_algo second = round % 2 == 0 ? SYMMEM_ALGO_ONE_SHOT : SYMMEM_ALGO_TWO_SHOT;
    CHECK_OK(symmem_all_reduce(v[0], second, SYMMEM_FLOAT32, SYMMEM_SUM, kN, out,
                               streams[(round + 1) % 2], 20000));
    CHECK_OK(symmem_stream_synchronize(v[0], streams[0]));
    CHECK_OK(symmem_stream_synchronize(v[0], streams[1]));
    CHECK_OK(symmem_buffer_copy_out(v[0], SYMMEM_RANK_SELF, 0, got.data(), kN * 4));
    // In place gave the sum; the second all-reduce summed the sums (kWorld x).
    std::vector<float> twice(kN);
    CHECK_OK(symmem_local_copy_out(be, out, 0, twice.data(), kN * 4));
    for (uint64_t i = 0; i < kN; ++i) {
      double ref = 0;
      for (int r = 0; r < kWorld; ++r) ref += in(r, i, round);
      if (second == SYMMEM_ALGO_ONE_SHOT && std::fabs(got[i] - ref) > 1e-4)
        TEST_FAIL("round %d [%llu] %g vs %g", round, (unsigned long long)i, got[i], ref);
      if (std::fabs(twice[i] - kWorld * ref) > 1e-3) TEST_FAIL("round %d twice [%llu] %g vs %g", round, (unsigned long long)i, twice[i], kWorld * ref);
    }
    CHECK_OK(symmem_barrier(seg, 0, 20000));
  }
  std::vector<float> g(kN);
  CHECK_OK(symmem_buffer_copy_out(v[1], SYMMEM_RANK_SELF, 0, g.data(), kN * 4));
  CHECK(std::memcmp(g.data(), guard.data(), kN * 4) == 0);
  // All-gather out of place from block 1 (each rank's guard shifted by its rank).
  for (uint64_t i = 0; i < kN; ++i) x[i] = guard[i] + float(rank);
  CHECK_OK(symmem_buffer_copy_in(v[1], SYMMEM_RANK_SELF, 0, x.data(), kN * 4));
  CHECK_OK(symmem_all_gather(v[1], SYMMEM_FLOAT32, kN, out, streams[0], 20000));
  CHECK_OK(symmem_stream_synchronize(v[1], streams[0]));
  CHECK_OK(symmem_local_copy_out(be, out, 0, got.data(), kN * 4 * kWorld));
  for (int r = 0; r < kWorld; ++r)
    for (uint64_t i = 0; i < kN; ++i) CHECK(got[r * kN + i] == guard[i] + float(r));
  // Block 1's one-shot pushes through the segment's scratch, which ends at the segment's pad
  // region whatever the view's offset: block 0 keeps its contents (two calls: both slots).
  for (uint64_t i = 0; i < kN; ++i) x[i] = guard[i] - float(rank);
  CHECK_OK(symmem_buffer_copy_in(v[0], SYMMEM_RANK_SELF, 0, x.data(), kN * 4));
  for (int k = 0; k < 2; ++k)
    CHECK_OK(symmem_all_reduce(v[1], SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kN, out,
                               streams[0], 20000));
  CHECK_OK(symmem_stream_synchronize(v[1], streams[0]));
  CHECK_OK(symmem_barrier(seg, 0, 20000));  // the peer's pushes have landed here too
  CHECK_OK(symmem_buffer_copy_out(v[0], SYMMEM_RANK_SELF, 0, g.data(), kN * 4));
  for (uint64_t i = 0; i < kN; ++i)
    if (g[i] != x[i])
      TEST_FAIL("block 0 [%llu] is %g after block 1's one-shots, was %g", (unsigned long long)i,
                g[i], x[i]);
  // A marker recorded after work on a stream passes once the stream is done.
  symmem_stream_marker* m = nullptr;
  CHECK_OK(symmem_all_reduce(v[1], SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_SUM, kN, out, streams[1], 20000));
  CHECK_OK(symmem_stream_marker_record(be, streams[1], &m));
  CHECK_OK(symmem_stream_marker_wait(m, 20000));
  int passed = 0;
  CHECK_OK(symmem_stream_marker_query(m, &passed));
  CHECK(passed == 1);
  CHECK_OK(symmem_stream_marker_free(m));
  CHECK_OK(symmem_stream_synchronize(v[1], streams[1]));
  CHECK_STATUS(symmem_buffer_free(seg), SYMMEM_ERR_STATE);
  CHECK_OK(symmem_barrier(seg, 1, 20000));
  for (auto* view : v) CHECK_OK(symmem_buffer_free(view));
  CHECK_OK(symmem_local_free(be, out));
  for (auto& s : streams) CHECK_OK(symmem_stream_destroy(be, s));
  CHECK_OK(symmem_buffer_free(seg));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

int main() {
  int gpus = require_gpus("test_cuda_view", 1);
  if (gpus < kWorld) {
    const char* o = std::getenv("SYMMEM_ALLOW_OVERLAPPING_DEVICES");
    if (o == nullptr || std::strcmp(o, "1") != 0) {
      std::printf("SKIPPED: test_cuda_view needs 2 GPUs, or SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 on one\n");
      return kSkip;
    }
  }
  RUN_RANKS(kWorld, [gpus](int rank) { return rank_main(rank, gpus); });
  std::printf("test_cuda_view: OK\n");
  return 0;
}
