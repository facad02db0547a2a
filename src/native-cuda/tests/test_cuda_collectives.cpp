// Every collective x dtype x op x size (1, 7, 4099, 1 000 003 elements) on world 2 and 4, one
// rank per GPU (forked), fresh random inputs per run, outputs poisoned (NaN) before each run,
// compared with a float64 reference under a tolerance by dtype. Also: signals and barriers on a
// stream and host-synchronously, memset32 and stream_write_value32. One-shots back to back with no
// wait between them, alternating the low-latency lines with the 128-byte lines (with a GPU for
// each rank at worlds 2 to 4; otherwise with the push scratch), which at world 2 the largest size
// takes too in one-shots (float32 4 MB, bf16 2 MB). SYMMEM_TEST_WORLDS picks other worlds.
// The copy-engine two-shot runs with 64 KiB scratch slots here, so that its larger cases go in many chunks through both slots, AUTO picks it in place
// from 1 MiB at world 2, and a 1-element case leaves rank 1's half empty; where it cannot run
// (out of place, world 4) the refusal is checked.
// World 2 runs three times: as shipped (two-shot pushes through the scratch, which holds half of every
// size here), with SYMMEM_CUDA_PUSH_MAX_BYTES=0 (every all-reduce reads its peers: the pull kernels),
// and with SYMMEM_CUDA_LL128_MAX_BYTES=0 (the push one-shot where the 128-byte lines would go).
// Worlds 3 and 4 on GPUs of their own run twice: as shipped (every two-shot here as 128-byte lines)
// and with SYMMEM_CUDA_LL128_MAX_BYTES=0 (the pull two-shot).
#include <cstring>
#include <cstdlib>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <utility>
#include <vector>

#include "cuda_test_util.h"

static uint64_t g_seed;
static const uint64_t kSizes[] = {1, 7, 4099, 1000003};
static const uint64_t kMaxCount = 1000003;
static const int kTimeout = 20000;
static const char* kDtypeName[] = {"float32", "bfloat16", "float16"};
static const char* kOpName[] = {"sum", "avg", "max", "min"};

// The value rank r holds at element i for (case, count), already rounded to dtype.
static double input(int dtype, uint64_t tag, int rank, uint64_t i) {
  uint64_t x = (g_seed + tag * 0x9E3779B97F4A7C15ull) ^ (uint64_t(rank) << 48) ^ (i * 0xC2B2AE3D27D4EB4Full);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 29;
  float f = float(int64_t(x % 2000001) - 1000000) / 250000.0f;  // [-4, 4]
  if (dtype == SYMMEM_BFLOAT16) return double(__bfloat162float(__float2bfloat16(f)));
  if (dtype == SYMMEM_FLOAT16) return double(__half2float(__float2half(f)));
  return double(f);
}

static void to_bytes(int dtype, const std::vector<double>& v, std::vector<char>& out) {
  const size_t es = symmem_dtype_size(symmem_dtype(dtype));
  out.resize(v.size() * es);
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == SYMMEM_FLOAT32) {
      float f = float(v[i]);
      std::memcpy(&out[i * 4], &f, 4);
    } else if (dtype == SYMMEM_BFLOAT16) {
      __nv_bfloat16 h = __float2bfloat16(float(v[i]));
      std::memcpy(&out[i * 2], &h, 2);
    } else {
      __half h = __float2half(float(v[i]));
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
}

static double from_bytes(int dtype, const std::vector<char>& b, size_t i) {
  if (dtype == SYMMEM_FLOAT32) {
    float f;
    std::memcpy(&f, &b[i * 4], 4);
    return f;
  }
  if (dtype == SYMMEM_BFLOAT16) {
    __nv_bfloat16 h;
    std::memcpy(&h, &b[i * 2], 2);
    return __bfloat162float(h);
  }
  __half h;
  std::memcpy(&h, &b[i * 2], 2);
  return __half2float(h);
}

static double reduce_ref(int op, int world, int dtype, uint64_t tag, uint64_t i, double* mag) {
  double acc = input(dtype, tag, 0, i), m = std::fabs(acc);
  for (int r = 1; r < world; ++r) {
    double x = input(dtype, tag, r, i);
    m += std::fabs(x);
    if (op == SYMMEM_MAX) acc = std::max(acc, x);
    else if (op == SYMMEM_MIN) acc = std::min(acc, x);
    else acc += x;
  }
  if (op == SYMMEM_AVG) acc /= world, m /= world;
  *mag = m;
  return acc;
}

