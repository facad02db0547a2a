// Not a test: the two floors our collectives are held against, measured on the machine itself
// (scripts/gpu/run-probe.sh):
//   launch  host cost of one kernel launch, nothing else: the runtime's <<<>>> and the driver's
//           cuLaunchKernelEx (found through cudaGetDriverEntryPoint, so nothing links libcuda), with
//           and without the programmatic-stream-serialization attribute symmem's launches carry,
//           with a 4-byte and a 256-byte parameter block (symmem's CollArgs is about 200 bytes).
//           Then launches shaped more like a collective's (a grid of one 512-thread block per SM, a
//           kernel with a stack frame) and launches queued behind a kernel still running, to see
//           whether any of that costs the host more than the empty kernel's launch.
//           Per variant: 30 batches of 200 back-to-back launches on a non-blocking stream, each
//           batch timed by the steady clock around the launches alone, then synchronized; the best
//           and the median batch, µs per launch.
//   link    NVLink between GPU 0 and GPU 1 (peer access enabled), 256 MiB per direction: the copy
//           engines (cudaMemcpyPeerAsync) one way and both ways at once, and the SMs storing into
//           the peer (push) or loading from it (pull), both ways at once, every SM busy. Best of 5,
//           GB/s per direction (10^9 bytes).
//   ce      what the copy engines would give an all-reduce: a 256 MiB bf16 in-place two-shot between
//           GPU 0 and 1 whose data only the copy engines move (each GPU pushes the half its peer
//           reduces into the peer's scratch, reduces its own half with the SMs, pushes the result
//           back), in 4..64 chunks pipelined over three streams per GPU, ordered by events (one
//           process: no cross-process signalling, which a product would need). Checked (every
//           element 1 + 2 = 3 after the first run), then best of 5: bus bandwidth (GB/s).
//   ce-signals  the same two-shot ordered by flags as between processes (set by 4-byte copies or by
//           cuStreamWriteValue32, waited for by one-thread kernels or by the add kernel itself; 2
//           scratch slots or one per chunk), still in one process: what each way of signalling
//           costs against `ce`.
//   tma     whether the SMs store into the peer faster through the Tensor Memory Accelerator
//           (cp.async.bulk: a tile of the local buffer into shared memory, then the tile into the
//           peer as one bulk store) than through 16-byte stores from every thread: 256 MiB both
//           ways at once, tiles of 4..32 KiB, 1..4 tiles in flight per block, beside the SM push and
//           the copy engines of `link` measured in the same run, and the copy engines and SM
//           stores sharing the 256 MiB at once, GB/s per direction. Checked: the peer's area holds
//           the sender's bytes after a bulk-store run.
// Output: "LAUNCH <variant> <best_us> <median_us>", "LINK <variant> <GB/s per direction>",
// "CE two-shot <chunks> chunks <GB/s bus> <us>" and "CE-SIG two-shot ..." lines.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#define CK(expr)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (expr);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

