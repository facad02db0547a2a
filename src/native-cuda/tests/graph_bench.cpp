// symmem_graph_bench: per-op time of symmem's all-reduce inside a CUDA graph, beside NCCL's
// all-reduce captured in a graph in the same run, and both issued eagerly. One forked rank per GPU.
//   symmem_graph_bench [--world N] [--ops K] [--replays R] [--min-bytes B] [--max-bytes B]
// For each size (4 KiB .. 1 MiB by 4x, bf16 sum, out of place unless -ip):
//   eager  K back-to-back calls on one stream, then a synchronize: (steady clock) / K; host = the
//          clock around the K calls alone / K (what one call costs the caller)
//   graph  K calls captured into one graph (symmem_graph_capture_begin/end; NCCL: the runtime's
//          own capture of ncclAllReduce on a blocking communicator), replayed R times back to back,
//          then a synchronize: (steady clock) / (R * K); host = the clock around the R replays / R
// The max over ranks; the ranks start every measurement together (a barrier in shared memory).
// Also: the cost of one cudaStreamIsCapturing (symmem asks it only off the same-stream hot path).
// NCCL: SYMMEM_TEST_NCCL_LIB, else libnccl.so.2 on the loader path, loaded at run time; when it is
// missing the NCCL lines say so and the rest runs.
// Output: one line per measurement, "GRAPHBENCH <impl> <mode> <bytes> <us_per_op> <host_us>", then a
// table on rank 0.
#include <dlfcn.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "cuda_test_util.h"