static void check_close(const char* what, int dtype, int world, const std::vector<char>& got,
                        uint64_t n, const std::function<double(uint64_t, double*)>& ref) {
  const double eps = dtype == SYMMEM_FLOAT32 ? 1.2e-7 : dtype == SYMMEM_BFLOAT16 ? 7.9e-3 : 9.8e-4;
  for (uint64_t i = 0; i < n; ++i) {
    double mag = 0;
    const double want = ref(i, &mag);
    const double v = from_bytes(dtype, got, i);
    const double tol = eps * std::fabs(want) + world * 1.2e-7 * mag + 1e-30;
    if (!(std::fabs(v - want) <= tol))
      TEST_FAIL("%s: element %llu of %llu is %.9g, reference %.9g (tolerance %.3g)", what,
                (unsigned long long)i, (unsigned long long)n, v, want, tol);
  }
}

struct Ctx {
  symmem_buffer* b;
  int rank, world;
  cudaStream_t s;
  void* out;  // device scratch, kMaxCount * 4 * world bytes
  uint64_t tag = 0;
};

// Rank's input of case `tag`, elements first_index .. first_index + n, as dtype's bytes.
static std::vector<char> input_bytes(int dtype, uint64_t tag, int rank, uint64_t n, uint64_t first_index = 0) {
  std::vector<double> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = input(dtype, tag, rank, first_index + i);
  std::vector<char> bytes;
  to_bytes(dtype, v, bytes);
  return bytes;
}

// Writes rank's input (n elements starting at element `at`) of case `tag` into the own buffer.
static void write_input(Ctx& c, int dtype, uint64_t tag, uint64_t at, uint64_t n, uint64_t first_index = 0) {
  const std::vector<char> bytes = input_bytes(dtype, tag, c.rank, n, first_index);
  const size_t es = symmem_dtype_size(symmem_dtype(dtype));
  copy_to_device(static_cast<char*>(symmem_buffer_ptr(c.b, c.rank)) + at * es, bytes.data(), bytes.size());
}

static std::vector<char> read_back(const void* p, uint64_t bytes) {
  std::vector<char> v(bytes);
  CUDA_OK(cudaMemcpy(v.data(), p, bytes, cudaMemcpyDeviceToHost));
  return v;
}

// The collectives run on a non-blocking stream, which does not wait for the legacy stream's
// cudaMemset/cudaMemcpy: finish them before the collective is enqueued.
static void poison(void* p, uint64_t bytes) {
  CUDA_OK(cudaMemset(p, 0xFF, bytes));
  CUDA_OK(cudaDeviceSynchronize());
}

static void sync(Ctx& c) { CHECK_OK(symmem_stream_synchronize(c.b, c.s)); }

// The same, naming the case that did not complete (a deadline names only the rank it missed).
static void sync(Ctx& c, const char* what) {
  const symmem_status st = symmem_stream_synchronize(c.b, c.s);
  if (st != SYMMEM_OK) TEST_FAIL("%s: returned %d (symmem_last_error: \"%s\")", what, int(st), symmem_last_error());
}