namespace {

struct Params256 {
  unsigned long long v[32];
};

__global__ void empty_small(int) {}
__global__ void empty_big(Params256) {}
// As a collective's grid is shaped (512 threads, two blocks per SM), and with a stack frame of its
// own, as kernels that spill have: whether either changes what a launch costs the host.
__global__ void __launch_bounds__(512, 2) empty_shaped(Params256) {}
__global__ void __launch_bounds__(512, 2) with_stack(Params256 p) {
  unsigned long long frame[64];
  for (int i = 0; i < 64; ++i) frame[i] = p.v[i & 31] + i;
  // Never true (v[31] is 0 in the probe), but the compiler cannot know: the frame stays.
  if (p.v[31] == 1) reinterpret_cast<unsigned long long*>(p.v[30])[threadIdx.x] = frame[p.v[29] & 63];
}
// Keeps the stream busy for `ns` nanoseconds, so that the launches after it queue up behind it
// (as a collective's launches queue behind the collective before): one thread spinning.
__global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// behind_busy: each batch is enqueued behind a kernel that keeps the stream busy for longer than the
// batch takes to enqueue, so every launch of it finds the stream's previous work still running.
template <class Launch>
void time_launches(const char* name, cudaStream_t s, Launch launch, bool behind_busy = false) {
  constexpr int kBatches = 30, kPerBatch = 200;
  for (int i = 0; i < kPerBatch; ++i) launch();  // warm-up
  CK(cudaStreamSynchronize(s));
  std::vector<double> per;
  for (int b = 0; b < kBatches; ++b) {
    if (behind_busy) spin<<<1, 1, 0, s>>>(5000000ull);
    const double t0 = now_us();
    for (int i = 0; i < kPerBatch; ++i) launch();
    per.push_back((now_us() - t0) / kPerBatch);
    CK(cudaStreamSynchronize(s));
  }
  std::sort(per.begin(), per.end());
  std::printf("LAUNCH %-32s %.3f %.3f\n", name, per.front(), per[per.size() / 2]);
}

void probe_launch() {
  CK(cudaSetDevice(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUfunction fs = nullptr, fb = nullptr;
  CK(cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&fs), reinterpret_cast<const void*>(empty_small)));
  CK(cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&fb), reinterpret_cast<const void*>(empty_big)));
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuLaunchKernelEx", &entry, 12000, cudaEnableDefault, &q));
  auto launch_ex = reinterpret_cast<decltype(&cuLaunchKernelEx)>(entry);
  int small = 1;
  Params256 big{};
  time_launches("runtime <<<>>> 4 B", s, [&] { empty_small<<<1, 32, 0, s>>>(small); });
  time_launches("runtime <<<>>> 256 B", s, [&] { empty_big<<<1, 32, 0, s>>>(big); });
  CUfunction fshaped = nullptr, fstack = nullptr;
  CK(cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&fshaped), reinterpret_cast<const void*>(empty_shaped)));
  CK(cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&fstack), reinterpret_cast<const void*>(with_stack)));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  void* ps[] = {&small};
  void* pb[] = {&big};
  struct Variant {
    const char* name;
    CUfunction f;
    void** params;
    unsigned blocks, threads;
    int pdl;
    bool busy;
  };
  const Variant variants[] = {
      {"cuLaunchKernelEx 4 B", fs, ps, 1, 32, 0, false},
      {"cuLaunchKernelEx 256 B", fb, pb, 1, 32, 0, false},
      {"cuLaunchKernelEx 4 B + PDL", fs, ps, 1, 32, 1, false},
      {"cuLaunchKernelEx 256 B + PDL", fb, pb, 1, 32, 1, false},
      // Closer to a collective's launch.
      {"256 B + PDL, grid SMs x 512", fshaped, pb, unsigned(sms), 512, 1, false},
      {"256 B + PDL, SMs x 512, stack", fstack, pb, unsigned(sms), 512, 1, false},
      {"256 B + PDL, behind a busy stream", fb, pb, 1, 32, 1, true},
      {"256 B, behind a busy stream", fb, pb, 1, 32, 0, true},
      {"256 B + PDL, SMs x 512, busy", fshaped, pb, unsigned(sms), 512, 1, true},
  };
  for (const Variant& v : variants) {
    CUlaunchAttribute attr[1];
    attr[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr[0].value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg = {};
    cfg.gridDimX = v.blocks;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = v.threads;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = reinterpret_cast<CUstream>(s);
    cfg.attrs = attr;
    cfg.numAttrs = v.pdl;
    time_launches(v.name, s, [&] {
      if (launch_ex(&cfg, v.f, v.params, nullptr) != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuLaunchKernelEx failed (%s)\n", v.name);
        std::exit(1);
      }
    }, v.busy);
  }
  CK(cudaStreamDestroy(s));
}

__global__ void push_kernel(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

struct Side {
  int dev;
  cudaStream_t s;
  int4 *local, *other;  // 256 MiB each
  cudaEvent_t a, b;
  int sms;
};

// Runs `go` on both sides (or side 0 only), best of 5, GB/s per direction.
template <class Go>
double best_gbps(Side* sides, int nsides, size_t bytes, Go go) {
  double best = 0;
  for (int rep = 0; rep < 6; ++rep) {
    for (int i = 0; i < nsides; ++i) {
      CK(cudaSetDevice(sides[i].dev));
      CK(cudaDeviceSynchronize());
    }
    for (int i = 0; i < nsides; ++i) {
      CK(cudaSetDevice(sides[i].dev));
      CK(cudaEventRecord(sides[i].a, sides[i].s));
      go(sides[i]);
      CK(cudaEventRecord(sides[i].b, sides[i].s));
    }
    double slowest_ms = 0;
    for (int i = 0; i < nsides; ++i) {
      CK(cudaSetDevice(sides[i].dev));
      CK(cudaEventSynchronize(sides[i].b));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, sides[i].a, sides[i].b));
      slowest_ms = std::max(slowest_ms, double(ms));
    }
    if (rep > 0) best = std::max(best, bytes / (slowest_ms * 1e6));  // rep 0: warm-up
  }
  return best;
}

