// Host backend end to end with 4 forked ranks: alloc, fd exchange, import, direct peer access,
// barrier, signal ping-pong, one-shot all-reduce.
#include <cmath>
#include <cstdint>

#include "test_util.h"

static const int kWorld = 4;
static const int kTimeout = 10000;
static const uint64_t kMaxCount = 1000003;
static const uint64_t kBytes = kMaxCount * 4 + 12;  // deliberately not a page multiple

// Deterministic inputs: every rank can recompute every other rank's data for the reference.
static float input(uint64_t count, int rank, uint64_t i) {
  uint64_t x = (count * 1315423911u) ^ (uint64_t(rank) << 40) ^ (i * 0x9E3779B97F4A7C15ull);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return float(int64_t(x % 2000001) - 1000000) / 1000000.0f;  // [-1, 1]
}

static void ping_pong(symmem_buffer* b, int rank) {
  const int peer = rank ^ 1;  // pairs (0,1) and (2,3)
  volatile uint32_t* mine = static_cast<uint32_t*>(symmem_buffer_ptr(b, rank));
  volatile uint32_t* theirs = static_cast<uint32_t*>(symmem_buffer_ptr(b, peer));
  const bool starts = rank % 2 == 0;
  for (uint32_t i = 0; i < 200; ++i) {
    if (starts) {
      mine[0] = i;
      CHECK_OK(symmem_put_signal(b, peer, 1, kTimeout));
      CHECK_OK(symmem_wait_signal(b, peer, 1, kTimeout));
      if (theirs[0] != i + 1000) TEST_FAIL("round %u: peer wrote %u", i, theirs[0]);
    } else {
      CHECK_OK(symmem_wait_signal(b, peer, 1, kTimeout));
      if (theirs[0] != i) TEST_FAIL("round %u: peer wrote %u", i, theirs[0]);
      mine[0] = i + 1000;
      CHECK_OK(symmem_put_signal(b, peer, 1, kTimeout));
    }
  }
  // Two signals in a row: the second put waits until the first is consumed, none is lost.
  if (starts) {
    CHECK_OK(symmem_put_signal(b, peer, 2, kTimeout));
    CHECK_OK(symmem_put_signal(b, peer, 2, kTimeout));
  } else {
    usleep(20000);
    CHECK_OK(symmem_wait_signal(b, peer, 2, kTimeout));
    CHECK_OK(symmem_wait_signal(b, peer, 2, kTimeout));
  }
}

