// symmem_bench: all-reduce latency and bus bandwidth of the cuda (or nvshmem) backend, one forked rank
// per GPU.
//   symmem_bench [--world N] [--min-bytes B] [--max-bytes B] [--dtype bf16|fp16|fp32] [--backend cuda|nvshmem]
//                [--streams both|own|sym] [--profile-one | --profile-all] [--profile-iters N]
//                [--profile-delay-ms MS]
// nvshmem: NVSHMEM's host library from SYMMEM_TEST_NVSHMEM_LIB (else the loader's path), joined by
// unique id over a pipe; the buffers come from its heap, the kernels are the same.
// For each size (4 KiB .. 256 MiB, powers of two, plus 8 MiB's neighbours), bf16 sum by default:
// one-shot (out of place), two-shot (out of place), two-shot (in place), auto (out of place), and
// at world 2 on cuda buffers the copy-engine two-shot (in place) where the buffer has its scratch
// (SYMMEM_CUDA_CE_SLOT_BYTES set and the buffer at least SYMMEM_CUDA_CE_MIN_BYTES: then every size
// runs it); without, its column stays empty.
// Time per op = CUDA-event time of `iters` back-to-back launches on one stream / iters, the max
// over ranks. busbw = 2 (n-1)/n * bytes / t. Also all-gather and reduce-scatter (out of place), the
// data movers out of place (broadcast from rank 0 of `bytes`; all-to-all of `bytes` per rank, a
// world-th to each rank; all-to-all-v of the same, with equal splits read on the device), and the
// latency of barrier_on_stream.
// Host enqueue: the CPU time per call of the same back-to-back loop, on a stream the program made
// with cudaStreamCreate (foreign to symmem: each launch also records the buffer's order event) and
// on one made by symmem_stream_create (what the Java façade passes: the launch alone).
// --streams own|sym runs every loop on that one stream only (for counting a stream's calls with
// -DSYMMEM_HOT_PATH_COUNTERS=ON); both (the default) times on the own stream and adds the host
// column of the symmem stream. --profile-one: after each size's timed loops, rank 0 runs one more
// in-place AUTO all-reduce (the kernel the anchors compare) between cudaProfilerStart and
// cudaProfilerStop, for ncu --profile-from-start off (the other ranks run theirs unprofiled);
// --profile-all: every rank brackets it (for a profiler that starts the ranks' profiled kernels
// together, as they run unprofiled). --profile-iters N: N back-to-back calls in the bracket instead of
// one (for nsys --capture-range=cudaProfilerApi: a capture of the loop alone, not of the whole run).
// --profile-delay-ms MS: the profiled ranks wait MS ms after the barrier before they start, so that
// the unprofiled ranks' kernels are already running and waiting when the profiled one starts (to
// tell a late peer from the profiler's own cost: on 2 x H100, ncu's kernels took as long with a
// 300 ms delay as without, docs/benchmarks-history.md).
#include <cuda_profiler_api.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "cuda_test_util.h"

enum { kOne, kOneIp, kTwo, kTwoIp, kAuto, kAutoIp, kAg, kRs, kCeIp, kBcast, kA2a, kA2av, kVariants };
static const char* kVariantName[] = {"one-shot", "one-shot-ip", "two-shot", "two-shot-ip", "auto", "auto-ip",
                                     "all-gather", "reduce-scatter", "two-shot-ce-ip", "broadcast", "all-to-all",
                                     "all-to-all-v"};
static const char* algo_text(int a) {
  return a == SYMMEM_ALGO_ONE_SHOT ? "one" : a == SYMMEM_ALGO_TWO_SHOT_CE ? "ce" : "two";
}
static const int kMaxSizes = 32;
// Timed calls per loop: about 512 MiB of input, 10 to 2000 calls.
static int iters_for(uint64_t bytes) {
  return int(std::min<uint64_t>(2000, std::max<uint64_t>(10, (2ull << 30) / bytes / 4)));
}