static void all_reduce_case(Ctx& c, int algo, bool in_place, int dtype, int op, uint64_t n) {
  const uint64_t tag = ++c.tag;
  const size_t es = symmem_dtype_size(symmem_dtype(dtype));
  char what[160];
  std::snprintf(what, sizeof what, "all_reduce algo %d %s %s %s count %llu world %d", algo,
                in_place ? "in place" : "out of place", kDtypeName[dtype], kOpName[op],
                (unsigned long long)n, c.world);
  if (in_place && algo == SYMMEM_ALGO_ONE_SHOT && n * es > symmem_one_shot_in_place_max_bytes(c.b))
    return;
  if (algo == SYMMEM_ALGO_TWO_SHOT_CE && (!in_place || c.world != 2)) {
    CHECK_STATUS(symmem_all_reduce(c.b, symmem_algo(algo), symmem_dtype(dtype), symmem_reduce_op(op), n,
                                   in_place ? nullptr : c.out, c.s, kTimeout),
                 SYMMEM_ERR_UNSUPPORTED);
    CHECK_ERROR_HAS(c.world != 2 ? "TWO_SHOT_CE runs at world 2 only" : "TWO_SHOT_CE reduces in place only");
    return;
  }
  write_input(c, dtype, tag, 0, n);
  if (!in_place) poison(c.out, n * es + 64);
  CHECK_OK(symmem_all_reduce(c.b, symmem_algo(algo), symmem_dtype(dtype), symmem_reduce_op(op), n,
                             in_place ? nullptr : c.out, c.s, kTimeout));
  sync(c, what);
  const void* res = in_place ? symmem_buffer_ptr(c.b, c.rank) : c.out;
  std::vector<char> got = read_back(res, n * es + (in_place ? 0 : 64));
  if (!in_place)
    for (int k = 0; k < 64; ++k)
      if (got[n * es + k] != char(0xFF)) TEST_FAIL("%s: wrote past the end of out", what);
  check_close(what, dtype, c.world, got, n, [&](uint64_t i, double* mag) {
    return reduce_ref(op, c.world, dtype, tag, i, mag);
  });
  // Nobody may rewrite its input while a slow peer is still checking: the next case's collective
  // starts with a barrier, and the check reads only local memory, so this is safe.
}

// Back-to-back in-place one-shots with no wait between them: a call's slot (low-latency lines or
// push scratch) is written again two calls later, while a peer may still be a call behind. Sizes
// alternate between the two paths (the lines up to 128 KiB at world 2 and 64 KiB at world 4, the
// scratch above); inputs are copied in and results out on the collectives' stream, checked at the
// end.
static void pipelined_case(Ctx& c) {
  const uint64_t kCounts[] = {3, 1000, 5000, 100000};
  const int kCalls = 48;
  const uint64_t max_bytes = 100000 * 4;
  char* host = nullptr;
  CUDA_OK(cudaMallocHost(&host, 2 * kCalls * max_bytes));
  struct Call {
    uint64_t tag, n;
    int dtype, op;
  };
  std::vector<Call> calls;
  char* own = static_cast<char*>(symmem_buffer_ptr(c.b, c.rank));
  for (int k = 0; k < kCalls; ++k) {
    const Call call{++c.tag, kCounts[k % 4], (k / 4) % 3, (k / 2) % 4};
    calls.push_back(call);
    const std::vector<char> bytes = input_bytes(call.dtype, call.tag, c.rank, call.n);
    char* in = host + 2 * k * max_bytes;
    std::memcpy(in, bytes.data(), bytes.size());
    CUDA_OK(cudaMemcpyAsync(own, in, bytes.size(), cudaMemcpyHostToDevice, c.s));
    CHECK_OK(symmem_all_reduce(c.b, SYMMEM_ALGO_ONE_SHOT, symmem_dtype(call.dtype),
                               symmem_reduce_op(call.op), call.n, nullptr, c.s, kTimeout));
    CUDA_OK(cudaMemcpyAsync(in + max_bytes, own, bytes.size(), cudaMemcpyDeviceToHost, c.s));
  }
  sync(c, "48 pipelined in-place one-shots");
  for (int k = 0; k < kCalls; ++k) {
    const Call& call = calls[k];
    const size_t es = symmem_dtype_size(symmem_dtype(call.dtype));
    const char* res = host + 2 * k * max_bytes + max_bytes;
    char what[128];
    std::snprintf(what, sizeof what, "pipelined call %d: one-shot in place %s %s count %llu world %d", k,
                  kDtypeName[call.dtype], kOpName[call.op], (unsigned long long)call.n, c.world);
    check_close(what, call.dtype, c.world, std::vector<char>(res, res + call.n * es), call.n,
                [&](uint64_t i, double* mag) { return reduce_ref(call.op, c.world, call.dtype, call.tag, i, mag); });
  }
  CUDA_OK(cudaFreeHost(host));
}