namespace {

constexpr int kNcclBf16 = 9, kNcclSum = 0;
constexpr int kMaxWorld = 8;
constexpr int kTimeoutMs = 30000;

struct Nccl {
  int (*GetUniqueId)(void* id) = nullptr;
  int (*CommInitRank)(void** comm, int nranks, std::array<char, 128> id, int rank) = nullptr;
  int (*CommDestroy)(void* comm) = nullptr;
  int (*AllReduce)(const void*, void*, size_t, int, int, void*, cudaStream_t) = nullptr;
  bool loaded() const { return AllReduce != nullptr; }
};

struct Shared {
  std::atomic<int> arrived;
  std::atomic<int> generation;
  std::atomic<int> nccl_ok;
  std::array<char, 128> uid;
  double us[kMaxWorld], host_us[kMaxWorld];
};
Shared* g_shared = nullptr;

void barrier(int world) { shm_barrier(g_shared, world); }


Nccl load_nccl(std::string* why) {
  Nccl n;
  void* h = dlopen(nccl_test_library(), RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) {
    *why = dlerror();
    return n;
  }
  n.GetUniqueId = reinterpret_cast<decltype(n.GetUniqueId)>(dlsym(h, "ncclGetUniqueId"));
  n.CommInitRank = reinterpret_cast<decltype(n.CommInitRank)>(dlsym(h, "ncclCommInitRank"));
  n.CommDestroy = reinterpret_cast<decltype(n.CommDestroy)>(dlsym(h, "ncclCommDestroy"));
  n.AllReduce = reinterpret_cast<decltype(n.AllReduce)>(dlsym(h, "ncclAllReduce"));
  if (!n.GetUniqueId || !n.CommInitRank || !n.CommDestroy || !n.AllReduce) {
    *why = "an entry point is missing";
    return Nccl{};
  }
  return n;
}

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Result {
  double us = 0, host_us = 0;
};

// Max over ranks of what every rank measured.
Result gather(int rank, int world, double us, double host_us) {
  g_shared->us[rank] = us;
  g_shared->host_us[rank] = host_us;
  barrier(world);
  Result r;
  for (int i = 0; i < world; ++i) {
    r.us = std::max(r.us, g_shared->us[i]);
    r.host_us = std::max(r.host_us, g_shared->host_us[i]);
  }
  barrier(world);
  return r;
}

// K eager calls, timed as described at the top.
Result eager(int rank, int world, cudaStream_t s, int ops, const std::function<void()>& call) {
  for (int i = 0; i < 20; ++i) call();
  CUDA_OK(cudaStreamSynchronize(s));
  barrier(world);
  const double t0 = now_us();
  for (int i = 0; i < ops; ++i) call();
  const double t1 = now_us();
  CUDA_OK(cudaStreamSynchronize(s));
  const double t2 = now_us();
  return gather(rank, world, (t2 - t0) / ops, (t1 - t0) / ops);
}

// R replays of a graph of K ops.
Result replays(int rank, int world, cudaStream_t s, int ops, int reps, const std::function<void()>& replay) {
  for (int i = 0; i < 3; ++i) replay();
  CUDA_OK(cudaStreamSynchronize(s));
  barrier(world);
  const double t0 = now_us();
  for (int i = 0; i < reps; ++i) replay();
  const double t1 = now_us();
  CUDA_OK(cudaStreamSynchronize(s));
  const double t2 = now_us();
  return gather(rank, world, (t2 - t0) / (double(reps) * ops), (t1 - t0) / reps);
}

struct Row {
  uint64_t bytes;
  const char* impl;
  Result eager, graph;
};

int rank_main(int rank, int world, int ops, int reps, uint64_t min_bytes, uint64_t max_bytes) {
  const int device = rank;
  CUDA_OK(cudaSetDevice(device));
  symmem_backend* be = nullptr;
  Names names("graph_bench", world);
  symmem_buffer* b = make_imported_buffer("cuda", device, names, rank, world, max_bytes, &be, 60000);
  void* s = nullptr;
  CHECK_OK(symmem_stream_create(be, &s));
  auto stream = static_cast<cudaStream_t>(s);
  void* out = nullptr;
  CUDA_OK(cudaMalloc(&out, max_bytes));
  CUDA_OK(cudaMemset(out, 0, max_bytes));
  CHECK_OK(symmem_memset32(b, SYMMEM_RANK_SELF, 0, 0, max_bytes / 4, s));
  CUDA_OK(cudaStreamSynchronize(stream));

  std::string why;
  Nccl nccl = load_nccl(&why);
  if (rank == 0) {
    g_shared->nccl_ok.store(nccl.loaded() ? 1 : 0);
    if (nccl.loaded() && nccl.GetUniqueId(g_shared->uid.data()) != 0) g_shared->nccl_ok.store(0);
  }
  barrier(world);
  void* comm = nullptr;
  void *nsend = nullptr, *nrecv = nullptr;
  const bool with_nccl = g_shared->nccl_ok.load() != 0 && nccl.loaded();
  if (with_nccl) {
    CHECK(nccl.CommInitRank(&comm, world, g_shared->uid, rank) == 0);
    CUDA_OK(cudaMalloc(&nsend, max_bytes));
    CUDA_OK(cudaMalloc(&nrecv, max_bytes));
    CUDA_OK(cudaMemset(nsend, 0, max_bytes));
    CUDA_OK(cudaMemset(nrecv, 0, max_bytes));
  } else if (rank == 0) {
    std::printf("graph_bench: NCCL not measured (%s: %s)\n", nccl_test_library(),
                why.empty() ? "ncclGetUniqueId failed" : why.c_str());
  }

  if (rank == 0) {
    // What symmem's capture check would cost if it were on every call (it is not: off the
    // same-stream hot path only).
    cudaStreamCaptureStatus st;
    const int n = 100000;
    const double t0 = now_us();
    for (int i = 0; i < n; ++i) CUDA_OK(cudaStreamIsCapturing(stream, &st));
    std::printf("graph_bench: cudaStreamIsCapturing costs %.1f ns per call\n", (now_us() - t0) * 1000.0 / n);
  }

  std::vector<Row> rows;
  for (uint64_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    const uint64_t count = bytes / 2;
    struct Kind {
      const char* impl;
      symmem_algo algo;
      void* out;
    };
    const Kind kinds[] = {{"symmem-one-shot", SYMMEM_ALGO_ONE_SHOT, out},
                          {"symmem-one-shot-ip", SYMMEM_ALGO_ONE_SHOT, nullptr},
                          {"symmem-two-shot", SYMMEM_ALGO_TWO_SHOT, out}};
    for (const Kind& k : kinds) {
      auto call = [&] {
        CHECK_OK(symmem_all_reduce(b, k.algo, SYMMEM_BFLOAT16, SYMMEM_SUM, count, k.out, s, kTimeoutMs));
      };
      Row row{bytes, k.impl, eager(rank, world, stream, ops, call), {}};
      CHECK_OK(symmem_graph_capture_begin(be, s));
      for (int i = 0; i < ops; ++i) call();
      symmem_graph* g = nullptr;
      CHECK_OK(symmem_graph_capture_end(be, s, &g));
      row.graph = replays(rank, world, stream, ops, reps, [&] { CHECK_OK(symmem_graph_replay(g, s)); });
      CHECK_OK(symmem_graph_synchronize(g, s));
      CHECK_OK(symmem_graph_free(g));
      rows.push_back(row);
    }
    if (with_nccl) {
      auto call = [&] {
        if (nccl.AllReduce(nsend, nrecv, count, kNcclBf16, kNcclSum, comm, stream) != 0)
          TEST_FAIL("ncclAllReduce failed (%llu bytes)", static_cast<unsigned long long>(bytes));
      };
      Row row{bytes, "nccl", eager(rank, world, stream, ops, call), {}};
      CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < ops; ++i) call();
      cudaGraph_t graph = nullptr;
      CUDA_OK(cudaStreamEndCapture(stream, &graph));
      cudaGraphExec_t exec = nullptr;
      CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
      CUDA_OK(cudaGraphDestroy(graph));
      row.graph = replays(rank, world, stream, ops, reps, [&] { CUDA_OK(cudaGraphLaunch(exec, stream)); });
      CUDA_OK(cudaGraphExecDestroy(exec));
      rows.push_back(row);
    }
  }

