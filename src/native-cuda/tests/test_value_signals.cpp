// Value signals on the host backend, worlds 2 and 3: a ring of producers, each putting 200 chunks into
// the next rank's buffer and adding 1 to its count there after each, with a ring of 4 slots whose
// credits come back as values set by the consumer; every element checked. Two threads at once, each on
// a buffer of its own. A wait for a value that equals one set; a wait that passes its deadline names the
// peer, the value waited for and the value seen, also while the value keeps moving; an abort ends a
// wait at once; bad arguments are refused naming the argument.
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

constexpr uint64_t kChunk = 257;  // uint32 words per chunk
constexpr int kSlots = 4;
constexpr int kChunks = 200;
constexpr int kCountChannel = 3, kCreditChannel = 4;

uint32_t word(int from, int chunk, uint64_t k, int salt) {
  return uint32_t(from) << 28 ^ uint32_t(chunk) << 12 ^ uint32_t(k) ^ uint32_t(salt) << 24;
}

// Rank r puts chunk c into slot c % kSlots of rank next, once rank next has given back the credit for
// the chunk that was there (its value on r for the credit channel reaches c - kSlots + 1), then adds 1
// to its count on next. Two chunks behind its own puts, it reads the chunks of rank prev in order, each
// once its count says it is there, and sets its credit on prev to the chunks read.
void ring(symmem_buffer* b, int rank, int world, int salt) {
  const int next = (rank + 1) % world, prev = (rank + world - 1) % world;
  const uint32_t* mine = static_cast<const uint32_t*>(symmem_buffer_ptr(b, rank));
  std::vector<uint32_t> chunk(kChunk);
  int read = 0;
  auto read_one = [&] {
    CHECK_OK(symmem_wait_signal_value_on_stream(b, prev, kCountChannel, SYMMEM_CMP_GE, uint64_t(read + 1), nullptr,
                                                10000));
    const uint32_t* slot = mine + (read % kSlots) * kChunk;
    for (uint64_t k = 0; k < kChunk; ++k)
      if (slot[k] != word(prev, read, k, salt))
        TEST_FAIL("chunk %d from rank %d, word %llu: %#x, expected %#x", read, prev, (unsigned long long)k, slot[k],
                  word(prev, read, k, salt));
    ++read;
    CHECK_OK(symmem_signal_value(b, prev, kCreditChannel, uint64_t(read), SYMMEM_SIGNAL_SET));
  };
  for (int c = 0; c < kChunks; ++c) {
    if (c >= kSlots)
      CHECK_OK(symmem_wait_signal_value(b, next, kCreditChannel, SYMMEM_CMP_GE, uint64_t(c - kSlots + 1), 10000));
    for (uint64_t k = 0; k < kChunk; ++k) chunk[k] = word(rank, c, k, salt);
    CHECK_OK(symmem_put_on_stream(b, next, (c % kSlots) * kChunk * 4, chunk.data(), kChunk * 4, nullptr));
    CHECK_OK(symmem_signal_value_on_stream(b, next, kCountChannel, 1, SYMMEM_SIGNAL_ADD, nullptr));
    if (c >= 2) read_one();
  }
  while (read < kChunks) read_one();
}

void equal_and_timeout(symmem_buffer* b, int rank) {
  if (rank == 0) CHECK_OK(symmem_signal_value(b, 1, 0, 42, SYMMEM_SIGNAL_SET));
  if (rank == 1) {
    CHECK_OK(symmem_wait_signal_value(b, 0, 0, SYMMEM_CMP_EQ, 42, 10000));
    CHECK_OK(symmem_wait_signal_value(b, 0, 0, SYMMEM_CMP_EQ, 42, 10000));  // a wait leaves the value
    CHECK_STATUS(symmem_wait_signal_value(b, 0, 0, SYMMEM_CMP_GE, 1000, 200), SYMMEM_ERR_TIMEOUT);
    CHECK_ERROR_HAS("wait_signal_value(peer 0, channel 0, >= 1000): timed out after 200 ms; rank 0's value is 42");
    CHECK_STATUS(symmem_wait_signal_value(b, 0, 5, SYMMEM_CMP_EQ, 1, 200), SYMMEM_ERR_TIMEOUT);
    CHECK_ERROR_HAS("(peer 0, channel 5, == 1)");
    CHECK_ERROR_HAS("rank 0's value is 0");
  }
  CHECK_OK(symmem_barrier(b, 0, 10000));
}