// Peer access from GPU g to the other one: without it a peer copy is staged through the host
// (about 30 GB/s).
void enable_peer_access(int g) {
  const cudaError_t peer = cudaDeviceEnablePeerAccess(1 - g, 0);
  if (peer == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
  else CK(peer);
}

// GPU 0 and 1 with peer access both ways, a stream and two timing events each, `bytes` of their own
// (filled with GPU + 1) and `bytes` more that the peer writes or reads (`other`); false, with a
// line that says why, where the machine has no such pair.
bool open_link_sides(Side sides[2], size_t bytes) {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 2) {
    std::printf("LINK skipped: %d GPU\n", n);
    return false;
  }
  int4* area[2];
  for (int i = 0; i < 2; ++i) {
    Side& d = sides[i];
    d.dev = i;
    CK(cudaSetDevice(i));
    int can = 0;
    CK(cudaDeviceCanAccessPeer(&can, i, 1 - i));
    if (!can) {
      std::printf("LINK skipped: GPU %d cannot access GPU %d\n", i, 1 - i);
      return false;
    }
    enable_peer_access(i);
    CK(cudaStreamCreateWithFlags(&d.s, cudaStreamNonBlocking));
    CK(cudaMalloc(&d.local, bytes));
    CK(cudaMemset(d.local, i + 1, bytes));
    CK(cudaMalloc(&area[i], bytes));
    CK(cudaEventCreate(&d.a));
    CK(cudaEventCreate(&d.b));
    CK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, i));
  }
  sides[0].other = area[1];
  sides[1].other = area[0];
  return true;
}

void probe_link() {
  constexpr size_t kBytes = size_t(256) << 20;
  Side sides[2];
  if (!open_link_sides(sides, kBytes)) return;
  // The local copy lands in the GPU's own second area (the one its peer writes in the runs above).
  int4* const own_area[2] = {sides[1].other, sides[0].other};
  const size_t n4 = kBytes / sizeof(int4);
  auto ce = [&](Side& d) { CK(cudaMemcpyPeerAsync(d.other, 1 - d.dev, d.local, d.dev, kBytes, d.s)); };
  std::printf("LINK %-32s %.1f\n", "copy engine, one way", best_gbps(sides, 1, kBytes, ce));
  std::printf("LINK %-32s %.1f\n", "copy engine, both ways", best_gbps(sides, 2, kBytes, ce));
  for (int blocks_per_sm : {1, 2, 4}) {
    for (int threads : {512, 1024}) {
      auto push = [&](Side& d) { push_kernel<<<d.sms * blocks_per_sm, threads, 0, d.s>>>(d.local, d.other, n4); };
      auto pull = [&](Side& d) { push_kernel<<<d.sms * blocks_per_sm, threads, 0, d.s>>>(d.other, d.local, n4); };
      char name[64];
      std::snprintf(name, sizeof name, "SM push, both ways, %dx%d", blocks_per_sm, threads);
      std::printf("LINK %-32s %.1f\n", name, best_gbps(sides, 2, kBytes, push));
      std::snprintf(name, sizeof name, "SM pull, both ways, %dx%d", blocks_per_sm, threads);
      std::printf("LINK %-32s %.1f\n", name, best_gbps(sides, 2, kBytes, pull));
    }
  }
  auto local_copy = [&](Side& d) {
    push_kernel<<<d.sms * 2, 1024, 0, d.s>>>(d.local, own_area[d.dev], n4);
  };
  std::printf("LINK %-32s %.1f\n", "SM local copy (HBM, read+write)", best_gbps(sides, 1, kBytes, local_copy));
  std::fflush(stdout);
}