  if (rank == 0) {
    for (const Row& r : rows) {
      std::printf("GRAPHBENCH %s eager %llu %.2f %.3f\n", r.impl, static_cast<unsigned long long>(r.bytes),
                  r.eager.us, r.eager.host_us);
      std::printf("GRAPHBENCH %s graph %llu %.2f %.3f\n", r.impl, static_cast<unsigned long long>(r.bytes),
                  r.graph.us, r.graph.host_us);
    }
    std::printf("\ngraph_bench: world %d, bf16 sum, %d ops per graph, %d replays; us per op (max over ranks)\n",
                world, ops, reps);
    std::printf("%-9s %-20s %10s %10s %12s %14s\n", "bytes", "impl", "eager", "graph", "eager host", "replay host");
    for (const Row& r : rows)
      std::printf("%-9llu %-20s %10.2f %10.2f %12.2f %14.2f\n", static_cast<unsigned long long>(r.bytes), r.impl,
                  r.eager.us, r.graph.us, r.eager.host_us, r.graph.host_us);
    std::fflush(stdout);
  }

  barrier(world);
  if (with_nccl) {
    CHECK(nccl.CommDestroy(comm) == 0);
    CUDA_OK(cudaFree(nsend));
    CUDA_OK(cudaFree(nrecv));
  }
  CHECK_OK(symmem_barrier(b, 0, kTimeoutMs));
  CHECK_OK(symmem_buffer_free(b));
  CUDA_OK(cudaFree(out));
  CHECK_OK(symmem_stream_destroy(be, s));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int max_world = 2, ops = 100, reps = 20;
  uint64_t min_bytes = 4096, max_bytes = 1 << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--world") max_world = std::atoi(argv[i + 1]);
    else if (a == "--ops") ops = std::atoi(argv[i + 1]);
    else if (a == "--replays") reps = std::atoi(argv[i + 1]);
    else if (a == "--min-bytes") min_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--max-bytes") max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: symmem_graph_bench [--world N] [--ops K] [--replays R] [--min-bytes B] "
                           "[--max-bytes B]\n");
      return 2;
    }
  }
  if (ops < 1 || reps < 1 || min_bytes < 64 || max_bytes < min_bytes) {
    std::fprintf(stderr, "symmem_graph_bench: --ops and --replays >= 1, 64 <= --min-bytes <= --max-bytes\n");
    return 2;
  }
  const int ngpu = require_gpus("graph_bench", 2);
  const int world = std::clamp(std::min(ngpu, max_world), 2, kMaxWorld);
  void* mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) TEST_FAIL("mmap of the shared barrier failed");
  g_shared = new (mem) Shared();
  if (!run_ranks(world, 300, [&](int r) { return rank_main(r, world, ops, reps, min_bytes, max_bytes); })) {
    std::printf("graph_bench world %d: FAILED\n", world);
    return 1;
  }
  return 0;
}
