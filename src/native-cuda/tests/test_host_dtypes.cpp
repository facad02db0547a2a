// The host collectives for every dtype (float32, bfloat16, float16) and op (sum, avg, max, min),
// one-shot and two-shot, in and out of place, plus all_gather and reduce_scatter, at odd sizes
// (1, 7, 4099 and 1 000 003 elements) on 4 ranks. Each result is checked twice:
//  - against a float64 reference, within the rounding the element type allows;
//  - bit for bit against the documented order (float32 accumulation over ranks 0..world-1, AVG =
//    sum / world in float32, one rounding to nearest even; MAX/MIN as fmaxf/fminf), computed here
//    with the compiler's own float16 and an independent bfloat16 rounding. Since every rank is
//    held to the same bits, the ranks agree with each other, whatever the thread count.
// The ranks run once with one thread each and once with SYMMEM_HOST_THREADS=3 (the work then cut
// into chunks shared by threads). Also: NaN inputs for max/min/sum, and the variable's validation.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "test_util.h"

static const int kWorld = 4;
static const uint64_t kSizes[] = {1, 7, 4099, 1000003};
static const uint64_t kMax = 1000003;

// ---- element types, independent of the library ---------------------------------------------------
static uint16_t f16_bits(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
static float f16_value(uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, 2);
  return static_cast<float>(h);
}
// Nearest bfloat16 (8 significant bits), ties to even, by scaling the significand (finite values
// in the normal range, as used here).
static uint16_t bf16_bits(float f) {
  int e;
  const double m = std::frexp(static_cast<double>(f), &e);  // |m| in [0.5, 1)
  const float r = static_cast<float>(std::ldexp(std::nearbyint(m * 256.0), e - 8));
  uint32_t u;
  std::memcpy(&u, &r, 4);
  return static_cast<uint16_t>(u >> 16);
}
static float bf16_value(uint16_t u) {
  const uint32_t w = uint32_t{u} << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

static size_t esize(int dtype) { return dtype == SYMMEM_FLOAT32 ? 4 : 2; }
// Value -> element bits (exactly representable inputs, or a result to be rounded).
static void put(void* p, uint64_t i, int dtype, float v) {
  if (dtype == SYMMEM_FLOAT32) static_cast<float*>(p)[i] = v;
  else if (dtype == SYMMEM_FLOAT16) static_cast<uint16_t*>(p)[i] = f16_bits(v);
  else static_cast<uint16_t*>(p)[i] = bf16_bits(v);
}
static float get(const void* p, uint64_t i, int dtype) {
  if (dtype == SYMMEM_FLOAT32) return static_cast<const float*>(p)[i];
  if (dtype == SYMMEM_FLOAT16) return f16_value(static_cast<const uint16_t*>(p)[i]);
  return bf16_value(static_cast<const uint16_t*>(p)[i]);
}
static uint32_t raw(const void* p, uint64_t i, int dtype) {
  if (dtype == SYMMEM_FLOAT32) {
    uint32_t u;
    std::memcpy(&u, static_cast<const float*>(p) + i, 4);
    return u;
  }
  return static_cast<const uint16_t*>(p)[i];
}

// Input of `rank` at element i: an 8-bit significand (exact in every dtype) times a power of two
// spread wide enough (float16: narrower, to stay in its range) that float32 sums round, so the
// order of accumulation shows in the bits. Every 1009th element holds a NaN on rank 2 when `nans`.
static float input(int dtype, int rank, uint64_t i, int round, bool nans) {
  if (nans && rank == 2 && i % 1009 == 5) return std::nanf("");
  const int spread = dtype == SYMMEM_FLOAT16 ? 9 : 25;
  const int e = static_cast<int>((i * 31 + rank * 17 + round) % spread) - spread / 2;
  const float m = static_cast<float>(static_cast<int>((i * 7919 + rank * 104729 + round * 31) % 512) - 256);
  return std::ldexp(m / 64.0f, e);
}

// The documented result of element i, in the element type's bits, and the float64 reference.
static uint32_t model_bits(int dtype, int op, int round, bool nans, uint64_t i, double* ref,
                           double* magnitude) {
  float acc = input(dtype, 0, i, round, nans);
  double d = acc;
  *magnitude = std::fabs(d);
  for (int r = 1; r < kWorld; ++r) {
    const float x = input(dtype, r, i, round, nans);
    *magnitude += std::fabs(double(x));
    if (op == SYMMEM_MAX) {
      acc = std::fmax(acc, x);
      d = std::fmax(d, double(x));
    } else if (op == SYMMEM_MIN) {
      acc = std::fmin(acc, x);
      d = std::fmin(d, double(x));
    } else {
      acc += x;
      d += x;
    }
  }
  if (op == SYMMEM_AVG) {
    acc = acc / static_cast<float>(kWorld);
    d /= kWorld;
  }
  *ref = d;
  if (dtype == SYMMEM_FLOAT32) return raw(&acc, 0, dtype);
  if (std::isnan(acc)) return 0x7fff;  // the canonical NaN of both 16-bit types
  uint16_t bits;
  put(&bits, 0, dtype, acc);
  return bits;
}

// float32 accumulation over the ranks, then one rounding to the element type.
static double tolerance(int dtype, double magnitude, double result) {
  const double eps = dtype == SYMMEM_FLOAT32 ? 0x1p-24 : dtype == SYMMEM_FLOAT16 ? 0x1p-11 : 0x1p-8;
  return kWorld * 0x1p-24 * magnitude + eps * std::fabs(result) * 1.0001;
}

static void check_result(const char* what, int dtype, int op, int round, bool nans, uint64_t n,
                         const void* res, uint64_t offset) {
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t i = offset + k;
    double ref, magnitude;
    const uint32_t want = model_bits(dtype, op, round, nans, i, &ref, &magnitude);
    const uint32_t got = raw(res, k, dtype);
    const float v = get(res, k, dtype);
    if (std::isnan(ref)) {
      if (!std::isnan(v)) TEST_FAIL("%s dtype %d op %d n %llu [%llu]: %g, expected NaN", what, dtype, op, (unsigned long long)n, (unsigned long long)i, v);
    } else if (std::fabs(v - ref) > tolerance(dtype, magnitude, ref)) {
      TEST_FAIL("%s dtype %d op %d n %llu [%llu]: %.9g, float64 reference %.9g", what, dtype, op,
                (unsigned long long)n, (unsigned long long)i, v, ref);
    }
    if (got != want)
      TEST_FAIL("%s dtype %d op %d n %llu [%llu]: bits 0x%x, expected 0x%x (float32 in rank order)",
                what, dtype, op, (unsigned long long)n, (unsigned long long)i, got, want);
  }
}