static void all_reduce(symmem_buffer* b, int rank, uint64_t count) {
  float* mine = static_cast<float*>(symmem_buffer_ptr(b, rank));
  for (uint64_t i = 0; i < count; ++i) mine[i] = input(count, rank, i);
  std::vector<float> out(count + 1, -7.0f);
  timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, count, out.data(), nullptr, kTimeout));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  CHECK(out[count] == -7.0f);  // nothing written past count
  for (uint64_t i = 0; i < count; ++i) {
    double ref = 0, mag = 0;
    for (int r = 0; r < kWorld; ++r) {
      ref += input(count, r, i);
      mag += std::fabs(input(count, r, i));
    }
    if (std::fabs(out[i] - ref) > 4 * kWorld * 6e-8 * mag + 1e-30)
      TEST_FAIL("count %llu: out[%llu] = %.9g, reference %.9g", (unsigned long long)count,
                (unsigned long long)i, out[i], ref);
  }
  // Same bits everywhere: publish the result in the own buffer and compare with every peer's.
  std::memcpy(mine, out.data(), count * 4);
  CHECK_OK(symmem_barrier(b, 3, kTimeout));
  for (int r = 0; r < kWorld; ++r)
    if (std::memcmp(symmem_buffer_ptr(b, r), mine, count * 4) != 0)
      TEST_FAIL("count %llu: rank %d's result differs bitwise", (unsigned long long)count, r);
  CHECK_OK(symmem_barrier(b, 3, kTimeout));
  if (rank == 0 && count == kMaxCount)
    std::printf("one-shot all_reduce of %llu floats on %d ranks: %.2f ms\n",
                (unsigned long long)count, kWorld,
                (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
}

static int rank_main(int rank) {
  Names names("hostbuf", kWorld);
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("host", 0, &be));
  symmem_buffer* b = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, kBytes, &b));
  CHECK(symmem_buffer_size(b) == kBytes);
  CHECK(symmem_buffer_rank(b) == SYMMEM_RANK_SELF);
  CHECK(symmem_buffer_world(b) == 0);

  // Before import only the own allocation is addressable.
  uint32_t* self = static_cast<uint32_t*>(symmem_buffer_ptr(b, SYMMEM_RANK_SELF));
  CHECK(self != nullptr);
  CHECK(symmem_buffer_ptr(b, 1) == nullptr);
  CHECK_ERROR_HAS("before import");
  const uint64_t words = kBytes / 4;
  for (uint64_t i = 0; i < words; ++i) self[i] = uint32_t(rank * 100000007u + i);
  const uint32_t* pad = static_cast<uint32_t*>(symmem_buffer_signal_pad(b, SYMMEM_RANK_SELF));
  for (int i = 0; i < SYMMEM_SIGNAL_CHANNELS * SYMMEM_MAX_WORLD; ++i) CHECK(pad[i] == 0);
  CHECK_STATUS(symmem_barrier(b, 0, 100), SYMMEM_ERR_STATE);

  // Exchange and import.
  exchange_and_import(b, names, rank, kWorld, kTimeout);  // closes the received fds; mappings stay
  CHECK(symmem_buffer_rank(b) == rank && symmem_buffer_world(b) == kWorld);
  CHECK(symmem_buffer_ptr(b, rank) == self);
  CHECK(symmem_buffer_ptr(b, kWorld) == nullptr);
  int own_fd = -1, again[kWorld];  // a second import is refused whatever the fds
  CHECK_OK(symmem_buffer_export_fd(b, &own_fd));
  for (int r = 0; r < kWorld; ++r) again[r] = own_fd;
  CHECK_STATUS(symmem_buffer_import(b, rank, kWorld, again), SYMMEM_ERR_STATE);

  // Every rank reads every peer's data directly.
  CHECK_OK(symmem_barrier(b, 0, kTimeout));
  for (int r = 0; r < kWorld; ++r) {
    const uint32_t* p = static_cast<uint32_t*>(symmem_buffer_ptr(b, r));
    CHECK(p != nullptr);
    for (uint64_t i = 0; i < words; i += 997)
      if (p[i] != uint32_t(r * 100000007u + i)) TEST_FAIL("rank %d's word %llu is %u", r, (unsigned long long)i, p[i]);
    CHECK(p[words - 1] == uint32_t(r * 100000007u + words - 1));
  }
  CHECK_OK(symmem_barrier(b, 0, kTimeout));  // nobody overwrites while others read

  ping_pong(b, rank);
  // Every signal on the ping-pong channels was consumed. (Other channels may already hold signals
  // from a faster peer that went on to the next collective.)
  for (int i = 1 * SYMMEM_MAX_WORLD; i < 3 * SYMMEM_MAX_WORLD; ++i)
    if (pad[i] != 0) TEST_FAIL("signal slot %d left at %u", i, pad[i]);
  CHECK_OK(symmem_barrier(b, 0, kTimeout));

  for (uint64_t count : {uint64_t(1), uint64_t(7), uint64_t(1000), kMaxCount}) all_reduce(b, rank, count);

  // Misuse is refused locally, before any barrier.
  std::vector<float> out(16);
  CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, 16, self, nullptr, kTimeout),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("overlaps the symmetric buffer");
  CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, 16,
                                 symmem_buffer_ptr(b, (rank + 1) % kWorld), nullptr, kTimeout),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, kBytes / 4 + 1, out.data(),
                                 nullptr, kTimeout),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("count");

  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

int main() {
  RUN_RANKS(kWorld, rank_main);
  std::printf("test_host_buffer: 4 ranks, import, barrier, ping-pong, all-reduce: OK\n");
  return 0;
}
