// Not a test: symmem's data movers beside NCCL's, each in its own C loop, one rank per GPU (world = the
// GPUs, at most --world), bf16, sizes 4 KiB..256 MiB by 4x or those of --sizes (see bench_timing.h):
//   broadcast   root 0, out of place: symmem_broadcast on a cuda buffer / ncclBroadcast
//   all-to-all  `bytes` per rank (world blocks), out of place: symmem_all_to_all / ncclAlltoAll where the
//               library has it, else the grouped ncclSend/ncclRecv that PyTorch's all_to_all issues
//   put         every rank puts `bytes` into the next rank's buffer: symmem_put_on_stream (copy engines,
//               through the peer's mapping) / a grouped ncclSend to the next and ncclRecv from the previous
//   moe-a2av    (size column: bytes each rank sends) MoE dispatch: 4096 tokens of 7168 bf16 per rank,
//               each routed to a random rank (seeded per rank, the same routing every call), out of
//               place: symmem_all_to_all_v with the splits in the buffer / the grouped ncclSend/ncclRecv
//               of the host-known counts that torch's all_to_all_single issues
//   round-trip  (size column 8) ranks 0 and 1 hand a count back and forth: value signals on the stream
//               (symmem_signal_value_on_stream + symmem_wait_signal_value_on_stream) / 8-byte ncclSend and
//               ncclRecv; the time is one round trip
// Both apis run on the same inputs, alternating, --rounds rounds (default 2); the lowest time is kept.
// Output, one line per measurement:
// "MOVERSBENCH <op> <api> <bytes> <us_per_op> <GB/s> <iters> <slowest_rank>", GB/s being the bytes each
// rank sends over the links per microsecond x 1e-3: broadcast bytes (the root's), all-to-all
// bytes x (world - 1) / world, put bytes.
// The library: SYMMEM_TEST_NCCL_LIB, else libnccl.so.2 through the loader path.
#include <dlfcn.h>
#include <sys/mman.h>

#include <array>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.h"