// ---- tma: bulk stores into the peer ---------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// One thread per block moves the block's tiles: tile t (t = block, block + grid, ...) goes from
// src into shared buffer k % nb by a bulk load (completion counted on that buffer's mbarrier), then
// from there into dst by a bulk store. A buffer is loaded again once its store has read it.
__global__ void tma_push_kernel(const char* __restrict__ src, char* __restrict__ dst, size_t bytes,
                                uint32_t tile, int nb) {
  extern __shared__ __align__(128) char tiles[];
  __shared__ __align__(8) uint64_t full[8];
  if (threadIdx.x != 0) return;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const size_t ntiles = bytes / tile;
  for (int b = 0; b < nb; ++b)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[b])) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  auto load = [&](int b, size_t t) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&full[b])), "r"(tile)
                 : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            smem_addr(tiles + size_t(b) * tile)),
        "l"(src + t * tile), "r"(tile), "r"(smem_addr(&full[b]))
        : "memory");
  };
  for (int b = 0; b < nb; ++b) {
    const size_t t = blockIdx.x + size_t(b) * gridDim.x;
    if (t < ntiles) load(b, t);
  }
  for (size_t k = 0;; ++k) {
    const size_t t = blockIdx.x + k * gridDim.x;
    if (t >= ntiles) break;
    const int b = static_cast<int>(k % nb);
    const uint32_t parity = static_cast<uint32_t>((k / nb) & 1);
    uint32_t done = 0;
    while (!done)
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
          : "=r"(done)
          : "r"(smem_addr(&full[b])), "r"(parity)
          : "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + t * tile),
                 "r"(smem_addr(tiles + size_t(b) * tile)), "r"(tile)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    const size_t next = t + size_t(nb) * gridDim.x;
    if (next < ntiles) {
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
      load(b, next);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

void probe_tma() {
  constexpr size_t kBytes = size_t(256) << 20;
  constexpr int kSmemPerBlock = 200 * 1024;  // the largest tile buffer a block may ask for
  Side sides[2];
  if (!open_link_sides(sides, kBytes)) return;
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaFuncSetAttribute(tma_push_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemPerBlock));
  }
  // Where each GPU's peer stores: GPU i's second area.
  int4* const area[2] = {sides[1].other, sides[0].other};
  const size_t n4 = kBytes / sizeof(int4);
  auto ce = [&](Side& d) { CK(cudaMemcpyPeerAsync(d.other, 1 - d.dev, d.local, d.dev, kBytes, d.s)); };
  std::printf("LINK %-40s %.1f\n", "copy engine, both ways", best_gbps(sides, 2, kBytes, ce));
  auto push = [&](Side& d) { push_kernel<<<d.sms * 2, 512, 0, d.s>>>(d.local, d.other, n4); };
  std::printf("LINK %-40s %.1f\n", "SM push, both ways, 2x512", best_gbps(sides, 2, kBytes, push));
  for (uint32_t tile : {4096u, 8192u, 16384u, 32768u}) {
    for (int nb : {1, 2, 4}) {
      const size_t smem = size_t(tile) * nb;
      if (smem > kSmemPerBlock) continue;
      for (int bps : {2, 4, 8}) {
        if (smem * bps > 220 * 1024) continue;
        auto go = [&](Side& d) {
          tma_push_kernel<<<d.sms * bps, 32, smem, d.s>>>(reinterpret_cast<const char*>(d.local),
                                                          reinterpret_cast<char*>(d.other), kBytes, tile, nb);
          CK(cudaGetLastError());
        };
        char name[64];
        std::snprintf(name, sizeof name, "TMA push, both ways, %uK x %d, %d/SM", tile / 1024, nb, bps);
        std::printf("LINK %-40s %.1f\n", name, best_gbps(sides, 2, kBytes, go));
        std::fflush(stdout);
      }
    }
  }
  // The copy engines and the SMs at once, each its share of the 256 MiB (the copy on a second
  // stream, forked from and joined into the timed one): whether the link carries more than either.
  cudaStream_t side_stream[2];
  cudaEvent_t fork[2], join[2];
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaStreamCreateWithFlags(&side_stream[i], cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&fork[i], cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join[i], cudaEventDisableTiming));
  }
  for (int ce_eighths : {2, 4, 6}) {
    const size_t ce_bytes = kBytes / 8 * ce_eighths;
    auto both = [&](Side& d) {
      CK(cudaEventRecord(fork[d.dev], d.s));
      CK(cudaStreamWaitEvent(side_stream[d.dev], fork[d.dev]));
      CK(cudaMemcpyPeerAsync(d.other, 1 - d.dev, d.local, d.dev, ce_bytes, side_stream[d.dev]));
      const size_t off4 = ce_bytes / sizeof(int4);
      push_kernel<<<d.sms * 2, 512, 0, d.s>>>(d.local + off4, d.other + off4, n4 - off4);
      CK(cudaEventRecord(join[d.dev], side_stream[d.dev]));
      CK(cudaStreamWaitEvent(d.s, join[d.dev]));
    };
    char name[64];
    std::snprintf(name, sizeof name, "copy engine %d/8 + SM push, both ways", ce_eighths);
    std::printf("LINK %-40s %.1f\n", name, best_gbps(sides, 2, kBytes, both));
    std::fflush(stdout);
  }
  // One more run into cleared areas: GPU 1's then holds GPU 0's bytes (1s) and GPU 0's holds 2s.
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaMemset(area[i], 0, kBytes));
    CK(cudaDeviceSynchronize());
  }
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    tma_push_kernel<<<sides[i].sms * 2, 32, 2 * 16384, sides[i].s>>>(
        reinterpret_cast<const char*>(sides[i].local), reinterpret_cast<char*>(sides[i].other), kBytes, 16384, 2);
    CK(cudaGetLastError());
  }
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaDeviceSynchronize());
    std::vector<unsigned char> h(1 << 20);
    const size_t at[] = {0, kBytes / 2, kBytes - h.size()};
    for (size_t off : at) {
      CK(cudaMemcpy(h.data(), reinterpret_cast<char*>(area[i]) + off, h.size(), cudaMemcpyDeviceToHost));
      for (unsigned char c : h)
        if (c != static_cast<unsigned char>(2 - i)) {
          std::printf("TMA CHECK FAILED: GPU %d's area at %zu holds %d, not %d\n", i, off, c, 2 - i);
          std::exit(1);
        }
    }
  }
  std::printf("TMA CHECK ok\n");
}

