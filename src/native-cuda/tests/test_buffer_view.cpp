// Views (pool blocks) on the host backend: collectives on views equal those on a whole buffer and
// touch only their window; copies and memset are shifted; the segment cannot be freed under its
// views; bad offsets, nested views and exports are refused; a second thread on the shared pad is
// refused; host stream markers are passed at once.
#include <chrono>
#include <cmath>
#include <thread>

#include "test_util.h"

static const int kWorld = 3;
static const uint64_t kN = 1000;                  // floats per block
static const uint64_t kOffsets[3] = {0, 4096, 12288};
static const uint64_t kSegment = 4 * 4096 + 8192;  // room for the three blocks and a guard

static float in(int rank, uint64_t i, int block) {
  return float((i * 31 + rank * 977 + block * 7) % 1009) / 250.0f - 2.0f;
}

static int rank_main(int rank) {
  Names names("bufview", kWorld);
  symmem_backend* be = nullptr;
  symmem_buffer* seg = make_imported_buffer("host", 0, names, rank, kWorld, kSegment, &be);
  char* base = static_cast<char*>(symmem_buffer_ptr(seg, rank));
  std::memset(base, 0x5a, kSegment);  // guard bytes everywhere outside the blocks' elements
  symmem_buffer* v[3];
  for (int k = 0; k < 3; ++k) {
    CHECK_OK(symmem_buffer_view(seg, kOffsets[k], kN * 4, &v[k]));
    CHECK(symmem_buffer_size(v[k]) == kN * 4);
    CHECK(symmem_buffer_rank(v[k]) == rank && symmem_buffer_world(v[k]) == kWorld);
    for (int r = 0; r < kWorld; ++r)
      CHECK(symmem_buffer_ptr(v[k], r) ==
            static_cast<char*>(symmem_buffer_ptr(seg, r)) + kOffsets[k]);
    CHECK(symmem_buffer_signal_pad(v[k], rank) == symmem_buffer_signal_pad(seg, rank));
  }
  CHECK(symmem_buffer_live_views(seg) == 3);
  // Inputs through copy_in of each view (shifted by the view's offset).
  for (int k = 0; k < 3; ++k) {
    std::vector<float> x(kN);
    for (uint64_t i = 0; i < kN; ++i) x[i] = in(rank, i, k);
    CHECK_OK(symmem_buffer_copy_in(v[k], SYMMEM_RANK_SELF, 0, x.data(), kN * 4));
    CHECK(std::memcmp(base + kOffsets[k], x.data(), kN * 4) == 0);
  }
  // In-place sum on block 1, out-of-place max on block 2, out-of-place one-shot sum on block 0.
  std::vector<float> out(kN);
  CHECK_OK(symmem_all_reduce(v[1], SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_SUM, kN, nullptr,
                             nullptr, 10000));
  CHECK_OK(symmem_all_reduce(v[2], SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_MAX, kN, out.data(),
                             nullptr, 10000));
  std::vector<float> out0(kN);
  CHECK_OK(symmem_all_reduce(v[0], SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kN, out0.data(),
                             nullptr, 10000));
  std::vector<float> got(kN);
  CHECK_OK(symmem_buffer_copy_out(v[1], SYMMEM_RANK_SELF, 0, got.data(), kN * 4));
  for (uint64_t i = 0; i < kN; ++i) {
    double s0 = 0, s1 = 0, m2 = -1e30;
    for (int r = 0; r < kWorld; ++r) {
      s0 += in(r, i, 0);
      s1 += in(r, i, 1);
      m2 = std::max<double>(m2, in(r, i, 2));
    }
    if (std::fabs(got[i] - s1) > 1e-5) TEST_FAIL("block 1 [%llu] %g vs %g", (unsigned long long)i, got[i], s1);
    if (std::fabs(out[i] - m2) > 1e-6) TEST_FAIL("block 2 [%llu] %g vs %g", (unsigned long long)i, out[i], m2);
    if (std::fabs(out0[i] - s0) > 1e-5) TEST_FAIL("block 0 [%llu] %g vs %g", (unsigned long long)i, out0[i], s0);
  }
  // Block 0's and 2's inputs are untouched by block 1's in-place result; the gaps still hold guards.
  for (uint64_t i = 0; i < kN; ++i) CHECK(reinterpret_cast<float*>(base + kOffsets[2])[i] == in(rank, i, 2));
  for (uint64_t b = kN * 4; b < 4096; ++b) CHECK(base[b] == 0x5a);
  for (uint64_t b = kOffsets[1] + kN * 4; b < kOffsets[2]; ++b) CHECK(base[b] == 0x5a);
  for (uint64_t b = kOffsets[2] + kN * 4; b < kSegment; ++b) CHECK(base[b] == 0x5a);
  CHECK_OK(symmem_barrier(v[0], 0, 10000));
  // all_gather in place on block 2 (world * 100 floats fit) reads each peer's block 2, not block 0.
  float* b2 = reinterpret_cast<float*>(base + kOffsets[2]);
  for (int i = 0; i < 100; ++i) b2[rank * 100 + i] = float(rank * 1000 + i);
  CHECK_OK(symmem_all_gather(v[2], SYMMEM_FLOAT32, 100, nullptr, nullptr, 10000));
  for (int r = 0; r < kWorld; ++r)
    for (int i = 0; i < 100; ++i) CHECK(b2[r * 100 + i] == float(r * 1000 + i));
  // memset32 and write_value32 into the next rank's block 1, shifted by the view's offset.
  const int peer = (rank + 1) % kWorld, from = (rank + kWorld - 1) % kWorld;
  CHECK_OK(symmem_memset32(v[1], peer, 8, 0xabc00u + rank, 2, nullptr));
  CHECK_OK(symmem_barrier(v[1], 1, 10000));
  const uint32_t* w1 = reinterpret_cast<const uint32_t*>(base + kOffsets[1]);
  CHECK(w1[2] == 0xabc00u + from && w1[3] == 0xabc00u + from);
  CHECK_OK(symmem_barrier(v[1], 1, 10000));
  // Refusals.
  CHECK_STATUS(symmem_buffer_free(seg), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("3 live views");
  symmem_buffer* bad = nullptr;
  CHECK_STATUS(symmem_buffer_view(seg, 100, 64, &bad), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("offset 100 is not a multiple of 64");
  CHECK_STATUS(symmem_buffer_view(seg, 4096, kSegment, &bad), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("exceed the segment's");
  CHECK_STATUS(symmem_buffer_view(v[0], 0, 64, &bad), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("itself a view");
  int fd = -1;
  CHECK_STATUS(symmem_buffer_export_fd(v[0], &fd), SYMMEM_ERR_STATE);
  CHECK_STATUS(symmem_all_reduce(v[0], SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_SUM, kN + 1,
                                 out.data(), nullptr, 1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("symmetric buffer has 4000");
  // A second thread on the shared pad is refused while the first waits inside it.
  if (rank == 0) {
    symmem_status waited = SYMMEM_ERR_SYSTEM;
    std::thread t([&] { waited = symmem_wait_signal(v[0], 1, 5, 10000); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK_STATUS(symmem_barrier(v[1], 2, 1000), SYMMEM_ERR_STATE);
    CHECK_ERROR_HAS("another thread is using a block of the same segment");
    t.join();
    CHECK(waited == SYMMEM_OK);
  } else if (rank == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    CHECK_OK(symmem_put_signal(seg, 0, 5, 10000));
  }
  CHECK_OK(symmem_barrier(seg, 3, 10000));
  // Host markers: streams are synchronous, so a marker is passed at once.
  symmem_stream_marker* m = nullptr;
  CHECK_OK(symmem_stream_marker_record(be, nullptr, &m));
  int passed = 0;
  CHECK_OK(symmem_stream_marker_query(m, &passed));
  CHECK(passed == 1);
  CHECK_OK(symmem_stream_marker_wait(m, 100));
  CHECK_OK(symmem_stream_marker_free(m));
  for (int k = 0; k < 3; ++k) CHECK_OK(symmem_buffer_free(v[k]));
  CHECK(symmem_buffer_live_views(seg) == 0);
  CHECK_OK(symmem_buffer_free(seg));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

int main() {
  RUN_RANKS(kWorld, rank_main);
  std::printf("test_buffer_view: OK\n");
  return 0;
}