static void reduce_scatter_case(Ctx& c, bool in_place, int dtype, int op, uint64_t n) {
  const uint64_t tag = ++c.tag;
  const size_t es = symmem_dtype_size(symmem_dtype(dtype));
  char what[160];
  std::snprintf(what, sizeof what, "reduce_scatter %s %s %s count %llu world %d",
                in_place ? "in place" : "out of place", kDtypeName[dtype], kOpName[op],
                (unsigned long long)n, c.world);
  write_input(c, dtype, tag, 0, n * c.world);
  if (!in_place) poison(c.out, n * es);
  CHECK_OK(symmem_reduce_scatter(c.b, symmem_dtype(dtype), symmem_reduce_op(op), n,
                                 in_place ? nullptr : c.out, c.s, kTimeout));
  sync(c, what);
  const void* res = in_place ? static_cast<char*>(symmem_buffer_ptr(c.b, c.rank)) + c.rank * n * es
                             : c.out;
  std::vector<char> got = read_back(res, n * es);
  check_close(what, dtype, c.world, got, n, [&](uint64_t i, double* mag) {
    return reduce_ref(op, c.world, dtype, tag, c.rank * n + i, mag);
  });
}

static void all_gather_case(Ctx& c, bool in_place, int dtype, uint64_t n) {
  const uint64_t tag = ++c.tag;
  const size_t es = symmem_dtype_size(symmem_dtype(dtype));
  char what[160];
  std::snprintf(what, sizeof what, "all_gather %s %s count %llu world %d",
                in_place ? "in place" : "out of place", kDtypeName[dtype], (unsigned long long)n,
                c.world);
  if (in_place) {
    poison(symmem_buffer_ptr(c.b, c.rank), n * es * c.world);
    write_input(c, dtype, tag, c.rank * n, n);
  } else {
    write_input(c, dtype, tag, 0, n);
    poison(c.out, n * es * c.world);
  }
  CHECK_OK(symmem_all_gather(c.b, symmem_dtype(dtype), n, in_place ? nullptr : c.out, c.s, kTimeout));
  sync(c, what);
  std::vector<char> got = read_back(in_place ? symmem_buffer_ptr(c.b, c.rank) : c.out, n * es * c.world);
  check_close(what, dtype, c.world, got, n * c.world, [&](uint64_t i, double* mag) {
    *mag = 0;
    return input(dtype, tag, int(i / n), i % n);
  });
}

static void signals(Ctx& c) {
  // Host-synchronous barrier and put/wait on cuda buffers, and a stream ping-pong with data.
  CHECK_OK(symmem_barrier(c.b, 0, kTimeout));
  // Pairs ping-pong; at an odd world the last rank has no partner and goes straight on to the
  // barriers, which every rank takes.
  const int peer = c.rank ^ 1;
  const bool starts = c.rank % 2 == 0;
  uint32_t* mine = static_cast<uint32_t*>(symmem_buffer_ptr(c.b, c.rank));
  for (uint32_t i = 0; i < 50 && peer < c.world; ++i) {
    if (starts) {
      CHECK_OK(symmem_stream_write_value32(c.b, peer, 0, i, c.s));  // into the peer's buffer
      CHECK_OK(symmem_put_signal_on_stream(c.b, peer, 1, c.s, kTimeout));
      CHECK_OK(symmem_wait_signal_on_stream(c.b, peer, 1, c.s, kTimeout));
      sync(c);
      uint32_t v;
      CUDA_OK(cudaMemcpy(&v, mine, 4, cudaMemcpyDeviceToHost));
      if (v != i + 1000) TEST_FAIL("ping-pong round %u: peer wrote %u", i, v);
    } else {
      CHECK_OK(symmem_wait_signal(c.b, peer, 1, kTimeout));
      uint32_t v;
      CUDA_OK(cudaMemcpy(&v, mine, 4, cudaMemcpyDeviceToHost));
      if (v != i) TEST_FAIL("ping-pong round %u: got %u", i, v);
      CHECK_OK(symmem_memset32(c.b, peer, 0, i + 1000, 1, c.s));
      CHECK_OK(symmem_put_signal_on_stream(c.b, peer, 1, c.s, kTimeout));
      sync(c);
    }
  }
  for (int k = 0; k < 100; ++k) CHECK_OK(symmem_barrier_on_stream(c.b, 2, c.s, kTimeout));
  sync(c);
  CHECK_OK(symmem_barrier(c.b, 0, kTimeout));
}

