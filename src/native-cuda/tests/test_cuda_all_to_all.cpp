// All-to-all-v, all-to-all and broadcast on GPUs (cuda backend), every dtype, in place and out of
// place, each element checked bit for bit against what every rank can compute (a2a_cases.h). The
// splits reach the device with the stream (cudaMemcpyAsync, no synchronisation before the call), as an
// earlier kernel's would, and a captured all-to-all-v is replayed with new splits and data each time.
// Splits that do not fit fail on every rank at the synchronisation, write nothing, and leave the
// buffer in step: the next call is right. Then one-sided puts with a signal, and gets, on the stream.
#include <cstring>
#include <string>
#include <vector>

#include "a2a_cases.h"
#include "cuda_test_util.h"

using namespace a2a;

namespace {

struct Rank {
  int rank, world;
  symmem_buffer* b;
  symmem_backend* be;
  uint64_t splits_at;
  cudaStream_t s;
  char* mine;        // own data (device)
  char* out;         // local device memory of splits_at bytes
  int64_t* splits;   // local device memory of 2 * world int64
};

// Rank r's input and splits of one all-to-all-v round, onto the device with the stream.
void stage_a2av(const Rank& r, symmem_dtype dtype, int round) {
  const size_t es = symmem_dtype_size(dtype);
  const uint64_t room = r.splits_at / es;
  static thread_local std::vector<char> input;
  static thread_local std::vector<int64_t> row;
  input.assign(r.splits_at, 0);
  row.assign(r.world + 1, 0);
  uint64_t at = 0;
  for (int p = 0; p < r.world; ++p) {
    row[p] = split(r.world, round, r.rank, p, room);
    for (int64_t k = 0; k < row[p]; ++k) put(input.data(), at + k, es, element(r.rank, p, k, round));
    at += row[p];
  }
  CUDA_OK(cudaMemcpyAsync(r.mine, input.data(), r.splits_at, cudaMemcpyHostToDevice, r.s));
  CUDA_OK(cudaMemcpyAsync(r.mine + r.splits_at, row.data(), 8 * (r.world + 1), cudaMemcpyHostToDevice, r.s));
}

void check_a2av(const Rank& r, symmem_dtype dtype, int round, bool in_place, const char* how) {
  const size_t es = symmem_dtype_size(dtype);
  const uint64_t room = r.splits_at / es;
  std::vector<char> res(r.splits_at);
  std::vector<int64_t> got(2 * r.world);
  CUDA_OK(cudaMemcpy(res.data(), in_place ? r.mine : r.out, r.splits_at, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(got.data(), r.splits, 16 * r.world, cudaMemcpyDeviceToHost));
  int64_t offset = 0;
  for (int q = 0; q < r.world; ++q) {
    const int64_t n = split(r.world, round, q, r.rank, room);
    if (got[q] != n || got[r.world + q] != offset)
      TEST_FAIL("%s round %d dtype %d: from rank %d out_splits says %lld at %lld, expected %lld at %lld", how, round,
                int(dtype), q, (long long)got[q], (long long)got[r.world + q], (long long)n, (long long)offset);
    for (int64_t k = 0; k < n; ++k)
      if (get(res.data(), offset + k, es) != narrow(element(q, r.rank, k, round), es))
        TEST_FAIL("%s round %d dtype %d: element %lld from rank %d is %#x, expected %#x", how, round, int(dtype),
                  (long long)k, q, get(res.data(), offset + k, es), narrow(element(q, r.rank, k, round), es));
    offset += n;
  }
  CHECK_OK(symmem_barrier(r.b, 0, 20000));  // every rank checked before the inputs change
}

void a2av_round(const Rank& r, symmem_dtype dtype, int round, bool in_place) {
  stage_a2av(r, dtype, round);
  CHECK_OK(symmem_all_to_all_v(r.b, dtype, r.splits_at, in_place ? nullptr : r.out,
                               r.splits_at / symmem_dtype_size(dtype), r.splits, r.s, 20000));
  CHECK_OK(symmem_stream_synchronize(r.b, r.s));
  check_a2av(r, dtype, round, in_place, in_place ? "in place" : "out of place");
}

void a2a_round(const Rank& r, symmem_dtype dtype, int round, bool in_place) {
  const size_t es = symmem_dtype_size(dtype);
  const uint64_t count = (r.splits_at / es) / r.world - (round % 3);
  std::vector<char> host(count * es * r.world);
  for (int p = 0; p < r.world; ++p)
    for (uint64_t k = 0; k < count; ++k) put(host.data(), p * count + k, es, element(r.rank, p, k, round));
  CUDA_OK(cudaMemcpyAsync(r.mine, host.data(), host.size(), cudaMemcpyHostToDevice, r.s));
  CHECK_OK(symmem_all_to_all(r.b, dtype, count, in_place ? nullptr : r.out, r.s, 20000));
  CHECK_OK(symmem_stream_synchronize(r.b, r.s));
  CUDA_OK(cudaMemcpy(host.data(), in_place ? r.mine : r.out, host.size(), cudaMemcpyDeviceToHost));
  for (int q = 0; q < r.world; ++q)
    for (uint64_t k = 0; k < count; ++k)
      if (get(host.data(), q * count + k, es) != narrow(element(q, r.rank, k, round), es))
        TEST_FAIL("all_to_all round %d dtype %d %s: block of rank %d, element %llu wrong", round, int(dtype),
                  in_place ? "in place" : "out of place", q, (unsigned long long)k);
  CHECK_OK(symmem_barrier(r.b, 0, 20000));
}

void broadcast_round(const Rank& r, symmem_dtype dtype, int round, bool in_place) {
  const size_t es = symmem_dtype_size(dtype);
  const uint64_t count = r.splits_at / es - 1 - round;
  const int root = round % r.world;
  std::vector<char> host(count * es);
  for (uint64_t k = 0; k < count; ++k) put(host.data(), k, es, element(r.rank, 0, k, round));
  CUDA_OK(cudaMemcpyAsync(r.mine, host.data(), host.size(), cudaMemcpyHostToDevice, r.s));
  CHECK_OK(symmem_broadcast(r.b, dtype, count, root, in_place ? nullptr : r.out, r.s, 20000));
  CHECK_OK(symmem_stream_synchronize(r.b, r.s));
  CUDA_OK(cudaMemcpy(host.data(), in_place ? r.mine : r.out, host.size(), cudaMemcpyDeviceToHost));
  for (uint64_t k = 0; k < count; ++k)
    if (get(host.data(), k, es) != narrow(element(root, 0, k, round), es))
      TEST_FAIL("broadcast round %d from root %d dtype %d %s: element %llu wrong", round, root, int(dtype),
                in_place ? "in place" : "out of place", (unsigned long long)k);
  CHECK_OK(symmem_barrier(r.b, 0, 20000));
}

// One capture, replayed with new data and new splits: the splits are read when the kernel runs.
void graph_rounds(const Rank& r) {
  symmem_graph* g = nullptr;
  CHECK_OK(symmem_graph_capture_begin(r.be, r.s));
  CHECK_OK(symmem_all_to_all_v(r.b, SYMMEM_BFLOAT16, r.splits_at, r.out, r.splits_at / 2, r.splits, r.s, 20000));
  CHECK_OK(symmem_graph_capture_end(r.be, r.s, &g));
  for (int round = 1; round <= 9; ++round) {
    stage_a2av(r, SYMMEM_BFLOAT16, 300 + round);
    CHECK_OK(symmem_graph_replay(g, r.s));
    CHECK_OK(symmem_stream_synchronize(r.b, r.s));
    check_a2av(r, SYMMEM_BFLOAT16, 300 + round, false, "graph replay");
  }
  CHECK_OK(symmem_graph_free(g));
}

void bad_splits(const Rank& r) {
  const uint64_t room = r.splits_at / 4;
  std::vector<int64_t> row(r.world + 1, 2);
  if (r.rank == 1) row[0] = -3;
  copy_to_device(r.mine + r.splits_at, row.data(), 8 * (r.world + 1));
  CUDA_OK(cudaMemset(r.out, 0x33, r.splits_at));
  CUDA_OK(cudaMemset(r.splits, 0x44, 16 * r.world));
  CUDA_OK(cudaDeviceSynchronize());  // the fills are done before the call could write over them
  CHECK_OK(symmem_all_to_all_v(r.b, SYMMEM_FLOAT32, r.splits_at, r.out, room, r.splits, r.s, 20000));
  CHECK_STATUS(symmem_stream_synchronize(r.b, r.s), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("rank 1's split for rank 0 is -3; a split counts elements and cannot be negative");
  CHECK_ERROR_HAS("nothing was written");
  std::vector<unsigned char> out(r.splits_at), splits(16 * r.world);
  CUDA_OK(cudaMemcpy(out.data(), r.out, out.size(), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(splits.data(), r.splits, splits.size(), cudaMemcpyDeviceToHost));
  for (unsigned char x : out)
    if (x != 0x33) TEST_FAIL("out was written after splits that do not fit");
  for (unsigned char x : splits)
    if (x != 0x44) TEST_FAIL("out_splits was written after splits that do not fit");
  // More than rank 0 holds, in place: the same on every rank, and its data stay.
  for (int p = 0; p < r.world; ++p) row[p] = p == 0 ? int64_t(room / r.world + 1) : 0;
  copy_to_device(r.mine + r.splits_at, row.data(), 8 * (r.world + 1));
  CHECK_OK(symmem_all_to_all_v(r.b, SYMMEM_FLOAT32, r.splits_at, nullptr, 0, r.splits, r.s, 20000));
  CHECK_STATUS(symmem_stream_synchronize(r.b, r.s), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("rank 0 would receive");
  CHECK_OK(symmem_barrier(r.b, 0, 20000));
  a2av_round(r, SYMMEM_FLOAT32, 4, false);  // in step: the next call is right
}

// One-sided on the stream: each rank puts a block from device memory into the next rank's buffer and
// signals it; the next rank waits for the signal on its stream and finds the block; at the end each gets
// its previous rank's block back into device memory.
void put_get(const Rank& r) {
  const int next = (r.rank + 1) % r.world, prev = (r.rank + r.world - 1) % r.world;
  const uint64_t at = 64, n = 333;
  std::vector<uint32_t> block(n), got(n);
  for (int round = 0; round < 20; ++round) {
    for (uint64_t k = 0; k < n; ++k) block[k] = element(r.rank, next, k, round);
    CUDA_OK(cudaMemcpyAsync(r.out, block.data(), n * 4, cudaMemcpyHostToDevice, r.s));
    CHECK_OK(symmem_put_on_stream(r.b, next, at, r.out, n * 4, r.s));
    CHECK_OK(symmem_put_signal_on_stream(r.b, next, 1, r.s, 20000));
    CHECK_OK(symmem_wait_signal_on_stream(r.b, prev, 1, r.s, 20000));
    CHECK_OK(symmem_stream_synchronize(r.b, r.s));
    CUDA_OK(cudaMemcpy(got.data(), r.mine + at, n * 4, cudaMemcpyDeviceToHost));
    for (uint64_t k = 0; k < n; ++k)
      if (got[k] != element(prev, r.rank, k, round))
        TEST_FAIL("put round %d: element %llu from rank %d is %#x", round, (unsigned long long)k, prev, got[k]);
    CHECK_OK(symmem_barrier(r.b, 0, 20000));  // read before the next round's put overwrites it
  }
  CHECK_OK(symmem_get_on_stream(r.b, prev, at, r.out, n * 4, r.s));
  CHECK_OK(symmem_stream_synchronize(r.b, r.s));
  CUDA_OK(cudaMemcpy(got.data(), r.out, n * 4, cudaMemcpyDeviceToHost));
  const int before_prev = (prev + r.world - 1) % r.world;
  for (uint64_t k = 0; k < n; ++k)
    if (got[k] != element(before_prev, prev, k, 19)) TEST_FAIL("get: element %llu of rank %d wrong", (unsigned long long)k, prev);
  CHECK_OK(symmem_barrier(r.b, 0, 20000));
}

// Value signals on the stream: each rank puts 50 chunks of 300 words into a ring of 4 slots of the next rank, adding
// 1 to its count there after each; the next rank waits on its stream for each count, copies the slot out
// and sets its credit back; every element checked. Then a wait that passes its deadline names the value
// seen, and leaves the buffer usable (a collective after it is right).
void value_signals(const Rank& r) {
  const int next = (r.rank + 1) % r.world, prev = (r.rank + r.world - 1) % r.world;
  const uint64_t n = 300, slots = 4, chunks = 50;  // the slots fill 4800 of the buffer's 6006 input bytes
  const uint64_t base = 0;                          // out: the block to put, then the slot read
  uint32_t* dev = reinterpret_cast<uint32_t*>(r.out);
  std::vector<uint32_t> block(n), got(n);
  uint64_t read = 0;
  auto read_one = [&] {
    CHECK_OK(symmem_wait_signal_value_on_stream(r.b, prev, 3, SYMMEM_CMP_GE, read + 1, r.s, 20000));
    CUDA_OK(cudaMemcpyAsync(dev + base + n, r.mine + (read % slots) * n * 4, n * 4, cudaMemcpyDeviceToDevice, r.s));
    CHECK_OK(symmem_signal_value_on_stream(r.b, prev, 4, read + 1, SYMMEM_SIGNAL_SET, r.s));
    CHECK_OK(symmem_stream_synchronize(r.b, r.s));
    CUDA_OK(cudaMemcpy(got.data(), dev + base + n, n * 4, cudaMemcpyDeviceToHost));
    for (uint64_t k = 0; k < n; ++k)
      if (got[k] != element(prev, r.rank, k, int(1000 + read)))
        TEST_FAIL("value-signalled chunk %llu from rank %d, element %llu: %#x", (unsigned long long)read, prev,
                  (unsigned long long)k, got[k]);
    ++read;
  };
  for (uint64_t c = 0; c < chunks; ++c) {
    for (uint64_t k = 0; k < n; ++k) block[k] = element(r.rank, next, k, int(1000 + c));
    CUDA_OK(cudaMemcpyAsync(dev + base, block.data(), n * 4, cudaMemcpyHostToDevice, r.s));
    if (c >= slots) CHECK_OK(symmem_wait_signal_value_on_stream(r.b, next, 4, SYMMEM_CMP_GE, c - slots + 1, r.s, 20000));
    CHECK_OK(symmem_put_on_stream(r.b, next, (c % slots) * n * 4, dev + base, n * 4, r.s));
    CHECK_OK(symmem_signal_value_on_stream(r.b, next, 3, 1, SYMMEM_SIGNAL_ADD, r.s));
    if (c >= 2) read_one();
  }
  while (read < chunks) read_one();
  CHECK_OK(symmem_barrier(r.b, 0, 20000));
  CHECK_OK(symmem_wait_signal_value_on_stream(r.b, prev, 3, SYMMEM_CMP_GE, 1000, r.s, 300));
  CHECK_STATUS(symmem_stream_synchronize(r.b, r.s), SYMMEM_ERR_TIMEOUT);
  char want[128];
  std::snprintf(want, sizeof want, "wait_signal_value(peer %d, channel 3, >= 1000): timed out after 300 ms; rank %d's value is %llu",
                prev, prev, (unsigned long long)chunks);
  CHECK_ERROR_HAS(want);
  CHECK_OK(symmem_barrier(r.b, 0, 20000));
  a2av_round(r, SYMMEM_FLOAT32, 5, false);
}

int rank_main(int world, int rank, int gpus) {
  const uint64_t splits_at = (kRoomBytes + 7) / 8 * 8;
  const std::string name = "cudaa2a-" + std::to_string(world);
  Rank r{rank, world, nullptr, nullptr, splits_at, nullptr, nullptr, nullptr, nullptr};
  r.b = make_cuda_buffer(name.c_str(), rank, world, rank % gpus, splits_at + 8 * (world + 1), &r.be);
  CUDA_OK(cudaStreamCreateWithFlags(&r.s, cudaStreamNonBlocking));
  r.mine = static_cast<char*>(symmem_buffer_ptr(r.b, rank));
  CUDA_OK(cudaMalloc(&r.out, splits_at));
  CUDA_OK(cudaMalloc(&r.splits, 16 * world));
  for (symmem_dtype d : kDtypes)
    for (int round = 0; round < 10; ++round) {
      a2av_round(r, d, round, round % 2 == 0);
      a2a_round(r, d, round, round % 2 == 1);
      broadcast_round(r, d, round, round % 2 == 0);
    }
  graph_rounds(r);
  bad_splits(r);
  put_get(r);
  value_signals(r);
  CUDA_OK(cudaFree(r.out));
  CUDA_OK(cudaFree(r.splits));
  CUDA_OK(cudaStreamDestroy(r.s));
  CHECK_OK(symmem_buffer_free(r.b));
  CHECK_OK(symmem_backend_close(r.be));
  return 0;
}

}  // namespace

int main() {
  const int gpus = require_gpus("test_cuda_all_to_all", 1);
  return run_worlds("test_cuda_all_to_all", gpus, [&](int world) {
    return run_ranks(world, 240, [&](int rank) { return rank_main(world, rank, gpus); });
  });
}