namespace {

constexpr int kBf16 = 9;
constexpr uint64_t kMaxBytes = uint64_t{256} << 20;
constexpr int kTimeoutMs = 120000;
constexpr int kCountChannel = 2;
constexpr uint64_t kMoeTokens = 4096, kMoeHidden = 7168;
constexpr uint64_t kMoeSplitsAt = kMoeTokens * kMoeHidden * 2;  // the input's bytes: the splits follow

// Tokens rank q sends to rank p (every rank computes every rank's routing from the same seeds).
std::vector<std::vector<int64_t>> moe_routing(int world) {
  std::vector<std::vector<int64_t>> tokens(world, std::vector<int64_t>(world, 0));
  for (int q = 0; q < world; ++q) {
    std::mt19937 random(100 + q);
    std::uniform_int_distribution<int> to(0, world - 1);
    for (uint64_t t = 0; t < kMoeTokens; ++t) ++tokens[q][to(random)];
  }
  return tokens;
}

struct RawNccl {
  int (*GetUniqueId)(void* id);
  int (*CommInitRank)(void** comm, int nranks, std::array<char, 128> id, int rank);
  int (*CommDestroy)(void* comm);
  int (*Broadcast)(const void*, void*, size_t, int, int, void*, cudaStream_t);
  int (*AlltoAll)(const void*, void*, size_t, int, void*, cudaStream_t);  // NULL before NCCL 2.28
  int (*Send)(const void*, size_t, int, int, void*, cudaStream_t);
  int (*Recv)(void*, size_t, int, int, void*, cudaStream_t);
  int (*GroupStart)();
  int (*GroupEnd)();
};

struct Shared : bench::Shared {
  std::array<char, 128> raw_uid;
};
Shared* g_shared = nullptr;

template <class T>
void resolve(void* h, const char* name, T* out, bool required = true) {
  *out = reinterpret_cast<T>(dlsym(h, name));
  if (*out == nullptr && required) TEST_FAIL("%s has no %s", nccl_test_library(), name);
}

RawNccl load_raw() {
  void* h = dlopen(nccl_test_library(), RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) TEST_FAIL("dlopen %s: %s", nccl_test_library(), dlerror());
  RawNccl n{};
  resolve(h, "ncclGetUniqueId", &n.GetUniqueId);
  resolve(h, "ncclCommInitRank", &n.CommInitRank);
  resolve(h, "ncclCommDestroy", &n.CommDestroy);
  resolve(h, "ncclBroadcast", &n.Broadcast);
  resolve(h, "ncclAlltoAll", &n.AlltoAll, false);
  resolve(h, "ncclSend", &n.Send);
  resolve(h, "ncclRecv", &n.Recv);
  resolve(h, "ncclGroupStart", &n.GroupStart);
  resolve(h, "ncclGroupEnd", &n.GroupEnd);
  return n;
}

void nccl_ok(int result, const char* what, uint64_t bytes) {
  if (result != 0) TEST_FAIL("%s failed with NCCL result %d (%llu bytes)", what, result, static_cast<unsigned long long>(bytes));
}

struct Rank {
  int rank, world;
  cudaStream_t stream;
  RawNccl raw;
  void* comm;
  symmem_buffer* b;
  char* mine;         // the symmetric buffer's own memory
  void *send, *recv;  // cudaMalloc'd: NCCL's input and output, symmem's output
  int64_t* out_splits;  // cudaMalloc'd: the all-to-all-v's received counts and offsets
  std::vector<std::vector<int64_t>> moe;  // moe_routing
};

double gbps(const char* op, uint64_t bytes, int world, double us) {
  double moved = double(bytes);
  if (std::strcmp(op, "all-to-all") == 0 || std::strcmp(op, "moe-a2av") == 0) moved = moved * (world - 1) / world;
  return moved / us * 1e-3;
}

// One call of `op` through `api` ("symmem" or "nccl").
void call(Rank& r, const std::string& op, bool symmem, uint64_t bytes, uint64_t* turns) {
  const size_t count = bytes / 2;
  const int next = (r.rank + 1) % r.world, prev = (r.rank + r.world - 1) % r.world;
  if (op == "broadcast") {
    if (symmem) CHECK_OK(symmem_broadcast(r.b, SYMMEM_BFLOAT16, count, 0, r.recv, r.stream, kTimeoutMs));
    else nccl_ok(r.raw.Broadcast(r.send, r.recv, count, kBf16, 0, r.comm, r.stream), "ncclBroadcast", bytes);
  } else if (op == "all-to-all") {
    const size_t per_peer = count / r.world;
    if (symmem) {
      CHECK_OK(symmem_all_to_all(r.b, SYMMEM_BFLOAT16, per_peer, r.recv, r.stream, kTimeoutMs));
    } else if (r.raw.AlltoAll != nullptr) {
      nccl_ok(r.raw.AlltoAll(r.send, r.recv, per_peer, kBf16, r.comm, r.stream), "ncclAlltoAll", bytes);
    } else {
      nccl_ok(r.raw.GroupStart(), "ncclGroupStart", bytes);
      for (int p = 0; p < r.world; ++p) {
        nccl_ok(r.raw.Send(static_cast<char*>(r.send) + p * per_peer * 2, per_peer, kBf16, p, r.comm, r.stream), "ncclSend", bytes);
        nccl_ok(r.raw.Recv(static_cast<char*>(r.recv) + p * per_peer * 2, per_peer, kBf16, p, r.comm, r.stream), "ncclRecv", bytes);
      }
      nccl_ok(r.raw.GroupEnd(), "ncclGroupEnd", bytes);
    }
  } else if (op == "moe-a2av") {
    if (symmem) {
      CHECK_OK(symmem_all_to_all_v(r.b, SYMMEM_BFLOAT16, kMoeSplitsAt, r.recv, kMaxBytes / 2, r.out_splits, r.stream,
                                   kTimeoutMs));
    } else {
      uint64_t sent = 0, received = 0;
      nccl_ok(r.raw.GroupStart(), "ncclGroupStart", bytes);
      for (int p = 0; p < r.world; ++p) {
        const uint64_t out_n = r.moe[r.rank][p] * kMoeHidden, in_n = r.moe[p][r.rank] * kMoeHidden;
        if (out_n > 0) nccl_ok(r.raw.Send(r.mine + sent * 2, out_n, kBf16, p, r.comm, r.stream), "ncclSend", bytes);
        if (in_n > 0) nccl_ok(r.raw.Recv(static_cast<char*>(r.recv) + received * 2, in_n, kBf16, p, r.comm, r.stream), "ncclRecv", bytes);
        sent += out_n;
        received += in_n;
      }
      nccl_ok(r.raw.GroupEnd(), "ncclGroupEnd", bytes);
    }
  } else if (op == "put") {
    if (symmem) {
      CHECK_OK(symmem_put_on_stream(r.b, next, 0, r.send, bytes, r.stream));
    } else {
      nccl_ok(r.raw.GroupStart(), "ncclGroupStart", bytes);
      nccl_ok(r.raw.Send(r.send, count, kBf16, next, r.comm, r.stream), "ncclSend", bytes);
      nccl_ok(r.raw.Recv(r.recv, count, kBf16, prev, r.comm, r.stream), "ncclRecv", bytes);
      nccl_ok(r.raw.GroupEnd(), "ncclGroupEnd", bytes);
    }
  } else {  // round-trip: rank 0 serves, rank 1 answers; the others sit it out
    if (r.rank > 1) return;
    const int peer = 1 - r.rank;
    ++*turns;
    if (symmem) {
      if (r.rank == 0) CHECK_OK(symmem_signal_value_on_stream(r.b, peer, kCountChannel, 1, SYMMEM_SIGNAL_ADD, r.stream));
      CHECK_OK(symmem_wait_signal_value_on_stream(r.b, peer, kCountChannel, SYMMEM_CMP_GE, *turns, r.stream, kTimeoutMs));
      if (r.rank == 1) CHECK_OK(symmem_signal_value_on_stream(r.b, peer, kCountChannel, 1, SYMMEM_SIGNAL_ADD, r.stream));
    } else if (r.rank == 0) {
      nccl_ok(r.raw.Send(r.send, 4, kBf16, peer, r.comm, r.stream), "ncclSend", 8);
      nccl_ok(r.raw.Recv(r.recv, 4, kBf16, peer, r.comm, r.stream), "ncclRecv", 8);
    } else {
      nccl_ok(r.raw.Recv(r.recv, 4, kBf16, peer, r.comm, r.stream), "ncclRecv", 8);
      nccl_ok(r.raw.Send(r.send, 4, kBf16, peer, r.comm, r.stream), "ncclSend", 8);
    }
  }
}

int rank_main(int rank, int world, const std::vector<uint64_t>& sizes, int rounds) {
  CUDA_OK(cudaSetDevice(rank));
  Rank r{rank, world, nullptr, load_raw(), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, moe_routing(world)};
  if (rank == 0) CHECK(r.raw.GetUniqueId(g_shared->raw_uid.data()) == 0);
  shm_barrier(g_shared, world);
  CHECK(r.raw.CommInitRank(&r.comm, world, g_shared->raw_uid, rank) == 0);
  CUDA_OK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
  Names names("movers_bench", world);
  symmem_backend* be = nullptr;
  r.b = make_imported_buffer("cuda", rank, names, rank, world, kMaxBytes, &be, 60000);
  r.mine = static_cast<char*>(symmem_buffer_ptr(r.b, rank));
  CUDA_OK(cudaMalloc(&r.send, kMaxBytes));
  CUDA_OK(cudaMalloc(&r.recv, kMaxBytes));
  CUDA_OK(cudaMemset(r.send, 0x3c, kMaxBytes));  // bf16 1.0 and friends: never timed on zeros
  CUDA_OK(cudaMemset(r.mine, 0x3c, kMaxBytes));
  CUDA_OK(cudaMemset(r.recv, 0, kMaxBytes));
  CUDA_OK(cudaMalloc(&r.out_splits, 16 * world));
  CUDA_OK(cudaDeviceSynchronize());
  // The MoE splits, in elements, written after the input just before that op (the puts write over it).
  std::vector<int64_t> splits(world + 1, 0);
  uint64_t moe_bytes = 0;
  for (int p = 0; p < world; ++p) moe_bytes += (splits[p] = r.moe[rank][p] * int64_t(kMoeHidden)) * 2;
  if (rank == 0)
    std::printf("movers_bench: world %d, bf16, NCCL all-to-all as %s\n", world,
                r.raw.AlltoAll != nullptr ? "ncclAlltoAll" : "grouped ncclSend/ncclRecv");
  uint64_t turns[2] = {0, 0};  // round trips so far, per api: the value a wait looks for
  const char* ops[] = {"broadcast", "all-to-all", "put", "moe-a2av", "round-trip"};
  for (const char* op : ops) {
    const bool trip = std::strcmp(op, "round-trip") == 0, moe = std::strcmp(op, "moe-a2av") == 0;
    const std::vector<uint64_t> op_sizes = trip ? std::vector<uint64_t>{8} : moe ? std::vector<uint64_t>{moe_bytes} : sizes;
    if (moe) {
      shm_barrier(g_shared, world);  // every put into this rank's buffer is done
      CUDA_OK(cudaMemcpy(r.mine + kMoeSplitsAt, splits.data(), 8 * (world + 1), cudaMemcpyHostToDevice));
      CUDA_OK(cudaDeviceSynchronize());
      shm_barrier(g_shared, world);
    }
    for (uint64_t bytes : op_sizes) {
      if (std::strcmp(op, "all-to-all") == 0 && bytes % (2 * world) != 0) continue;
      bench::Result best[2] = {{1e30, 1e30, 0, 0}, {1e30, 1e30, 0, 0}};
      for (int round = 0; round < rounds; ++round)
        for (int api = 0; api < 2; ++api) {
          const bench::Result res = bench::measure(g_shared, rank, world, r.stream,
                                                   [&] { call(r, op, api == 0, bytes, &turns[api]); });
          if (res.us < best[api].us) best[api] = res;
        }
      CHECK_OK(symmem_stream_synchronize(r.b, r.stream));  // a device-side timeout would void the figures
      if (rank == 0) {
        for (int api = 0; api < 2; ++api)
          std::printf("MOVERSBENCH %s %s %llu %.2f %.1f %ld %d\n", op, api == 0 ? "symmem" : "nccl",
                      static_cast<unsigned long long>(bytes), best[api].us,
                      trip ? 0.0 : gbps(op, bytes, world, best[api].us), best[api].iters, best[api].slowest);
        std::fflush(stdout);
      }
    }
  }
  CHECK_OK(symmem_barrier(r.b, 0, kTimeoutMs));
  CHECK_OK(symmem_buffer_free(r.b));
  CHECK_OK(symmem_backend_close(be));
  CHECK(r.raw.CommDestroy(r.comm) == 0);
  CUDA_OK(cudaFree(r.send));
  CUDA_OK(cudaFree(r.recv));
  CUDA_OK(cudaFree(r.out_splits));
  CUDA_OK(cudaStreamDestroy(r.stream));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int max_world = 8, rounds = 2;
  std::vector<uint64_t> sizes;
  for (uint64_t bytes = 4096; bytes <= kMaxBytes; bytes *= 4) sizes.push_back(bytes);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--world") == 0 && i + 1 < argc) {
      max_world = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
      sizes = bench::parse_sizes(argv[++i], 16, kMaxBytes);  // bf16 blocks for up to 8 ranks
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
      if (rounds < 1 || rounds > 100) TEST_FAIL("--rounds %s: expected 1..100", argv[i]);
    } else {
      std::fprintf(stderr, "usage: symmem_movers_bench [--world N] [--sizes 4K,512K,8M,...] [--rounds N]\n");
      return 2;
    }
  }
  const int ngpu = require_gpus("movers_bench", 2);
  const int world = std::clamp(std::min(ngpu, max_world), 2, bench::kMaxWorld);
  void* mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) TEST_FAIL("mmap of the shared barrier failed");
  g_shared = new (mem) Shared();
  if (!run_ranks(world, 900, [&](int r) { return rank_main(r, world, sizes, rounds); })) {
    std::printf("movers_bench world %d: FAILED\n", world);
    return 1;
  }
  return 0;
}