__global__ void add_bf16(uint4* __restrict__ dst, const uint4* __restrict__ src, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint4 a = dst[i];
    const uint4 b = src[i];
    __nv_bfloat162* pa = reinterpret_cast<__nv_bfloat162*>(&a);
    const __nv_bfloat162* pb = reinterpret_cast<const __nv_bfloat162*>(&b);
    for (int j = 0; j < 4; ++j) pa[j] = __hadd2(pa[j], pb[j]);
    dst[i] = a;
  }
}

// Holds a stream for `ns` (the GPU's global timer), so that the host enqueues every chunk's work
// before any of it starts: the timing is then the GPUs', not the enqueue's.
__global__ void hold(uint64_t ns) {
  uint64_t t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

__global__ void fill_bf16(__nv_bfloat16* p, size_t n, float v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(v);
}

// A two-shot of GPU 0's 1s and GPU 1's 2s left 3 everywhere, on both GPUs (sampled at both ends and
// in the middle of each half of `bytes`); exits naming `what` where not.
void expect_threes(char* const data[2], size_t bytes, const char* what) {
  const size_t half = bytes / 2;
  for (int g = 0; g < 2; ++g) {
    CK(cudaSetDevice(g));
    for (size_t at : {size_t(0), half / 2, half - 4096, half, half + half / 2, bytes - 4096}) {
      __nv_bfloat16 h[2048];
      CK(cudaMemcpy(h, data[g] + at, sizeof h, cudaMemcpyDeviceToHost));
      for (int i = 0; i < 2048; ++i)
        if (__bfloat162float(h[i]) != 3.0f) {
          std::printf("%s: WRONG on GPU %d at byte %zu: %g\n", what, g, at + 2 * i, __bfloat162float(h[i]));
          std::exit(1);
        }
    }
  }
}

// What both two-shot probes run on: GPU 0 and 1 with peer access, 256 MiB of data and half of that
// as scratch on each, three streams each (pushes, adds, returns) and the events that time one run.
struct TwoShotGpus {
  static constexpr size_t kBytes = size_t(256) << 20, kHalf = kBytes / 2;
  char* data[2];
  char* scratch[2];
  cudaStream_t cp1[2], red[2], cp2[2];
  cudaEvent_t start[2], end[2];
  int sms[2];

  TwoShotGpus() {
    for (int g = 0; g < 2; ++g) {
      CK(cudaSetDevice(g));
      enable_peer_access(g);
      CK(cudaMalloc(&data[g], kBytes));
      CK(cudaMalloc(&scratch[g], kHalf));
      for (cudaStream_t* st : {&cp1[g], &red[g], &cp2[g]}) CK(cudaStreamCreateWithFlags(st, cudaStreamNonBlocking));
      for (cudaEvent_t* e : {&start[g], &end[g]}) CK(cudaEventCreate(e));
      CK(cudaDeviceGetAttribute(&sms[g], cudaDevAttrMultiProcessorCount, g));
    }
  }
  // GPU g's data all g + 1 (bf16), when `fill`; both GPUs idle after.
  void settle(bool fill) {
    for (int g = 0; g < 2; ++g) {
      CK(cudaSetDevice(g));
      if (fill) fill_bf16<<<sms[g] * 4, 512>>>(reinterpret_cast<__nv_bfloat16*>(data[g]), kBytes / 2, g + 1.0f);
      CK(cudaDeviceSynchronize());
    }
  }
  // Holds cp1 for 20 ms (longer than enqueueing up to 64 chunks takes), so that the host enqueues every
  // chunk's work before any of it starts, then starts the clock that the other two streams wait for.
  void start_run() {
    for (int g = 0; g < 2; ++g) {
      CK(cudaSetDevice(g));
      hold<<<1, 1, 0, cp1[g]>>>(20000000);
      CK(cudaEventRecord(start[g], cp1[g]));
      CK(cudaStreamWaitEvent(red[g], start[g]));
      CK(cudaStreamWaitEvent(cp2[g], start[g]));
    }
  }
  // Once each GPU has recorded `end`: the slower GPU's time from start to end, µs.
  double slowest_us() {
    double us = 0;
    for (int g = 0; g < 2; ++g) {
      CK(cudaSetDevice(g));
      CK(cudaDeviceSynchronize());
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, start[g], end[g]));
      us = std::max(us, ms * 1000.0);
    }
    return us;
  }
};