struct Shared {
  double us[8][kMaxSizes][kVariants];  // [rank][size][variant]
  double host_us[8][kMaxSizes][kVariants];  // CPU time per call while enqueuing (launch cost)
  double host_sym_us[8][kMaxSizes][kVariants];  // the same on a symmem_stream_create stream
  double longest_call_us[8][kMaxSizes][kVariants];  // the slowest single enqueue of the timed loop
  int longest_call_at[8][kMaxSizes][kVariants];      // and its index in the loop
  double barrier_us[8];
  double barrier_host_us[8];  // CPU time per barrier_on_stream call (enqueue only)
  double barrier_host_sym_us[8];  // the same on a symmem_stream_create stream
  int auto_algo[kMaxSizes];
  int auto_algo_ip[kMaxSizes];
};

// An nvshmem buffer of `bytes` for rank/world: NVSHMEM loaded, joined with rank 0's id (sent over
// `uid_pipe`), the heap allocation bound to PEs 0..world-1 once every rank has allocated.
static symmem_buffer* make_nvshmem_buffer(int rank, int world, int device, uint64_t bytes, int uid_pipe[2],
                                          std::atomic<int>* allocated, symmem_backend** be_out) {
  join_nvshmem_world(rank, world, device, uid_pipe, nullptr, 0);
  if (std::getenv("SYMMEM_BENCH_NVSHMEM_INIT_ONLY") != nullptr) {
    // Diagnosis: NVSHMEM joined, but the buffer is a cuda one (what NVSHMEM's init does to launches).
    allocated->fetch_add(1);
    return make_cuda_buffer("bench", rank, world, device, bytes, be_out);
  }
  CHECK_OK(symmem_backend_open("nvshmem", device, be_out));
  symmem_buffer* b = nullptr;
  CHECK_OK(symmem_buffer_alloc(*be_out, bytes, &b));
  allocated->fetch_add(1);
  while (allocated->load() < world) usleep(100);
  std::vector<int> pes(world);
  for (int r = 0; r < world; ++r) pes[r] = r;
  CHECK_OK(symmem_buffer_import_pes(b, rank, world, pes.data()));
  return b;
}

// --trace: where a slow loop's time goes. Per size, `loops` loops of the out-of-place one-shot, each
// call followed by an event, so that every call's GPU time is known (an event between two launches
// also ends the programmatic overlap of the second with the first). Each rank prints the loops that
// had a call over 50 us: how many calls, the first and last such call, the slowest, and their sum.
static void trace_one_shot(symmem_buffer* b, cudaStream_t s, void* out, int rank, int world, int dtype,
                           const std::vector<uint64_t>& sizes, int loops, int timeout) {
  const size_t es = symmem_dtype_size(symmem_dtype(dtype));
  for (uint64_t bytes : sizes) {
    const uint64_t count = bytes / es;
    const int iters = iters_for(bytes);
    std::vector<cudaEvent_t> ev(iters + 1);
    for (auto& e : ev) CUDA_OK(cudaEventCreate(&e));
    int slow_loops = 0;
    double best_loop = 0;
    for (int loop = 0; loop < loops; ++loop) {
      CHECK_OK(symmem_stream_synchronize(b, s));
      CHECK_OK(symmem_barrier(b, 0, timeout));
      CUDA_OK(cudaEventRecord(ev[0], s));
      for (int i = 0; i < iters; ++i) {
        CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, symmem_dtype(dtype), SYMMEM_SUM, count, out, s,
                                   timeout));
        CUDA_OK(cudaEventRecord(ev[i + 1], s));
      }
      CUDA_OK(cudaEventSynchronize(ev[iters]));
      int n_slow = 0, first = -1, last = -1, worst_at = 0;
      double worst = 0, slow_sum = 0, total = 0;
      for (int i = 0; i < iters; ++i) {
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
        const double us = ms * 1000.0;
        total += us;
        if (us > worst) worst = us, worst_at = i;
        if (us > 50) {
          ++n_slow;
          slow_sum += us;
          if (first < 0) first = i;
          last = i;
        }
      }
      if (best_loop == 0 || total < best_loop) best_loop = total;
      if (n_slow > 0) {
        ++slow_loops;
        std::printf("trace rank %d/%d %llu bytes loop %d: %d of %d calls over 50 us (calls %d..%d), slowest "
                    "%.1f us (call %d), those %.0f us of the loop's %.0f\n",
                    rank, world, (unsigned long long)bytes, loop, n_slow, iters, first, last, worst, worst_at,
                    slow_sum, total);
      }
    }
    std::printf("trace rank %d/%d %llu bytes: %d of %d loops had a call over 50 us; fastest loop %.2f us per "
                "call\n", rank, world, (unsigned long long)bytes, slow_loops, loops, best_loop / iters);
    std::fflush(stdout);
    for (auto& e : ev) CUDA_OK(cudaEventDestroy(e));
  }
}

