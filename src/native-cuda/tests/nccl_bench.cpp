// Not a test: NCCL's all-reduce timed three ways side by side, to show what symmem's C ABI adds to a
// call (the Java layer is timed by `symmem bench allreduce --nccl`; scripts/gpu/run-nccl.sh puts the
// three in one table):
//   nccl  NCCL's own C loop: ncclAllReduce on a communicator from ncclCommInitRank (blocking, as an
//         application would make it), called directly through dlsym
//   abi   symmem_nccl_all_reduce on a communicator from symmem_nccl_comm_init_rank (deadlines, abort)
//   nccl-otherdev, abi-otherdev  the same two from a thread whose current device is another GPU (the
//         next rank's; what a thread that never chose one has: device 0), set before the warm-up.
//         NCCL's blocking launch sets the communicator's device and restores the caller's on every
//         call, so nccl-otherdev pays that switch in every call; symmem_nccl_* leave the thread on
//         the communicator's device, so abi-otherdev pays it once, in the warm-up. Only with 2+ GPUs.
// each on plain cudaMalloc memory and on NCCL_WIN_COLL_SYMMETRIC windows (nccl: ncclMemAlloc buffers
// registered with ncclCommWindowRegister; abi: nccl-backend buffers registered with
// symmem_nccl_window_register), in place and out of place. bf16 sum, one rank per GPU (world = the
// GPUs, at most --world), sizes 4 KiB..256 MiB by 4x, or those of --sizes (bytes, comma-separated,
// K/M suffixes = KiB/MiB: --sizes 4K,512K,8M).
// Inputs: bf16 uniform in [-1, 1), seeded by the rank (as the Java bench fills its buffers).
// Time per op = steady clock around N back-to-back calls on one stream + cudaStreamSynchronize, / N,
// max over ranks; host = the same clock around the N calls alone, / N (what a call costs the caller).
// The ranks start every measurement together (a barrier in shared memory); each (variant, api, size)
// is measured in --rounds rounds (default 2), the apis alternating, and the lowest time is kept.
// Output: one line per measurement,
// "NCCLBENCH <variant> <api> <bytes> <us_per_op> <host_us> <iters> <slowest_rank>" (the rank whose
// time per op was the largest, i.e. the one reported).
// The library: SYMMEM_TEST_NCCL_LIB, else libnccl.so.2 through the loader path.
#include <dlfcn.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.h"