void probe_ce_two_shot() {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 2) return;
  TwoShotGpus gpus;
  constexpr size_t kBytes = TwoShotGpus::kBytes, kHalf = TwoShotGpus::kHalf;
  for (int chunks : {4, 8, 16, 32, 64}) {
    const size_t c = kHalf / chunks;
    std::vector<cudaEvent_t> pushed[2], reduced[2];
    for (int g = 0; g < 2; ++g) {
      CK(cudaSetDevice(g));
      pushed[g].resize(chunks);
      reduced[g].resize(chunks);
      for (int k = 0; k < chunks; ++k) {
        CK(cudaEventCreateWithFlags(&pushed[g][k], cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&reduced[g][k], cudaEventDisableTiming));
      }
    }
    double best_us = 1e30;
    for (int rep = 0; rep < 6; ++rep) {
      gpus.settle(rep == 0);
      gpus.start_run();
      for (int k = 0; k < chunks; ++k) {
        for (int g = 0; g < 2; ++g) {  // the half the peer reduces, chunk k, into the peer's scratch
          CK(cudaSetDevice(g));
          CK(cudaMemcpyPeerAsync(gpus.scratch[1 - g] + k * c, 1 - g, gpus.data[g] + (1 - g) * kHalf + k * c, g, c, gpus.cp1[g]));
          CK(cudaEventRecord(pushed[g][k], gpus.cp1[g]));
        }
        for (int g = 0; g < 2; ++g) {  // own half += what the peer pushed; then the result to the peer
          CK(cudaSetDevice(g));
          CK(cudaStreamWaitEvent(gpus.red[g], pushed[1 - g][k]));
          add_bf16<<<gpus.sms[g], 512, 0, gpus.red[g]>>>(reinterpret_cast<uint4*>(gpus.data[g] + g * kHalf + k * c),
                                              reinterpret_cast<const uint4*>(gpus.scratch[g] + k * c), c / sizeof(uint4));
          CK(cudaEventRecord(reduced[g][k], gpus.red[g]));
          CK(cudaStreamWaitEvent(gpus.cp2[g], reduced[g][k]));
          CK(cudaMemcpyPeerAsync(gpus.data[1 - g] + g * kHalf + k * c, 1 - g, gpus.data[g] + g * kHalf + k * c, g, c, gpus.cp2[g]));
        }
      }
      for (int g = 0; g < 2; ++g) {
        CK(cudaSetDevice(g));
        CK(cudaStreamWaitEvent(gpus.cp2[g], pushed[g][chunks - 1]));
        CK(cudaEventRecord(gpus.end[g], gpus.cp2[g]));
      }
      const double us = gpus.slowest_us();
      if (rep == 0) {
        char what[64];
        std::snprintf(what, sizeof what, "CE two-shot %d chunks", chunks);
        expect_threes(gpus.data, kBytes, what);
      } else {
        best_us = std::min(best_us, us);
      }
    }
    std::printf("CE two-shot %2d chunks %.1f %.1f\n", chunks, kBytes / (best_us * 1e3), best_us);
    std::fflush(stdout);
    for (int g = 0; g < 2; ++g)
      for (int k = 0; k < chunks; ++k) {
        CK(cudaEventDestroy(pushed[g][k]));
        CK(cudaEventDestroy(reduced[g][k]));
      }
  }
}