static int rank_main(int rank, int world, int ngpu) {
  symmem_backend* be = nullptr;
  const uint64_t bytes = kMaxCount * 4 * world + 4096;
  symmem_buffer* b = make_cuda_buffer("cudacoll", rank, world, rank % ngpu, bytes, &be);
  Ctx c{b, rank, world, nullptr, nullptr};
  CUDA_OK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
  CUDA_OK(cudaMalloc(&c.out, bytes + 64));
  uint8_t u0[16], u1[16];
  CHECK_OK(symmem_buffer_device_uuid(b, rank, u0));
  CHECK_OK(symmem_buffer_device_uuid(b, (rank + 1) % world, u1));
  if (world > 1 && ngpu >= world && std::memcmp(u0, u1, 16) == 0) TEST_FAIL("peer has our uuid");
  signals(c);
  symmem_algo picked = SYMMEM_ALGO_AUTO;
  CHECK_OK(symmem_all_reduce_auto_algo(b, SYMMEM_FLOAT32, kMaxCount, 1, &picked));
  if ((picked == SYMMEM_ALGO_TWO_SHOT_CE) != (world == 2))
    TEST_FAIL("AUTO in place, %llu float32 at world %d picked algo %d", (unsigned long long)kMaxCount, world, int(picked));
  CHECK_OK(symmem_all_reduce_auto_algo(b, SYMMEM_FLOAT32, 4099, 1, &picked));
  if (picked == SYMMEM_ALGO_TWO_SHOT_CE) TEST_FAIL("AUTO in place picked the copy-engine two-shot below 1 MiB");
  CHECK_OK(symmem_all_reduce_auto_algo(b, SYMMEM_FLOAT32, kMaxCount, 0, &picked));
  if (picked == SYMMEM_ALGO_TWO_SHOT_CE) TEST_FAIL("AUTO out of place picked the copy-engine two-shot");
  if (world == 2) {
    // Out of place: the push one-shot while it fits the scratch (4 MB here at the default scratch),
    // the push two-shot above it while half fits (8 MB), and with the pushes off the pull one-shot
    // at every size. (Another scratch size moves the bounds: then only 4 MB is checked.)
    const char* push_max = std::getenv("SYMMEM_CUDA_PUSH_MAX_BYTES");
    const bool pushes_off = push_max != nullptr && std::strcmp(push_max, "0") == 0;
    const bool defaults = push_max == nullptr && std::getenv("SYMMEM_CUDA_PUSH_SCRATCH_BYTES") == nullptr;
    CHECK_OK(symmem_all_reduce_auto_algo(b, SYMMEM_FLOAT32, 2 * kMaxCount, 0, &picked));
    if ((defaults && picked != SYMMEM_ALGO_TWO_SHOT) || (pushes_off && picked != SYMMEM_ALGO_ONE_SHOT))
      TEST_FAIL("AUTO out of place, %llu float32 at world 2 (pushes %s) picked algo %d",
                (unsigned long long)(2 * kMaxCount), pushes_off ? "off" : "on", int(picked));
    CHECK_OK(symmem_all_reduce_auto_algo(b, SYMMEM_FLOAT32, kMaxCount, 0, &picked));
    if (picked != SYMMEM_ALGO_ONE_SHOT)
      TEST_FAIL("AUTO out of place, %llu float32 at world 2 picked algo %d", (unsigned long long)kMaxCount, int(picked));
  }
  if (world > 2 && std::getenv("SYMMEM_CUDA_TWO_SHOT_MIN_BYTES") == nullptr &&
      std::getenv("SYMMEM_CUDA_TWO_SHOT_IP_MIN_BYTES") == nullptr &&
      std::getenv("SYMMEM_CUDA_PUSH_SCRATCH_BYTES") == nullptr) {
    // Worlds 3 to 8: out of place two-shot from 8 MiB / world, in place from 4 MiB / world (the
    // push scratch holds more than that here), one-shot just below each; both from 1 MiB where the
    // 128-byte-line two-shot runs (worlds 3 and 4 on GPUs of their own).
    const bool lines = world <= 4 && ngpu >= world && std::getenv("SYMMEM_CUDA_LL128_MAX_BYTES") == nullptr;
    const uint64_t from[2] = {(lines ? uint64_t{1} << 20 : (uint64_t{8} << 20) / world) / 4,
                              (lines ? uint64_t{1} << 20 : (uint64_t{4} << 20) / world) / 4};
    for (int ip = 0; ip < 2; ++ip)
      for (uint64_t count : {from[ip] - 1, from[ip] + 1}) {
        CHECK_OK(symmem_all_reduce_auto_algo(b, SYMMEM_FLOAT32, count, ip, &picked));
        const symmem_algo want = count < from[ip] ? SYMMEM_ALGO_ONE_SHOT : SYMMEM_ALGO_TWO_SHOT;
        if (picked != want)
          TEST_FAIL("AUTO %s, %llu float32 at world %d picked algo %d, expected %d",
                    ip ? "in place" : "out of place", (unsigned long long)count, world, int(picked), int(want));
      }
  }
  // SYMMEM_TEST_SMALL=1 (for compute-sanitizer): two small sizes only.
  std::vector<uint64_t> sizes(std::begin(kSizes), std::end(kSizes));
  if (std::getenv("SYMMEM_TEST_SMALL") != nullptr) sizes = {7, 4099};
  for (uint64_t n : sizes)
    for (int dtype = 0; dtype < 3; ++dtype) {
      for (int op = 0; op < 4; ++op) {
        for (int algo : {SYMMEM_ALGO_ONE_SHOT, SYMMEM_ALGO_TWO_SHOT, SYMMEM_ALGO_TWO_SHOT_CE, SYMMEM_ALGO_AUTO})
          for (bool ip : {false, true}) all_reduce_case(c, algo, ip, dtype, op, n);
        for (bool ip : {false, true}) reduce_scatter_case(c, ip, dtype, op, n);
      }
      for (bool ip : {false, true}) all_gather_case(c, ip, dtype, n);
    }
  pipelined_case(c);
  // A misaligned out takes the element-wise path.
  all_reduce_case(c, SYMMEM_ALGO_ONE_SHOT, false, SYMMEM_BFLOAT16, SYMMEM_SUM, 1000);
  {
    void* saved = c.out;
    c.out = static_cast<char*>(saved) + 2;
    all_reduce_case(c, SYMMEM_ALGO_ONE_SHOT, false, SYMMEM_BFLOAT16, SYMMEM_SUM, 1003);
    all_reduce_case(c, SYMMEM_ALGO_TWO_SHOT, false, SYMMEM_FLOAT16, SYMMEM_MAX, 1003);
    // Outs aligned on some ranks and not on others (each rank's out is its own): every path takes
    // its grid and its items from the count alone and stores a vector element by element where
    // out is not aligned, so every rank still pairs the same blocks over the same items. The sizes
    // reach every path somewhere among the worlds and variants: 1003 bf16 the low-latency lines;
    // 200003 bf16 and 100001 float32 the 128-byte lines (worlds 2 to 4 on GPUs of their own), else
    // the push one-shot, and as two-shots the push two-shot (world 2), the lines' two-shot (3 and
    // 4) or the pull two-shot; 2000006 float32 (8 MB) the pull one-shot, and the push (world 2) or
    // pull two-shot; reduce-scatter and all-gather their vector kernels.
    auto mixed = [&](ptrdiff_t even, ptrdiff_t odd) {
      c.out = static_cast<char*>(saved) + (rank % 2 == 0 ? even : odd);
    };
    mixed(0, 2);
    all_reduce_case(c, SYMMEM_ALGO_ONE_SHOT, false, SYMMEM_BFLOAT16, SYMMEM_SUM, 1003);
    all_reduce_case(c, SYMMEM_ALGO_ONE_SHOT, false, SYMMEM_BFLOAT16, SYMMEM_AVG, 200003);
    all_reduce_case(c, SYMMEM_ALGO_TWO_SHOT, false, SYMMEM_BFLOAT16, SYMMEM_SUM, 200003);
    reduce_scatter_case(c, false, SYMMEM_BFLOAT16, SYMMEM_SUM, 4096);
    all_gather_case(c, false, SYMMEM_BFLOAT16, 4096);
    mixed(4, 0);
    all_reduce_case(c, SYMMEM_ALGO_ONE_SHOT, false, SYMMEM_FLOAT32, SYMMEM_MAX, 100001);
    all_reduce_case(c, SYMMEM_ALGO_TWO_SHOT, false, SYMMEM_FLOAT32, SYMMEM_MIN, 100001);
    all_reduce_case(c, SYMMEM_ALGO_ONE_SHOT, false, SYMMEM_FLOAT32, SYMMEM_SUM, 2 * kMaxCount);
    all_reduce_case(c, SYMMEM_ALGO_TWO_SHOT, false, SYMMEM_FLOAT32, SYMMEM_SUM, 2 * kMaxCount);
    reduce_scatter_case(c, false, SYMMEM_FLOAT32, SYMMEM_MAX, 4096);
    all_gather_case(c, false, SYMMEM_FLOAT32, 4096);
    c.out = saved;
  }
  CHECK_OK(symmem_barrier(b, 0, kTimeout));
  CUDA_OK(cudaFree(c.out));
  CUDA_OK(cudaStreamDestroy(c.s));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  if (rank == 0) std::printf("world %d: %llu cases passed\n", world, (unsigned long long)c.tag);
  return 0;
}