int main(int argc, char** argv) {
  int world = 0;
  bool nvshmem = false;
  uint64_t max_bytes = 256ull << 20;
  uint64_t min_bytes = 4096;
  int profile_ranks = 0;  // 0: none, 1: rank 0 (--profile-one), 2: all (--profile-all)
  int profile_iters = 1;
  int profile_delay_ms = 0;
  int trace_loops = 0;  // --trace N: N loops per size of the out-of-place one-shot, an event per call
  int dtype = SYMMEM_BFLOAT16;
  std::string streams = "both";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--world" && i + 1 < argc) world = std::atoi(argv[++i]);
    else if (a == "--max-bytes" && i + 1 < argc) max_bytes = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--min-bytes" && i + 1 < argc) min_bytes = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--profile-one") profile_ranks = 1;
    else if (a == "--profile-all") profile_ranks = 2;
    else if (a == "--profile-iters" && i + 1 < argc && std::atoi(argv[i + 1]) > 0) profile_iters = std::atoi(argv[++i]);
    else if (a == "--profile-delay-ms" && i + 1 < argc && std::atoi(argv[i + 1]) >= 0)
      profile_delay_ms = std::atoi(argv[++i]);
    else if (a == "--trace" && i + 1 < argc && std::atoi(argv[i + 1]) > 0) trace_loops = std::atoi(argv[++i]);
    else if (a == "--dtype" && i + 1 < argc) {
      std::string d = argv[++i];
      dtype = d == "fp32" ? SYMMEM_FLOAT32 : d == "fp16" ? SYMMEM_FLOAT16 : SYMMEM_BFLOAT16;
    } else if (a == "--backend" && i + 1 < argc) {
      std::string be = argv[++i];
      if (be != "cuda" && be != "nvshmem") {
        std::fprintf(stderr, "--backend %s: cuda or nvshmem\n", be.c_str());
        return 2;
      }
      nvshmem = be == "nvshmem";
    } else if (a == "--streams" && i + 1 < argc && (std::string(argv[i + 1]) == "both" ||
                                                    std::string(argv[i + 1]) == "own" ||
                                                    std::string(argv[i + 1]) == "sym")) {
      streams = argv[++i];
    } else {
      std::fprintf(stderr, "usage: symmem_bench [--world N] [--min-bytes B] [--max-bytes B] [--dtype bf16|fp16|fp32] "
                           "[--backend cuda|nvshmem] [--streams both|own|sym] [--profile-one | --profile-all] "
                           "[--profile-iters N>0] [--profile-delay-ms MS>=0] [--trace LOOPS>0]\n");
      return 2;
    }
  }
  const int ngpu = require_gpus("symmem_bench", 1);
  if (world == 0) world = std::min(ngpu, 4);
  if (world < 1 || world > 8 || world > ngpu) {
    std::fprintf(stderr, "--world %d: need 1..8 and at most %d (GPUs)\n", world, ngpu);
    return 2;
  }
  std::vector<uint64_t> sizes;
  for (uint64_t s = 4096; s <= max_bytes; s *= 2)
    if (s >= min_bytes) sizes.push_back(s);
  Shared* sh = static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                                         MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  std::memset(sh, 0, sizeof *sh);
  const size_t es = symmem_dtype_size(symmem_dtype(dtype));
  const int timeout = 30000;
  int uid_pipe[2];
  CHECK(pipe(uid_pipe) == 0);
  auto* allocated = static_cast<std::atomic<int>*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                                                        MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  allocated->store(0);

  bool ok = run_ranks(world, 600, [&](int rank) {
    symmem_backend* be = nullptr;
    // Room after the data for the all-to-all-v's splits (world + 1 int64 at byte `bytes`).
    const uint64_t buffer_bytes = max_bytes + 4096;
    symmem_buffer* b = nvshmem ? make_nvshmem_buffer(rank, world, rank, buffer_bytes, uid_pipe, allocated, &be)
                               : make_cuda_buffer("bench", rank, world, rank, buffer_bytes, &be);
    int64_t* out_splits = nullptr;
    CUDA_OK(cudaMalloc(&out_splits, 16 * world));
    cudaStream_t s;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void* sym_stream = nullptr;
    CHECK_OK(symmem_stream_create(be, &sym_stream));
    if (streams == "sym") s = static_cast<cudaStream_t>(sym_stream);
    const bool both = streams == "both";
    void* out = nullptr;
    CUDA_OK(cudaMalloc(&out, max_bytes));
    // Non-zero data (bf16 1.0 pairs / fp32 ~1.0): never time on zeros.
    CHECK_OK(symmem_memset32(b, SYMMEM_RANK_SELF, 0, 0x3f803f80u, max_bytes / 4, s));
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    if (trace_loops > 0) {
      trace_one_shot(b, s, out, rank, world, dtype, sizes, trace_loops, timeout);
      CUDA_OK(cudaFree(out));
      CHECK_OK(symmem_buffer_free(b));
      CHECK_OK(symmem_backend_close(be));
      return 0;
    }
    bool ce_refused = false;  // the buffer has no copy-engine scratch
    for (size_t si = 0; si < sizes.size(); ++si) {
      const uint64_t bytes = sizes[si], count = bytes / es;
      const int iters = iters_for(bytes);
      symmem_algo chosen;
      CHECK_OK(symmem_all_reduce_auto_algo(b, symmem_dtype(dtype), count, 0, &chosen));
      if (rank == 0) sh->auto_algo[si] = chosen;
      CHECK_OK(symmem_all_reduce_auto_algo(b, symmem_dtype(dtype), count, 1, &chosen));
      if (rank == 0) sh->auto_algo_ip[si] = chosen;
      for (int v = 0; v < kVariants; ++v) {
        if (v == kOneIp && bytes > symmem_one_shot_in_place_max_bytes(b)) continue;
        if (v == kCeIp && (world != 2 || nvshmem || ce_refused)) continue;
        if (v == kA2av) {  // equal splits, a world-th of the size to each rank
          std::vector<int64_t> row(world + 1, int64_t(count / world));
          CUDA_OK(cudaMemcpy(static_cast<char*>(symmem_buffer_ptr(b, rank)) + bytes, row.data(), 8 * (world + 1),
                             cudaMemcpyHostToDevice));
        }
        auto op_on = [&](void* s) {
          switch (v) {
            case kOne: return symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, symmem_dtype(dtype), SYMMEM_SUM, count, out, s, timeout);
            case kTwo: return symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT, symmem_dtype(dtype), SYMMEM_SUM, count, out, s, timeout);
            case kOneIp: return symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, symmem_dtype(dtype), SYMMEM_SUM, count, nullptr, s, timeout);
            case kAutoIp: return symmem_all_reduce(b, SYMMEM_ALGO_AUTO, symmem_dtype(dtype), SYMMEM_SUM, count, nullptr, s, timeout);
            case kTwoIp: return symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT, symmem_dtype(dtype), SYMMEM_SUM, count, nullptr, s, timeout);
            case kAuto: return symmem_all_reduce(b, SYMMEM_ALGO_AUTO, symmem_dtype(dtype), SYMMEM_SUM, count, out, s, timeout);
            case kAg: return symmem_all_gather(b, symmem_dtype(dtype), count / world, out, s, timeout);
            case kCeIp: return symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT_CE, symmem_dtype(dtype), SYMMEM_SUM, count, nullptr, s, timeout);
            case kBcast: return symmem_broadcast(b, symmem_dtype(dtype), count, 0, out, s, timeout);
            case kA2a: return symmem_all_to_all(b, symmem_dtype(dtype), count / world, out, s, timeout);
            case kA2av: return symmem_all_to_all_v(b, symmem_dtype(dtype), bytes, out, count, out_splits, s, timeout);
            default: return symmem_reduce_scatter(b, symmem_dtype(dtype), SYMMEM_SUM, count / world, out, s, timeout);
          }
        };
        auto op = [&]() { return op_on(s); };
        // Refused on every rank alike, on the host, before anything is launched.
        const symmem_status first = op();
        if (v == kCeIp && first == SYMMEM_ERR_UNSUPPORTED) {
          ce_refused = true;
          continue;
        }
        CHECK_OK(first);
        for (int i = 0; i < 4; ++i) CHECK_OK(op());
        CHECK_OK(symmem_stream_synchronize(b, s));
        CHECK_OK(symmem_barrier(b, 0, timeout));
        CUDA_OK(cudaEventRecord(e0, s));
        const auto q0 = std::chrono::steady_clock::now();
        auto last = q0;
        double longest = 0;
        int longest_at = 0;
        for (int i = 0; i < iters; ++i) {
          CHECK_OK(op());
          const auto now = std::chrono::steady_clock::now();
          const double took = std::chrono::duration<double, std::micro>(now - last).count();
          if (took > longest) longest = took, longest_at = i;
          last = now;
        }
        sh->host_us[rank][si][v] =
            std::chrono::duration<double, std::micro>(last - q0).count() / iters;
        sh->longest_call_us[rank][si][v] = longest;
        sh->longest_call_at[rank][si][v] = longest_at;
        CUDA_OK(cudaEventRecord(e1, s));
        CHECK_OK(symmem_stream_synchronize(b, s));
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
        sh->us[rank][si][v] = ms * 1000.0 / iters;
        if (profile_ranks > 0 && v == kAutoIp) {
          // More in-place AUTOs at this size between cudaProfilerStart and Stop (one by default: the
          // kernel `ncu --profile-from-start off` measures), on rank 0 or on every rank.
          const bool profiled = profile_ranks == 2 || rank == 0;
          CHECK_OK(symmem_barrier(b, 0, timeout));
          if (profiled && profile_delay_ms > 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(profile_delay_ms));
          if (profiled) CUDA_OK(cudaProfilerStart());
          for (int i = 0; i < profile_iters; ++i) CHECK_OK(op());
          CHECK_OK(symmem_stream_synchronize(b, s));
          if (profiled) CUDA_OK(cudaProfilerStop());
        }
        if (!both || (v != kOne && v != kTwo && v != kAuto)) continue;
        // The host column again on a symmem stream (the GPU time is the one above).
        CHECK_OK(symmem_barrier(b, 0, timeout));
        const auto p0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i) CHECK_OK(op_on(sym_stream));
        sh->host_sym_us[rank][si][v] =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - p0).count() / iters;
        CHECK_OK(symmem_stream_synchronize(b, sym_stream));
      }
    }
    // Barrier latency: back-to-back barrier_on_stream.
    for (int i = 0; i < 100; ++i) CHECK_OK(symmem_barrier_on_stream(b, 1, s, timeout));
    CHECK_OK(symmem_stream_synchronize(b, s));
    CHECK_OK(symmem_barrier(b, 0, timeout));
    const int n = 5000;
    CUDA_OK(cudaEventRecord(e0, s));
    const auto h0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) CHECK_OK(symmem_barrier_on_stream(b, 1, s, timeout));
    const auto h1 = std::chrono::steady_clock::now();
    sh->barrier_host_us[rank] = std::chrono::duration<double, std::micro>(h1 - h0).count() / n;
    CUDA_OK(cudaEventRecord(e1, s));
    CHECK_OK(symmem_stream_synchronize(b, s));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    sh->barrier_us[rank] = ms * 1000.0 / n;
    CHECK_OK(symmem_barrier(b, 0, timeout));
    const auto g0 = std::chrono::steady_clock::now();
    for (int i = 0; both && i < n; ++i) CHECK_OK(symmem_barrier_on_stream(b, 1, sym_stream, timeout));
    sh->barrier_host_sym_us[rank] =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - g0).count() / n;
    CHECK_OK(symmem_stream_synchronize(b, sym_stream));
    CHECK_OK(symmem_barrier(b, 0, timeout));
    CHECK_OK(symmem_stream_destroy(be, sym_stream));
    CUDA_OK(cudaFree(out));
    CUDA_OK(cudaFree(out_splits));
    CHECK_OK(symmem_buffer_free(b));
    CHECK_OK(symmem_backend_close(be));
    if (nvshmem && std::getenv("SYMMEM_BENCH_NVSHMEM_INIT_ONLY") == nullptr) CHECK_OK(symmem_nvshmem_finalize());
    return 0;
  });
  if (!ok) {
    std::fprintf(stderr, "symmem_bench: a rank failed\n");
    return 1;
  }
  if (trace_loops > 0) return 0;  // each rank printed its own trace
  const char* dn = dtype == SYMMEM_FLOAT32 ? "fp32" : dtype == SYMMEM_FLOAT16 ? "fp16" : "bf16";
  std::printf("symmem_bench: %s backend, world %d, %s sum, time per op (us, max over ranks), busbw GB/s\n",
              nvshmem ? "nvshmem" : "cuda", world, dn);
  // A loop's time per op: its slowest rank's (0 where the variant did not run).
  auto slowest_rank_us = [&](size_t si, int v) {
    double t = 0;
    for (int r = 0; r < world; ++r) t = std::max(t, sh->us[r][si][v]);
    return t;
  };
  std::printf("%10s", "bytes");
  for (int v = 0; v < kVariants; ++v) std::printf(" %14s", kVariantName[v]);
  std::printf(" %6s %6s %10s\n", "auto=", "ip=", "busbw(best)");
  for (size_t si = 0; si < sizes.size(); ++si) {
    std::printf("%10llu", (unsigned long long)sizes[si]);
    double t[kVariants];
    for (int v = 0; v < kVariants; ++v) {
      t[v] = slowest_rank_us(si, v);
      if (t[v] > 0) std::printf(" %14.2f", t[v]);
      else std::printf(" %14s", "-");
    }
    double best = t[kAuto];
    for (int v : {kOne, kOneIp, kTwo, kTwoIp, kAutoIp, kCeIp})
      if (t[v] > 0) best = std::min(best, t[v]);
    // World 1 moves no data between ranks: its busbw is 0 by the formula; shown is the copy's rate.
    const double busbw = world > 1 ? 2.0 * (world - 1) / world * sizes[si] / (best * 1e-6) / 1e9
                                   : sizes[si] / (best * 1e-6) / 1e9;
    std::printf(" %6s %6s %10.1f\n", algo_text(sh->auto_algo[si]), algo_text(sh->auto_algo_ip[si]), busbw);
  }
  // A loop far slower than the size's best variant (as every waiting thread's read of the abort word
  // once made loops at 4-10 us per op run at 40-1500): each rank's GPU and host time per op, and its
  // slowest single call.
  // A host whose calls were all quick did not stall; a slow call may be the host's own stall or a
  // launch queue that filled behind a stalled GPU (then late in the loop, after the queue's depth).
  for (size_t si = 0; si < sizes.size(); ++si) {
    double best = 0;
    for (int v = 0; v < kVariants; ++v) {
      const double t = slowest_rank_us(si, v);
      if (t > 0 && (best == 0 || t < best)) best = t;
    }
    for (int v = 0; v < kVariants; ++v) {
      const double t = slowest_rank_us(si, v);
      if (best == 0 || t < 4 * best + 20) continue;
      std::printf("slow loop: %llu bytes %s, %.2f us per op against the size's best %.2f:",
                  (unsigned long long)sizes[si], kVariantName[v], t, best);
      for (int r = 0; r < world; ++r)
        std::printf(" | rank %d gpu %.2f host %.2f slowest call %.1f (call %d of %d)", r,
                    sh->us[r][si][v], sh->host_us[r][si][v], sh->longest_call_us[r][si][v],
                    sh->longest_call_at[r][si][v], iters_for(sizes[si]));
      std::printf("\n");
    }
  }
  // Host time per call while enqueuing: when it is close to the time per op above, the GPU waited for
  // launches (launch-bound) and the figure is the CPU's, not the kernel's.
  std::printf("host enqueue per call (us, max over ranks): one-shot, two-shot, auto on the program's "
              "cudaStreamCreate stream | the same on a symmem_stream_create stream\n");
  for (size_t si = 0; si < sizes.size() && sizes[si] <= (8u << 20); ++si) {
    double h[3] = {0, 0, 0}, hs[3] = {0, 0, 0};
    const int vs[3] = {kOne, kTwo, kAuto};
    for (int k = 0; k < 3; ++k)
      for (int r = 0; r < world; ++r) {
        h[k] = std::max(h[k], sh->host_us[r][si][vs[k]]);
        hs[k] = std::max(hs[k], sh->host_sym_us[r][si][vs[k]]);
      }
    std::printf("  host %10llu %8.2f %8.2f %8.2f | %8.2f %8.2f %8.2f\n", (unsigned long long)sizes[si],
                h[0], h[1], h[2], hs[0], hs[1], hs[2]);
  }
  double bar = 0, bar_host = 0, bar_host_sym = 0;
  for (int r = 0; r < world; ++r) {
    bar = std::max(bar, sh->barrier_us[r]);
    bar_host = std::max(bar_host, sh->barrier_host_us[r]);
    bar_host_sym = std::max(bar_host_sym, sh->barrier_host_sym_us[r]);
  }
  std::printf("barrier_on_stream: %.2f us (max over ranks); host enqueue %.2f us per call | %.2f on "
              "a symmem stream\n", bar, bar_host, bar_host_sym);
  // The kernel tuning in effect (cuda_kernels.cu, SYMMEM_CUDA_*).
  for (const char* k : {"SYMMEM_CUDA_PDL", "SYMMEM_CUDA_PUSH_MAX_BYTES", "SYMMEM_CUDA_MIN_THREADS",
                        "SYMMEM_CUDA_UNROLL", "SYMMEM_CUDA_TWO_SHOT_BLOCKS", "SYMMEM_CUDA_THREADS",
                        "SYMMEM_CUDA_LL_MAX_BYTES", "SYMMEM_CUDA_CE_SLOT_BYTES",
                        "SYMMEM_CUDA_TWO_SHOT_CLAIM_ITEMS", "SYMMEM_CUDA_LL128_MAX_BYTES"})
    if (const char* v = std::getenv(k)) std::printf("  %s=%s\n", k, v);
  return 0;
}