namespace {

constexpr int kBf16 = 9, kSum = 0, kWinCollSymmetric = 1;
using bench::kMaxWorld;
constexpr uint64_t kMaxBytes = uint64_t{256} << 20;
constexpr int kTimeoutMs = 120000;

struct RawNccl {  // the few NCCL entry points the C loop calls, straight from the library
  int (*GetUniqueId)(void* id);
  int (*CommInitRank)(void** comm, int nranks, std::array<char, 128> id, int rank);
  int (*CommDestroy)(void* comm);
  int (*AllReduce)(const void*, void*, size_t, int, int, void*, cudaStream_t);
  int (*MemAlloc)(void** ptr, size_t size);
  int (*MemFree)(void* ptr);
  int (*WindowRegister)(void* comm, void* buff, size_t size, void** win, int flags);
  int (*WindowDeregister)(void* comm, void* win);
};

// Shared by the forked ranks (an anonymous MAP_SHARED mapping made before the fork).
struct Shared : bench::Shared {
  std::array<char, 128> raw_uid;
  uint8_t abi_uid[SYMMEM_NCCL_UNIQUE_ID_BYTES];
};
Shared* g_shared = nullptr;

void barrier(int world) { shm_barrier(g_shared, world); }

template <class T>
void resolve(void* h, const char* name, T* out) {
  *out = reinterpret_cast<T>(dlsym(h, name));
  if (*out == nullptr) TEST_FAIL("%s has no %s", nccl_test_library(), name);
}

RawNccl load_raw() {
  void* h = dlopen(nccl_test_library(), RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) TEST_FAIL("dlopen %s: %s", nccl_test_library(), dlerror());
  RawNccl n{};
  resolve(h, "ncclGetUniqueId", &n.GetUniqueId);
  resolve(h, "ncclCommInitRank", &n.CommInitRank);
  resolve(h, "ncclCommDestroy", &n.CommDestroy);
  resolve(h, "ncclAllReduce", &n.AllReduce);
  resolve(h, "ncclMemAlloc", &n.MemAlloc);
  resolve(h, "ncclMemFree", &n.MemFree);
  resolve(h, "ncclCommWindowRegister", &n.WindowRegister);
  resolve(h, "ncclCommWindowDeregister", &n.WindowDeregister);
  return n;
}

using bench::Result;

template <class F>
Result measure(int rank, int world, cudaStream_t stream, F call) {
  return bench::measure(g_shared, rank, world, stream, call);
}

int rank_main(int rank, int world, const std::vector<uint64_t>& sizes, int rounds) {
  const int device = rank;
  int ngpu = 0;
  CUDA_OK(cudaGetDeviceCount(&ngpu));
  const int other_device = ngpu >= 2 ? (device + 1) % ngpu : -1;  // for the -otherdev columns
  CUDA_OK(cudaSetDevice(device));
  RawNccl raw = load_raw();
  const char* cand[] = {nccl_test_library()};
  CHECK_OK(symmem_nccl_load(cand, 1));
  if (rank == 0) {
    CHECK(raw.GetUniqueId(g_shared->raw_uid.data()) == 0);
    CHECK_OK(symmem_nccl_unique_id(g_shared->abi_uid));
  }
  barrier(world);
  void* rc = nullptr;
  CHECK(raw.CommInitRank(&rc, world, g_shared->raw_uid, rank) == 0);
  symmem_nccl_comm* ac = nullptr;
  CHECK_OK(symmem_nccl_comm_init_rank(world, g_shared->abi_uid, rank, device, "group 'bench'", kTimeoutMs, &ac));
  int ma = 0, mi = 0, pa = 0;
  CHECK_OK(symmem_nccl_version(nullptr, &ma, &mi, &pa));
  if (rank == 0)
    std::printf("nccl_bench: NCCL %d.%d.%d from %s, world %d, bf16 sum\n", ma, mi, pa, symmem_nccl_library_path(),
                world);

  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void *psend = nullptr, *precv = nullptr;  // plain memory, both apis
  CUDA_OK(cudaMalloc(&psend, kMaxBytes));
  CUDA_OK(cudaMalloc(&precv, kMaxBytes));
  CUDA_OK(cudaMemset(psend, 0, kMaxBytes));
  CUDA_OK(cudaMemset(precv, 0, kMaxBytes));
  void *wsend = nullptr, *wrecv = nullptr, *wsend_win = nullptr, *wrecv_win = nullptr;  // nccl's windows
  CHECK(raw.MemAlloc(&wsend, kMaxBytes) == 0 && raw.MemAlloc(&wrecv, kMaxBytes) == 0);
  CUDA_OK(cudaMemset(wsend, 0, kMaxBytes));
  CUDA_OK(cudaMemset(wrecv, 0, kMaxBytes));
  CHECK(raw.WindowRegister(rc, wsend, kMaxBytes, &wsend_win, kWinCollSymmetric) == 0 && wsend_win != nullptr);
  CHECK(raw.WindowRegister(rc, wrecv, kMaxBytes, &wrecv_win, kWinCollSymmetric) == 0 && wrecv_win != nullptr);
  Names names("nccl_bench", world);  // the abi's windows: nccl-backend buffers
  symmem_backend* be = nullptr;
  symmem_buffer* ssend = make_imported_buffer("nccl", device, names, rank, world, kMaxBytes, &be, 60000);
  symmem_backend* be2 = nullptr;
  Names names2("nccl_bench2", world);
  symmem_buffer* srecv = make_imported_buffer("nccl", device, names2, rank, world, kMaxBytes, &be2, 60000);
  symmem_nccl_window *ssend_win = nullptr, *srecv_win = nullptr;
  CHECK_OK(symmem_nccl_window_register(ac, ssend, 1, kTimeoutMs, &ssend_win));
  CHECK_OK(symmem_nccl_window_register(ac, srecv, 1, kTimeoutMs, &srecv_win));
  void* asend = symmem_buffer_ptr(ssend, SYMMEM_RANK_SELF);
  void* arecv = symmem_buffer_ptr(srecv, SYMMEM_RANK_SELF);
  CUDA_OK(cudaMemset(asend, 0, kMaxBytes));
  CUDA_OK(cudaMemset(arecv, 0, kMaxBytes));
  // The inputs get bf16 values uniform in [-1, 1), seeded by the rank, as the Java bench's: a bench never
  // times on zeros, and both benches time the same kind of data.
  {
    std::vector<uint16_t> values(kMaxBytes / 2);
    std::mt19937 random(17 + rank);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (uint16_t& v : values) {
      const float f = uniform(random);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      v = static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);  // round to nearest even
    }
    for (void* input : {psend, wsend, asend}) CUDA_OK(cudaMemcpy(input, values.data(), kMaxBytes, cudaMemcpyHostToDevice));
  }
  CUDA_OK(cudaDeviceSynchronize());