int main() {
  const int ngpu = require_gpus("test_cuda_collectives", 2);
  setenv("SYMMEM_CUDA_CE_SLOT_BYTES", "65536", 1);
  setenv("SYMMEM_CUDA_CE_MIN_BYTES", "1048576", 1);
  std::random_device rd;
  g_seed = (uint64_t(rd()) << 32) ^ rd();
  std::printf("seed %llu, %d GPU(s)\n", (unsigned long long)g_seed, ngpu);
  const bool small = std::getenv("SYMMEM_TEST_SMALL") != nullptr;
  // SYMMEM_TEST_WORLDS=2,4,8 picks the world sizes (default 2,4). A world larger than the GPU count
  // runs several ranks per GPU, which needs SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 (correctness only).
  const std::vector<int> worlds = test_worlds("test_cuda_collectives", {2, 4});
  const bool overlapping = overlapping_devices_allowed();
  // The pull kernels of world 2, besides the push ones that its default run takes (unless the
  // caller chose the push bound).
  const bool push_max_given = std::getenv("SYMMEM_CUDA_PUSH_MAX_BYTES") != nullptr;
  const bool ll128_max_given = std::getenv("SYMMEM_CUDA_LL128_MAX_BYTES") != nullptr;
  enum Variant { kShipped, kPull, kNoLl128 };
  std::vector<std::pair<int, Variant>> runs;
  for (int world : worlds) {
    runs.push_back({world, kShipped});
    if (world == 2 && !small && !push_max_given) runs.push_back({world, kPull});
    // Without the lines where they run: the push one-shot at world 2, the pull two-shot at 3 and 4.
    if (world <= 4 && world <= ngpu && !small && !ll128_max_given) runs.push_back({world, kNoLl128});
  }
  for (auto [world, variant] : runs) {
    const bool pull = variant == kPull;
    if (small && world > 2) break;
    if (world > ngpu && !overlapping) {
      std::printf("world %d: SKIPPED (only %d GPUs; SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 runs several ranks per GPU)\n",
                  world, ngpu);
      continue;
    }
    if (world > ngpu) std::printf("world %d on %d GPUs: %d ranks per GPU\n", world, ngpu, (world + ngpu - 1) / ngpu);
    // Read by each forked rank's backend; every rank has the same value.
    if (pull) {
      setenv("SYMMEM_CUDA_PUSH_MAX_BYTES", "0", 1);
      std::printf("world %d, pull kernels only (SYMMEM_CUDA_PUSH_MAX_BYTES=0)\n", world);
    }
    if (variant == kNoLl128) {
      setenv("SYMMEM_CUDA_LL128_MAX_BYTES", "0", 1);
      std::printf("world %d, no 128-byte lines (SYMMEM_CUDA_LL128_MAX_BYTES=0)\n", world);
    }
    const bool ok = run_ranks(world, 240, [&](int r) { return rank_main(r, world, ngpu); });
    if (pull) unsetenv("SYMMEM_CUDA_PUSH_MAX_BYTES");
    if (variant == kNoLl128) unsetenv("SYMMEM_CUDA_LL128_MAX_BYTES");
    if (!ok) {
      std::fprintf(stderr, "FAILED: world %d%s\n", world,
                   pull ? " (pull kernels)" : variant == kNoLl128 ? " (no 128-byte lines)" : "");
      return 1;
    }
  }
  std::printf("test_cuda_collectives: OK\n");
  return 0;
}