// ---- the same two-shot with the product's signalling, in one process ----------------------------
// What `ce` leaves out, one piece at a time: cross-GPU ordering by flags instead of events, one flag
// per chunk and kind, set to 1 by the sender and reset to 0 by the one-thread kernel that waits for
// it (before each add, and before a push that reuses a scratch slot); the add's last block sets the
// peer's "consumed" flag. A data copy's flag is set either by a 4-byte copy of a 1 (`copy`) or by
// cuStreamWriteValue32 (`write`), both on the copy's stream. The scratch in 2 slots (as symmem) or
// one per chunk (no push waits). `fused`: the add kernel waits itself (every block), no wait kernel;
// `front_end`: cuStreamWaitValue32 and a reset by cuStreamWriteValue32 instead of a wait kernel.
__device__ __forceinline__ uint32_t ld_acquire_sys(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__global__ void wait_set(uint32_t* flag) {
  if (threadIdx.x != 0) return;
  while (ld_acquire_sys(flag) != 1u) {
  }
  *flag = 0;
}

__global__ void add_then_signal(uint4* __restrict__ dst, const uint4* __restrict__ src, size_t n,
                                uint32_t* done, uint32_t* wait_first, uint32_t* peer_flag) {
  if (wait_first != nullptr) {
    if (threadIdx.x == 0)
      while (ld_acquire_sys(wait_first) == 0u) {
      }
    __syncthreads();
  }
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint4 a = dst[i];
    const uint4 b = __ldcg(src + i);
    __nv_bfloat162* pa = reinterpret_cast<__nv_bfloat162*>(&a);
    const __nv_bfloat162* pb = reinterpret_cast<const __nv_bfloat162*>(&b);
    for (int j = 0; j < 4; ++j) pa[j] = __hadd2(pa[j], pb[j]);
    dst[i] = a;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(done, 1u) == gridDim.x - 1) {
      atomicExch(done, 0u);
      if (wait_first != nullptr) *wait_first = 0;
      __threadfence_system();
      asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(peer_flag), "r"(1u) : "memory");
    }
  }
}