// A value that keeps changing without meeting the wait (rank 0 adds 1 in a tight loop for 3 s; rank 1
// waits for 2^62 or more) still ends at the wait's deadline, not when the changes stop.
void moving_value_times_out(symmem_buffer* b, int rank) {
  CHECK_OK(symmem_barrier(b, 0, 10000));
  if (rank == 0) {
    const auto t0 = std::chrono::steady_clock::now();
    while (seconds_since(t0) < 3) CHECK_OK(symmem_signal_value(b, 1, 6, 1, SYMMEM_SIGNAL_ADD));
  } else if (rank == 1) {
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_STATUS(symmem_wait_signal_value(b, 0, 6, SYMMEM_CMP_GE, uint64_t{1} << 62, 300), SYMMEM_ERR_TIMEOUT);
    if (seconds_since(t0) > 2) TEST_FAIL("a wait of 300 ms on a moving value took %.1f s", seconds_since(t0));
    CHECK_ERROR_HAS("wait_signal_value(peer 0, channel 6, >= 4611686018427387904): timed out after 300 ms");
  }
  CHECK_OK(symmem_barrier(b, 0, 10000));
}

void aborted_wait(symmem_buffer* b, int rank) {
  const int peer = rank == 0 ? 1 : 0;
  std::thread aborter([] {
    usleep(100000);
    symmem_abort("the test aborts");
  });
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_STATUS(symmem_wait_signal_value(b, peer, 7, SYMMEM_CMP_GE, 1, 20000), SYMMEM_ERR_ABORTED);
  aborter.join();
  if (seconds_since(t0) > 5) TEST_FAIL("the aborted wait took %.1f s", seconds_since(t0));
  CHECK_ERROR_HAS("wait_signal_value(peer");
  CHECK_ERROR_HAS("the test aborts");
  symmem_abort_reset();
}

void bad_args(symmem_buffer* b, int rank, int world) {
  const int peer = rank == 0 ? 1 : 0;
  CHECK_STATUS(symmem_signal_value(b, peer, SYMMEM_VALUE_CHANNELS, 1, SYMMEM_SIGNAL_ADD), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("channel 16 is out of range 0..15");
  CHECK_STATUS(symmem_signal_value(b, rank, 0, 1, SYMMEM_SIGNAL_ADD), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("is this rank");
  CHECK_STATUS(symmem_signal_value(b, world, 0, 1, SYMMEM_SIGNAL_ADD), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("is out of range");
  CHECK_STATUS(symmem_signal_value(b, peer, 0, 1, symmem_signal_op(7)), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("op 7 is unknown");
  CHECK_STATUS(symmem_wait_signal_value(b, peer, 0, symmem_signal_cmp(9), 1, 100), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("cmp 9 is unknown");
  CHECK_STATUS(symmem_wait_signal_value(b, peer, -1, SYMMEM_CMP_GE, 1, 100), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("channel -1");
  CHECK_STATUS(symmem_wait_signal_value_on_stream(b, peer, 0, SYMMEM_CMP_GE, 1, nullptr, 0), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("timeout_ms 0");
  CHECK_STATUS(symmem_signal_value(nullptr, peer, 0, 1, SYMMEM_SIGNAL_ADD), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("buffer is NULL");
}

int rank_main(int world, int rank) {
  Names names1("hostval-1", world), names2("hostval-2", world);
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("host", 0, &be));
  symmem_buffer* b1 = nullptr;
  symmem_buffer* b2 = nullptr;
  const uint64_t bytes = kSlots * kChunk * 4;
  CHECK_OK(symmem_buffer_alloc(be, bytes, &b1));
  CHECK_OK(symmem_buffer_alloc(be, bytes, &b2));
  exchange_and_import(b1, names1, rank, world);
  exchange_and_import(b2, names2, rank, world);
  bad_args(b1, rank, world);
  std::thread other([&] { ring(b2, rank, world, 2); });  // a failure there exits the rank, as here
  ring(b1, rank, world, 1);
  other.join();
  CHECK_OK(symmem_barrier(b1, 0, 10000));
  equal_and_timeout(b1, rank);
  moving_value_times_out(b1, rank);
  aborted_wait(b2, rank);
  CHECK_OK(symmem_buffer_free(b1));
  CHECK_OK(symmem_buffer_free(b2));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

}  // namespace

int main() {
  for (int world = 2; world <= 3; ++world)
    if (!run_ranks(world, 60, [&](int rank) { return rank_main(world, rank); })) return 1;
  std::printf("test_value_signals: a ring of %d chunks through %d slots at worlds 2 and 3, two threads, "
              "equal, timeout, abort, bad arguments: OK\n", kChunks, kSlots);
  return 0;
}
