// Not a test: the two floors our collectives are held against, measured on the machine itself
// (scripts/gpu/run-probe.sh):
//   launch  host cost of one kernel launch, nothing else: the runtime's <<<>>> and the driver's
//           cuLaunchKernelEx (found through cudaGetDriverEntryPoint, so nothing links libcuda), with
//           and without the programmatic-stream-serialization attribute symmem's launches carry,
//           with a 4-byte and a 256-byte parameter block (symmem's CollArgs is about 200 bytes).
//           Per variant: 30 batches of 200 back-to-back launches on a non-blocking stream, each
//           batch timed by the steady clock around the launches alone, then synchronized; the best
//           and the median batch, µs per launch.
//   link    NVLink between GPU 0 and GPU 1 (peer access enabled), 256 MiB per direction: the copy
//           engines (cudaMemcpyPeerAsync) one way and both ways at once, and the SMs storing into
//           the peer (push) or loading from it (pull), both ways at once, every SM busy. Best of 5,
//           GB/s per direction (10^9 bytes).
// Output: "LAUNCH <variant> <best_us> <median_us>" and "LINK <variant> <GB/s per direction>" lines.
#include <cuda.h>
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

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class Launch>
void time_launches(const char* name, cudaStream_t s, Launch launch) {
  constexpr int kBatches = 30, kPerBatch = 200;
  for (int i = 0; i < kPerBatch; ++i) launch();  // warm-up
  CK(cudaStreamSynchronize(s));
  std::vector<double> per;
  for (int b = 0; b < kBatches; ++b) {
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
  for (int pdl = 0; pdl < 2; ++pdl) {
    for (int bigp = 0; bigp < 2; ++bigp) {
      void* ps[] = {&small};
      void* pb[] = {&big};
      CUlaunchAttribute attr[1];
      attr[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attr[0].value.programmaticStreamSerializationAllowed = 1;
      CUlaunchConfig cfg = {};
      cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
      cfg.blockDimX = 32;
      cfg.blockDimY = cfg.blockDimZ = 1;
      cfg.hStream = reinterpret_cast<CUstream>(s);
      cfg.attrs = attr;
      cfg.numAttrs = pdl;
      char name[64];
      std::snprintf(name, sizeof name, "cuLaunchKernelEx %s%s", bigp ? "256 B" : "4 B", pdl ? " + PDL" : "");
      time_launches(name, s, [&] {
        if (launch_ex(&cfg, bigp ? fb : fs, bigp ? pb : ps, nullptr) != CUDA_SUCCESS) {
          std::fprintf(stderr, "cuLaunchKernelEx failed\n");
          std::exit(1);
        }
      });
    }
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

void probe_link() {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 2) {
    std::printf("LINK skipped: %d GPU\n", n);
    return;
  }
  constexpr size_t kBytes = size_t(256) << 20;
  Side sides[2];
  for (int i = 0; i < 2; ++i) {
    Side& d = sides[i];
    d.dev = i;
    CK(cudaSetDevice(i));
    int can = 0;
    CK(cudaDeviceCanAccessPeer(&can, i, 1 - i));
    if (!can) {
      std::printf("LINK skipped: GPU %d cannot access GPU %d\n", i, 1 - i);
      return;
    }
    CK(cudaDeviceEnablePeerAccess(1 - i, 0));
    CK(cudaStreamCreateWithFlags(&d.s, cudaStreamNonBlocking));
    CK(cudaMalloc(&d.local, kBytes));
    CK(cudaMemset(d.local, i + 1, kBytes));
    CK(cudaEventCreate(&d.a));
    CK(cudaEventCreate(&d.b));
    CK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, i));
  }
  // A second 256 MiB on each GPU: where the peer's push lands, and what its pull reads.
  int4* remote_area[2];
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaMalloc(&remote_area[i], kBytes));
  }
  sides[0].other = remote_area[1];
  sides[1].other = remote_area[0];
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
    push_kernel<<<d.sms * 2, 1024, 0, d.s>>>(d.local, d.dev == 0 ? remote_area[0] : remote_area[1], n4);
  };
  std::printf("LINK %-32s %.1f\n", "SM local copy (HBM, read+write)", best_gbps(sides, 1, kBytes, local_copy));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const bool launch = argc < 2 || std::string_view(argv[1]) != "link";
  const bool link = argc < 2 || std::string_view(argv[1]) != "launch";
  if (launch) probe_launch();
  if (link) probe_link();
  return 0;
}