void probe_ce_signals() {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 2) return;
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult qr;
  CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &entry, 12000, cudaEnableDefault, &qr));
  auto write_value = reinterpret_cast<decltype(&cuStreamWriteValue32)>(entry);
  CK(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &entry, 12000, cudaEnableDefault, &qr));
  auto wait_value = reinterpret_cast<decltype(&cuStreamWaitValue32)>(entry);
  TwoShotGpus gpus;
  constexpr size_t kBytes = TwoShotGpus::kBytes, kHalf = TwoShotGpus::kHalf;
  constexpr int kMaxChunks = 64;
  enum { kPushed = 0, kConsumed = kMaxChunks, kReturned = 2 * kMaxChunks };
  uint32_t *flags[2], *one[2], *done[2];
  cudaEvent_t reduced[2], j1[2], j2[2];
  for (int g = 0; g < 2; ++g) {
    CK(cudaSetDevice(g));
    CK(cudaMalloc(&flags[g], 3 * kMaxChunks * 4));
    CK(cudaMemset(flags[g], 0, 3 * kMaxChunks * 4));
    CK(cudaMalloc(&one[g], 4));
    const uint32_t h1 = 1;
    CK(cudaMemcpy(one[g], &h1, 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&done[g], 4));
    CK(cudaMemset(done[g], 0, 4));
    for (cudaEvent_t* e : {&reduced[g], &j1[g], &j2[g]}) CK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
  }
  struct Variant {
    const char* signal;
    int chunks, slots;
    bool fused, front_end;
  };
  const Variant variants[] = {{"copy", 4, 2, false, false},  {"copy", 4, 4, false, false},
                              {"write", 4, 4, true, false},  {"copy", 4, 2, false, true},
                              {"copy", 4, 4, false, true},   {"write", 4, 2, false, true},
                              {"write", 4, 4, false, true},  {"write", 8, 2, false, true},
                              {"write", 8, 8, false, true},  {"write", 4, 3, false, true}};
  for (const Variant& v : variants) {
    const int chunks = v.chunks, slots = v.slots;
    const bool by_copy = v.signal[0] == 'c';
    const size_t c = kHalf / chunks;
    auto signal = [&](int g, uint32_t* peer_flag, cudaStream_t st) {
      if (by_copy) CK(cudaMemcpyPeerAsync(peer_flag, 1 - g, one[g], g, 4, st));
      else if (write_value(reinterpret_cast<CUstream>(st), reinterpret_cast<CUdeviceptr>(peer_flag), 1, 0) != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuStreamWriteValue32 failed\n");
        std::exit(1);
      }
    };
    // front_end: the waits are cuStreamWaitValue32 (== 1) then cuStreamWriteValue32 (0), in the
    // stream's front end like an event wait: no kernel, no deadline.
    auto wait = [&](uint32_t* flag, cudaStream_t st) {
      if (!v.front_end) {
        wait_set<<<1, 32, 0, st>>>(flag);
        return;
      }
      const CUstream cs = reinterpret_cast<CUstream>(st);
      const CUdeviceptr f = reinterpret_cast<CUdeviceptr>(flag);
      if (wait_value(cs, f, 1, CU_STREAM_WAIT_VALUE_EQ) != CUDA_SUCCESS || write_value(cs, f, 0, 0) != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuStreamWaitValue32 failed\n");
        std::exit(1);
      }
    };
    double best_us = 1e30;
    for (int rep = 0; rep < 6; ++rep) {
      gpus.settle(true);
      gpus.start_run();
      for (int k = 0; k < chunks; ++k) {
        for (int g = 0; g < 2; ++g) {
          CK(cudaSetDevice(g));
          const int q = 1 - g;
          if (k >= slots) wait(flags[g] + kConsumed + k - slots, gpus.cp1[g]);
          CK(cudaMemcpyPeerAsync(gpus.scratch[q] + (k % slots) * c, q, gpus.data[g] + q * kHalf + k * c, g, c, gpus.cp1[g]));
          signal(g, flags[q] + kPushed + k, gpus.cp1[g]);
          if (!v.fused) wait(flags[g] + kPushed + k, gpus.red[g]);
          add_then_signal<<<gpus.sms[g], 512, 0, gpus.red[g]>>>(reinterpret_cast<uint4*>(gpus.data[g] + g * kHalf + k * c),
                                                      reinterpret_cast<const uint4*>(gpus.scratch[g] + (k % slots) * c),
                                                      c / sizeof(uint4), done[g],
                                                      v.fused ? flags[g] + kPushed + k : nullptr,
                                                      flags[q] + kConsumed + k);
          CK(cudaEventRecord(reduced[g], gpus.red[g]));
          CK(cudaStreamWaitEvent(gpus.cp2[g], reduced[g]));
          CK(cudaMemcpyPeerAsync(gpus.data[q] + g * kHalf + k * c, q, gpus.data[g] + g * kHalf + k * c, g, c, gpus.cp2[g]));
          signal(g, flags[q] + kReturned + k, gpus.cp2[g]);
        }
      }
      for (int g = 0; g < 2; ++g) {
        CK(cudaSetDevice(g));
        CK(cudaEventRecord(j1[g], gpus.cp1[g]));
        CK(cudaEventRecord(j2[g], gpus.cp2[g]));
        CK(cudaStreamWaitEvent(gpus.red[g], j1[g]));
        CK(cudaStreamWaitEvent(gpus.red[g], j2[g]));
        for (int k = 0; k < chunks; ++k) wait(flags[g] + kReturned + k, gpus.red[g]);
        // The consumed flags no push waited for (the last `slots` chunks'), reset for the next run.
        for (int k = std::max(0, chunks - slots); k < chunks; ++k) wait(flags[g] + kConsumed + k, gpus.red[g]);
        CK(cudaEventRecord(gpus.end[g], gpus.red[g]));
      }
      const double us = gpus.slowest_us();
      char what[96];
      std::snprintf(what, sizeof what, "CE-SIG %s %d chunks %d slots", v.signal, chunks, slots);
      expect_threes(gpus.data, kBytes, what);
      if (rep > 0) best_us = std::min(best_us, us);
    }
    std::printf("CE-SIG two-shot %2d chunks %d slots, signal by %s, wait by %s: %.1f GB/s %.1f us\n", chunks, slots,
                v.signal, v.front_end ? "cuStreamWaitValue32" : v.fused ? "the add kernel" : "a kernel",
                kBytes / (best_us * 1e3), best_us);
    std::fflush(stdout);
  }
}
}  // namespace

int main(int argc, char** argv) {
  const std::string_view only = argc < 2 ? "" : argv[1];
  if (only.empty() || only == "launch") probe_launch();
  if (only.empty() || only == "link") probe_link();
  if (only.empty() || only == "ce") probe_ce_two_shot();
  if (only.empty() || only == "ce-signals") probe_ce_signals();
  if (only.empty() || only == "tma") probe_tma();
  return 0;
}