static int rank_main(int rank) {
  Names names("hostdtypes", kWorld);
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_imported_buffer("host", 0, names, rank, kWorld, kMax * 4 * kWorld, &be);
  char* mine = static_cast<char*>(symmem_buffer_ptr(b, rank));
  std::vector<char> out(kMax * 4 * kWorld), again(kMax * 4);
  int round = 0;
  const int dtypes[] = {SYMMEM_FLOAT32, SYMMEM_BFLOAT16, SYMMEM_FLOAT16};
  for (int dtype : dtypes)
    for (uint64_t n : kSizes)
      for (int op = 0; op < 4; ++op)
        for (int algo = SYMMEM_ALGO_ONE_SHOT; algo <= SYMMEM_ALGO_TWO_SHOT; ++algo)
          for (int ip = 0; ip < 2; ++ip) {
            ++round;
            const bool nans = n == 4099 && op != SYMMEM_AVG;
            for (uint64_t i = 0; i < n; ++i) put(mine, i, dtype, input(dtype, rank, i, round, nans));
            CHECK_OK(symmem_all_reduce(b, symmem_algo(algo), symmem_dtype(dtype), symmem_reduce_op(op),
                                       n, ip ? nullptr : out.data(), nullptr, 20000));
            const void* res = ip ? static_cast<void*>(mine) : out.data();
            check_result(algo == 1 ? "all_reduce one-shot" : "all_reduce two-shot", dtype, op,
                         round, nans, n, res, 0);
            CHECK_OK(symmem_barrier(b, 0, 20000));  // all have checked before inputs change
            if (ip == 0 && n == kMax) {
              // The same inputs again: the same bits (no run-to-run variation).
              std::memcpy(again.data(), out.data(), n * esize(dtype));
              for (uint64_t i = 0; i < n; ++i) put(mine, i, dtype, input(dtype, rank, i, round, nans));
              CHECK_OK(symmem_all_reduce(b, symmem_algo(algo), symmem_dtype(dtype),
                                         symmem_reduce_op(op), n, out.data(), nullptr, 20000));
              CHECK(std::memcmp(again.data(), out.data(), n * esize(dtype)) == 0);
              CHECK_OK(symmem_barrier(b, 0, 20000));
            }
          }
  // reduce_scatter: block r of every rank's input goes to rank r.
  for (int dtype : dtypes)
    for (uint64_t n : kSizes)
      for (int op = 0; op < 4; ++op)
        for (int ip = 0; ip < 2; ++ip) {
          ++round;
          for (uint64_t i = 0; i < n * kWorld; ++i) put(mine, i, dtype, input(dtype, rank, i, round, false));
          CHECK_OK(symmem_reduce_scatter(b, symmem_dtype(dtype), symmem_reduce_op(op), n,
                                         ip ? nullptr : out.data(), nullptr, 20000));
          const void* res = ip ? static_cast<void*>(mine + rank * n * esize(dtype)) : out.data();
          check_result("reduce_scatter", dtype, op, round, false, n, res, rank * n);
          CHECK_OK(symmem_barrier(b, 0, 20000));
        }
  // all_gather: copies, bit for bit.
  for (int dtype : dtypes)
    for (uint64_t n : kSizes)
      for (int ip = 0; ip < 2; ++ip) {
        ++round;
        const uint64_t at = ip ? rank * n : 0;
        for (uint64_t i = 0; i < n; ++i) put(mine, at + i, dtype, input(dtype, rank, i, round, false));
        CHECK_OK(symmem_all_gather(b, symmem_dtype(dtype), n, ip ? nullptr : out.data(), nullptr, 20000));
        const char* res = ip ? mine : out.data();
        for (int r = 0; r < kWorld; ++r)
          for (uint64_t i = 0; i < n; ++i) {
            float want_v = input(dtype, r, i, round, false);
            char want[4];
            put(want, 0, dtype, want_v);
            if (raw(res, r * n + i, dtype) != raw(want, 0, dtype))
              TEST_FAIL("all_gather dtype %d n %llu ip %d: rank %d's [%llu] differs", dtype,
                        (unsigned long long)n, ip, r, (unsigned long long)i);
          }
        CHECK_OK(symmem_barrier(b, 0, 20000));
      }
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

static int bad_setting(const char* value) {
  setenv("SYMMEM_HOST_THREADS", value, 1);
  symmem_backend* be = nullptr;
  CHECK_STATUS(symmem_backend_open("host", 0, &be), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("SYMMEM_HOST_THREADS=");
  CHECK_ERROR_HAS(value);
  CHECK(std::strchr(symmem_last_error(), '\n') == nullptr);  // one line
  return 0;
}

int main() {
  const char* bad[] = {"0", "-2", "abc", "4x", "1025", " 3"};
  for (const char* v : bad)
    if (bad_setting(v) != 0) return 1;
  setenv("SYMMEM_HOST_TWO_SHOT_MIN_BYTES", "lots", 1);
  setenv("SYMMEM_HOST_THREADS", "2", 1);
  symmem_backend* be = nullptr;
  CHECK_STATUS(symmem_backend_open("host", 0, &be), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("SYMMEM_HOST_TWO_SHOT_MIN_BYTES='lots'");
  unsetenv("SYMMEM_HOST_TWO_SHOT_MIN_BYTES");
  setenv("SYMMEM_HOST_PARALLEL_MIN_BYTES", "-1", 1);
  CHECK_STATUS(symmem_backend_open("host", 0, &be), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("SYMMEM_HOST_PARALLEL_MIN_BYTES='-1'");
  // Workers from the first byte, so that every size below is cut among the threads.
  setenv("SYMMEM_HOST_PARALLEL_MIN_BYTES", "0", 1);
  for (const char* threads : {"1", "3"}) {
    setenv("SYMMEM_HOST_THREADS", threads, 1);
    if (!run_ranks(kWorld, 240, rank_main)) {
      std::fprintf(stderr, "FAILED with SYMMEM_HOST_THREADS=%s\n", threads);
      return 1;
    }
  }
  std::printf("test_host_dtypes: OK\n");
  return 0;
}
