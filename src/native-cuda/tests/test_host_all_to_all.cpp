// All-to-all-v, all-to-all and broadcast on the host backend, worlds 2 to 4, every dtype, in place
// and out of place: random splits, zeros, everything to one rank, odd sizes, each element checked
// bit for bit (the three are copies: no element is converted). Splits that do not fit fail on every
// rank with the same message, write nothing, and leave the buffer in step (the next call is right).
// Two threads run on two buffers at once throughout. After a missed deadline, every call is exact or
// refused. And one-sided puts with a signal, and gets, on the stream.
#include <cstring>
#include <thread>

#include "a2a_cases.h"
#include "test_util.h"

namespace {

using namespace a2a;

struct Rank {
  int rank, world;
  symmem_buffer* b;
  uint64_t splits_at;
};

// One all-to-all-v round on b, checked: every received element and both rows of out_splits.
void a2av_round(const Rank& r, symmem_dtype dtype, int round, bool in_place) {
  const size_t es = symmem_dtype_size(dtype);
  const uint64_t room = r.splits_at / es;
  char* mine = static_cast<char*>(symmem_buffer_ptr(r.b, r.rank));
  int64_t* splits = reinterpret_cast<int64_t*>(mine + r.splits_at);
  uint64_t at = 0;
  for (int p = 0; p < r.world; ++p) {
    splits[p] = split(r.world, round, r.rank, p, room);
    for (int64_t k = 0; k < splits[p]; ++k) put(mine, at + k, es, element(r.rank, p, k, round));
    at += splits[p];
  }
  std::vector<char> out(room * es + 64, 0x5a);
  std::vector<int64_t> out_splits(2 * r.world, -7);
  CHECK_OK(symmem_all_to_all_v(r.b, dtype, r.splits_at, in_place ? nullptr : out.data(), room,
                               out_splits.data(), nullptr, 10000));
  const char* res = in_place ? mine : out.data();
  int64_t offset = 0;
  for (int q = 0; q < r.world; ++q) {
    const int64_t n = split(r.world, round, q, r.rank, room);
    if (out_splits[q] != n || out_splits[r.world + q] != offset)
      TEST_FAIL("round %d dtype %d %s: from rank %d out_splits says %lld at %lld, expected %lld at %lld", round,
                int(dtype), in_place ? "in place" : "out of place", q, (long long)out_splits[q],
                (long long)out_splits[r.world + q], (long long)n, (long long)offset);
    for (int64_t k = 0; k < n; ++k) {
      const uint32_t want = narrow(element(q, r.rank, k, round), es);
      if (get(res, offset + k, es) != want)
        TEST_FAIL("round %d dtype %d %s: element %lld from rank %d is %#x, expected %#x", round, int(dtype),
                  in_place ? "in place" : "out of place", (long long)k, q, get(res, offset + k, es), want);
    }
    offset += n;
  }
  // Out of place, nothing past the received elements was touched.
  if (!in_place)
    for (uint64_t i = uint64_t(offset) * es; i < out.size(); ++i)
      if (out[i] != 0x5a) TEST_FAIL("round %d: byte %llu past the %lld received elements was written", round,
                                    (unsigned long long)i, (long long)offset);
  CHECK_OK(symmem_barrier(r.b, 0, 10000));  // every rank checked before the inputs change
}

void a2a_round(const Rank& r, symmem_dtype dtype, int round, bool in_place) {
  const size_t es = symmem_dtype_size(dtype);
  const uint64_t count = (r.splits_at / es) / r.world - (round % 3);
  char* mine = static_cast<char*>(symmem_buffer_ptr(r.b, r.rank));
  for (int p = 0; p < r.world; ++p)
    for (uint64_t k = 0; k < count; ++k) put(mine, p * count + k, es, element(r.rank, p, k, round));
  std::vector<char> out(count * es * r.world);
  CHECK_OK(symmem_all_to_all(r.b, dtype, count, in_place ? nullptr : out.data(), nullptr, 10000));
  const char* res = in_place ? mine : out.data();
  for (int q = 0; q < r.world; ++q)
    for (uint64_t k = 0; k < count; ++k)
      if (get(res, q * count + k, es) != narrow(element(q, r.rank, k, round), es))
        TEST_FAIL("all_to_all round %d dtype %d %s: block of rank %d, element %llu wrong", round, int(dtype),
                  in_place ? "in place" : "out of place", q, (unsigned long long)k);
  CHECK_OK(symmem_barrier(r.b, 0, 10000));
}

void broadcast_round(const Rank& r, symmem_dtype dtype, int round, bool in_place) {
  const size_t es = symmem_dtype_size(dtype);
  const uint64_t count = r.splits_at / es - 1 - round;
  const int root = round % r.world;
  char* mine = static_cast<char*>(symmem_buffer_ptr(r.b, r.rank));
  for (uint64_t k = 0; k < count; ++k) put(mine, k, es, element(r.rank, 0, k, round));
  std::vector<char> out(count * es);
  CHECK_OK(symmem_broadcast(r.b, dtype, count, root, in_place ? nullptr : out.data(), nullptr, 10000));
  const char* res = in_place ? mine : out.data();
  for (uint64_t k = 0; k < count; ++k)
    if (get(res, k, es) != narrow(element(root, 0, k, round), es))
      TEST_FAIL("broadcast round %d from root %d dtype %d %s: element %llu wrong", round, root, int(dtype),
                in_place ? "in place" : "out of place", (unsigned long long)k);
  if (!in_place)  // the root's buffer was read, not written
    for (uint64_t k = 0; k < count; ++k) CHECK(get(mine, k, es) == narrow(element(r.rank, 0, k, round), es));
  CHECK_OK(symmem_barrier(r.b, 0, 10000));
}

void rounds(const Rank& r, int first_round) {
  for (symmem_dtype d : kDtypes)
    for (int round = first_round; round < first_round + 10; ++round) {
      a2av_round(r, d, round, round % 2 == 0);
      a2a_round(r, d, round, round % 2 == 1);
      broadcast_round(r, d, round, round % 2 == 0);
    }
}

// Splits that do not fit: every rank fails with the same message, out and out_splits untouched, and
// the next call is right.
void bad_splits(const Rank& r) {
  const size_t es = 4;
  const uint64_t room = r.splits_at / es;
  char* mine = static_cast<char*>(symmem_buffer_ptr(r.b, r.rank));
  int64_t* splits = reinterpret_cast<int64_t*>(mine + r.splits_at);
  std::vector<char> out(room * es, 0x33);
  std::vector<int64_t> out_splits(2 * r.world, -7);
  struct Case {
    const char* what;
    int64_t bad;      // rank 1's split for rank 0
    uint64_t capacity;  // rank world-1's capacity
    const char* message;
  };
  const Case cases[] = {
      {"negative", -3, room, "rank 1's split for rank 0 is -3; a split counts elements and cannot be negative"},
      {"more than the input", int64_t(room) + 1, room, "rank 1's splits need more input than it holds: its part for rank 0"},
      {"more than an output", 0, 1, "more than its output holds (1)"},
  };
  for (const Case& c : cases) {
    for (int p = 0; p < r.world; ++p) splits[p] = 2;
    if (r.rank == 1) splits[0] = c.bad;
    const uint64_t capacity = r.rank == r.world - 1 ? c.capacity : room;
    CHECK_STATUS(symmem_all_to_all_v(r.b, SYMMEM_FLOAT32, r.splits_at, out.data(), capacity, out_splits.data(),
                                     nullptr, 10000),
                 SYMMEM_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_HAS(c.message);
    CHECK_ERROR_HAS("nothing was written");
    for (char x : out)
      if (x != 0x33) TEST_FAIL("%s: out was written after splits that do not fit", c.what);
    for (int64_t x : out_splits)
      if (x != -7) TEST_FAIL("%s: out_splits was written after splits that do not fit", c.what);
  }
  a2av_round(r, SYMMEM_FLOAT32, 4, false);
}

// One-sided: each rank puts a block into the next rank's buffer and signals it on the stream; the next
// rank waits for the signal and finds the block; at the end each gets its previous rank's block back.
void put_get(const Rank& r) {
  const int next = (r.rank + 1) % r.world, prev = (r.rank + r.world - 1) % r.world;
  const uint64_t at = 64, n = 333;
  const char* mine = static_cast<const char*>(symmem_buffer_ptr(r.b, r.rank));
  std::vector<uint32_t> block(n), got(n);
  for (int round = 0; round < 20; ++round) {
    for (uint64_t k = 0; k < n; ++k) block[k] = element(r.rank, next, k, round);
    CHECK_OK(symmem_put_on_stream(r.b, next, at, block.data(), n * 4, nullptr));
    CHECK_OK(symmem_put_signal_on_stream(r.b, next, 1, nullptr, 10000));
    CHECK_OK(symmem_wait_signal_on_stream(r.b, prev, 1, nullptr, 10000));
    std::memcpy(got.data(), mine + at, n * 4);
    for (uint64_t k = 0; k < n; ++k)
      if (got[k] != element(prev, r.rank, k, round))
        TEST_FAIL("put round %d: element %llu from rank %d is %#x", round, (unsigned long long)k, prev, got[k]);
    CHECK_OK(symmem_barrier(r.b, 0, 10000));  // read before the next round's put overwrites it
  }
  CHECK_OK(symmem_get_on_stream(r.b, prev, at, got.data(), n * 4, nullptr));
  const int before_prev = (prev + r.world - 1) % r.world;
  for (uint64_t k = 0; k < n; ++k)
    if (got[k] != element(before_prev, prev, k, 19)) TEST_FAIL("get: element %llu of rank %d wrong", (unsigned long long)k, prev);
  CHECK_OK(symmem_barrier(r.b, 0, 10000));
  CHECK_STATUS(symmem_put_on_stream(r.b, next, symmem_buffer_size(r.b) - 4, block.data(), 8, nullptr),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("exceed the symmetric buffer's");
  CHECK_STATUS(symmem_get_on_stream(r.b, r.world, 0, got.data(), 4, nullptr), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("is out of range");
  CHECK_STATUS(symmem_put_on_stream(r.b, next, 0, nullptr, 4, nullptr), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("src is NULL");
}

void bad_args(const Rank& r) {
  std::vector<int64_t> out_splits(2 * r.world);
  CHECK_STATUS(symmem_all_to_all_v(r.b, SYMMEM_FLOAT32, r.splits_at + 4, nullptr, 0, out_splits.data(), nullptr,
                                   1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("is not a multiple of 8");
  CHECK_STATUS(symmem_all_to_all_v(r.b, SYMMEM_FLOAT32, r.splits_at + 8, nullptr, 0, out_splits.data(), nullptr,
                                   1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("int64 slots) exceed the buffer's");
  CHECK_STATUS(symmem_all_to_all_v(r.b, SYMMEM_FLOAT32, r.splits_at, nullptr, 0, nullptr, nullptr, 1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("out_splits is NULL");
  int64_t* inside = static_cast<int64_t*>(symmem_buffer_ptr(r.b, r.rank));
  CHECK_STATUS(symmem_all_to_all_v(r.b, SYMMEM_FLOAT32, r.splits_at, nullptr, 0, inside, nullptr, 1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("out_splits");
  CHECK_ERROR_HAS("overlaps the symmetric buffer");
  CHECK_STATUS(symmem_broadcast(r.b, SYMMEM_FLOAT32, 4, r.world, nullptr, nullptr, 1000), SYMMEM_ERR_INVALID_ARGUMENT);
  char want[96];
  std::snprintf(want, sizeof want, "root %d is out of range 0..%d", r.world, r.world - 1);
  CHECK_ERROR_HAS(want);
  CHECK_STATUS(symmem_broadcast(r.b, SYMMEM_FLOAT32, 4, -1, nullptr, nullptr, 1000), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("root -1");
  const uint64_t too_many = symmem_buffer_size(r.b) / 4 / r.world + 1;
  CHECK_STATUS(symmem_all_to_all(r.b, SYMMEM_FLOAT32, too_many, nullptr, nullptr, 1000), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("x world");
  CHECK_STATUS(symmem_all_to_all(r.b, SYMMEM_FLOAT32, 4, static_cast<char*>(symmem_buffer_ptr(r.b, r.rank)) + 64,
                                 nullptr, 1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("overlaps the symmetric buffer");
}

int rank_main(int world, int rank) {
  Names names1("hosta2a-1", world), names2("hosta2a-2", world);
  const uint64_t splits_at = (kRoomBytes + 7) / 8 * 8;
  const uint64_t bytes = splits_at + 8 * (world + 1);
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("host", 0, &be));
  symmem_buffer* b1 = nullptr;
  symmem_buffer* b2 = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, bytes, &b1));
  CHECK_OK(symmem_buffer_alloc(be, bytes, &b2));
  exchange_and_import(b1, names1, rank, world);
  exchange_and_import(b2, names2, rank, world);
  const Rank r1{rank, world, b1, splits_at}, r2{rank, world, b2, splits_at};
  bad_args(r1);
  std::thread other([&] { rounds(r2, 100); });
  rounds(r1, 0);
  other.join();
  bad_splits(r1);
  put_get(r1);
  CHECK_OK(symmem_buffer_free(b1));
  CHECK_OK(symmem_buffer_free(b2));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

// Rank 1 comes 1.5 s late to an all-to-all-v whose deadline is 300 ms; then both run 20 more on the
// buffer, a few ms apart: each is exact or refused, and from the first refusal on every later one is
// refused too ("out of step ... free it"), never a wrong result.
int late_rank(int rank) {
  Names names("hosta2a-late", 2);
  const uint64_t splits_at = (kRoomBytes + 7) / 8 * 8;
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_imported_buffer("host", 0, names, rank, 2, splits_at + 8 * 3, &be);
  char* mine = static_cast<char*>(symmem_buffer_ptr(b, rank));
  int64_t* splits = reinterpret_cast<int64_t*>(mine + splits_at);
  std::vector<char> out(splits_at);
  std::vector<int64_t> out_splits(4);
  auto call = [&](int round, int timeout_ms) {
    const uint64_t room = splits_at / 4;
    uint64_t at = 0;
    for (int p = 0; p < 2; ++p) {
      splits[p] = split(2, round, rank, p, room);
      for (int64_t k = 0; k < splits[p]; ++k) put(mine, at + k, 4, element(rank, p, k, round));
      at += splits[p];
    }
    if (symmem_all_to_all_v(b, SYMMEM_FLOAT32, splits_at, out.data(), room, out_splits.data(), nullptr, timeout_ms) !=
        SYMMEM_OK)
      return 0;
    int64_t offset = 0;
    for (int q = 0; q < 2; ++q) {
      const int64_t n = split(2, round, q, rank, room);
      for (int64_t k = 0; k < n; ++k)
        if (get(out.data(), offset + k, 4) != element(q, rank, k, round))
          TEST_FAIL("round %d: element %lld from rank %d is wrong, and the call reported success", round,
                    (long long)k, q);
      offset += n;
    }
    return 1;
  };
  CHECK_OK(symmem_barrier(b, 0, 10000));
  if (rank == 1) usleep(1500000);
  if (call(4, 300) != 0 && rank == 0) TEST_FAIL("rank 0's call did not time out, although rank 1 came 1.5 s late");
  int failed_since = -1;
  for (int round = 5; round < 25; ++round) {
    usleep(rank == 0 ? 1000 : 3000);
    const int ok = call(round, 300);
    if (!ok && failed_since < 0) failed_since = round;
    if (ok && failed_since >= 0) TEST_FAIL("round %d succeeded after round %d had failed on this rank", round, failed_since);
  }
  if (failed_since < 0) TEST_FAIL("every call after the missed deadline succeeded on rank %d", rank);
  CHECK_ERROR_HAS("out of step");
  CHECK_ERROR_HAS("free it");
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

}  // namespace

int main() {
  for (int world = 2; world <= 4; ++world)
    if (!run_ranks(world, 120, [&](int rank) { return rank_main(world, rank); })) return 1;
  if (!run_ranks(2, 60, late_rank)) return 1;
  std::printf("test_host_all_to_all: all-to-all-v, all-to-all and broadcast, worlds 2-4, 3 dtypes: OK\n");
  return 0;
}