  struct Variant {
    const char* name;
    void *nccl_send, *nccl_recv, *abi_send, *abi_recv;
  };
  const Variant variants[] = {
      {"plain-oop", psend, precv, psend, precv},
      {"plain-ip", psend, psend, psend, psend},
      {"window-oop", wsend, wrecv, asend, arecv},
      {"window-ip", wsend, wsend, asend, asend},
  };
  for (uint64_t bytes : sizes) {
    const size_t count = bytes / 2;
    for (const Variant& v : variants) {
      const char* apis[] = {"nccl", "abi", "nccl-otherdev", "abi-otherdev"};
      const int napis = other_device >= 0 ? 4 : 2;
      Result best[4];
      for (Result& b : best) b = {1e30, 1e30, 0, 0};
      for (int round = 0; round < rounds; ++round) {
        for (int i = 0; i < napis; ++i) {
          // The thread's current device before the warm-up: its own, or another GPU's.
          CUDA_OK(cudaSetDevice(i < 2 ? device : other_device));
          const bool raw_api = i % 2 == 0;
          Result r = measure(rank, world, stream, [&] {
            if (raw_api) {
              if (raw.AllReduce(v.nccl_send, v.nccl_recv, count, kBf16, kSum, rc, stream) != 0)
                TEST_FAIL("ncclAllReduce failed (%s, %llu bytes)", v.name, static_cast<unsigned long long>(bytes));
            } else {
              CHECK_OK(symmem_nccl_all_reduce(ac, v.abi_send, v.abi_recv, count, kBf16, kSum, stream, kTimeoutMs));
            }
          });
          if (r.us < best[i].us) best[i] = r;
        }
      }
      CUDA_OK(cudaSetDevice(device));
      if (rank == 0) {
        for (int i = 0; i < napis; ++i)
          std::printf("NCCLBENCH %s %s %llu %.2f %.3f %ld %d\n", v.name, apis[i],
                      static_cast<unsigned long long>(bytes), best[i].us, best[i].host_us, best[i].iters,
                      best[i].slowest);
        std::fflush(stdout);
      }
    }
  }

  CHECK_OK(symmem_nccl_window_deregister(ssend_win, kTimeoutMs));
  CHECK_OK(symmem_nccl_window_deregister(srecv_win, kTimeoutMs));
  CHECK_OK(symmem_buffer_free(ssend));
  CHECK_OK(symmem_buffer_free(srecv));
  CHECK_OK(symmem_backend_close(be));
  CHECK_OK(symmem_backend_close(be2));
  CHECK_OK(symmem_nccl_comm_destroy(ac, kTimeoutMs));
  CHECK(raw.WindowDeregister(rc, wsend_win) == 0 && raw.WindowDeregister(rc, wrecv_win) == 0);
  CHECK(raw.MemFree(wsend) == 0 && raw.MemFree(wrecv) == 0);
  CHECK(raw.CommDestroy(rc) == 0);
  CUDA_OK(cudaFree(psend));
  CUDA_OK(cudaFree(precv));
  CUDA_OK(cudaStreamDestroy(stream));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int max_world = 2;
  int rounds = 2;
  std::vector<uint64_t> sizes;
  for (uint64_t bytes = 4096; bytes <= kMaxBytes; bytes *= 4) sizes.push_back(bytes);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--world") == 0 && i + 1 < argc) {
      max_world = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
      sizes = bench::parse_sizes(argv[++i], 2, kMaxBytes);  // bf16 elements
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
      if (rounds < 1 || rounds > 100) TEST_FAIL("--rounds %s: expected 1..100", argv[i]);
    } else {
      std::fprintf(stderr, "usage: symmem_nccl_bench [--world N] [--sizes 4K,512K,8M,...] [--rounds N]\n");
      return 2;
    }
  }
  const int ngpu = require_gpus("nccl_bench", 1);
  const int world = std::clamp(std::min(ngpu, max_world), 1, kMaxWorld);
  void* mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) TEST_FAIL("mmap of the shared barrier failed");
  g_shared = new (mem) Shared();
  if (!run_ranks(world, 900, [&](int r) { return rank_main(r, world, sizes, rounds); })) {
    std::printf("nccl_bench world %d: FAILED\n", world);
    return 1;
  }
  return 0;
}
