// Element kernels of the host collectives (compiled with -O3: the loops below are written so that
// GCC vectorises them; none reassociates, so vector and scalar code give the same bits).
#include "host/host_reduce.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/dispatch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#define SYMMEM_HOST_STREAM_STORES 1
#endif

namespace symmem::host {
namespace {

// Elements reduced at a time: the float32 accumulator and the converted result stay in L1 while
// each rank's input streams through once.
constexpr size_t kBlock = 1024;

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ---- element types: load widens to float32 (exactly), store rounds once --------------------------
struct F32 {
  using Raw = float;
  static float load(float x) { return x; }
  static float store(float x) { return x; }
};
struct BF16 {
  using Raw = uint16_t;
  static float load(uint16_t h) { return bf16_to_float(h); }
  static uint16_t store(float x) { return float_to_bf16(x); }
};
struct F16 {
  using Raw = uint16_t;
  static float load(uint16_t h) { return half_to_float(h); }
  static uint16_t store(float x) { return float_to_half(x); }
};

// acc = op(acc, x); MAX/MIN as fmaxf/fminf (a NaN operand loses unless both are NaN), written as
// selects so that the loop vectorises.
template <int OP>
inline float combine(float acc, float x) {
  if constexpr (OP == SYMMEM_MAX) return (acc > x || x != x) ? acc : x;
  else if constexpr (OP == SYMMEM_MIN) return (acc < x || x != x) ? acc : x;
  else return acc + x;
}

template <class T>
void widen(float* __restrict acc, const typename T::Raw* __restrict in, size_t n) {
  for (size_t i = 0; i < n; ++i) acc[i] = T::load(in[i]);
}
template <class T, int OP>
void combine_into(float* __restrict acc, const typename T::Raw* __restrict in, size_t n) {
  for (size_t i = 0; i < n; ++i) acc[i] = combine<OP>(acc[i], T::load(in[i]));
}
template <class T>
void narrow(typename T::Raw* __restrict out, const float* __restrict acc, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = T::store(acc[i]);
}

// Copies n bytes; with `streaming`, the aligned middle goes around the caches (non-temporal
// stores: no read-for-ownership of lines that are only overwritten). The caller fences.
void put_bytes(void* dst, const void* src, size_t n, bool streaming) {
#ifdef SYMMEM_HOST_STREAM_STORES
  if (streaming && n >= 64) {
    char* d = static_cast<char*>(dst);
    const char* s = static_cast<const char*>(src);
    const size_t head = (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16;
    std::memcpy(d, s, head);
    size_t i = head;
    for (; i + 64 <= n; i += 64) {
      __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
      __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
      __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
    }
    std::memcpy(d + i, s + i, n - i);
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

void store_fence(bool streaming) {
#ifdef SYMMEM_HOST_STREAM_STORES
  // Non-temporal stores are weakly ordered: make them globally visible before the chunk is
  // reported done (the release that the barrier later publishes covers only ordinary stores).
  if (streaming) _mm_sfence();
#else
  (void)streaming;
#endif
}

// acc[i] = op over src[0][b + i] .. src[W-1][b + i], in that order, for i < n: one pass over the
// inputs with the running value in a register (the same operations in the same order as
// combining rank by rank through acc, so the same bits), instead of a load and a store of acc per
// rank. W is the world, known at compile time so that the loop over the ranks unrolls and the loop
// over the elements vectorises.
template <class T, int OP, int W>
void reduce_block(float* __restrict acc, const ReduceJob& j, size_t b, size_t n) {
  using Raw = typename T::Raw;
  const Raw* __restrict s[W];
  for (int r = 0; r < W; ++r) s[r] = static_cast<const Raw*>(j.src[r]) + b;
  for (size_t i = 0; i < n; ++i) {
    float a = T::load(s[0][i]);
    for (int r = 1; r < W; ++r) a = combine<OP>(a, T::load(s[r][i]));
    acc[i] = a;
  }
}

// Any world: rank by rank through acc.
template <class T, int OP>
void reduce_block_any(float* __restrict acc, const ReduceJob& j, size_t b, size_t n) {
  using Raw = typename T::Raw;
  widen<T>(acc, static_cast<const Raw*>(j.src[0]) + b, n);
  for (int r = 1; r < j.world; ++r)
    combine_into<T, OP>(acc, static_cast<const Raw*>(j.src[r]) + b, n);
}

template <class T, int OP>
using BlockFn = void (*)(float* __restrict, const ReduceJob&, size_t, size_t);

template <class T, int OP>
BlockFn<T, OP> block_fn(int world) {
  switch (world) {
    case 2: return reduce_block<T, OP, 2>;
    case 3: return reduce_block<T, OP, 3>;
    case 4: return reduce_block<T, OP, 4>;
    case 8: return reduce_block<T, OP, 8>;
    default: return reduce_block_any<T, OP>;
  }
}

template <class T, int OP>
void reduce_range(const ReduceJob& j, size_t begin, size_t end) {
  using Raw = typename T::Raw;
  alignas(64) float acc[kBlock];
  alignas(64) Raw res[kBlock];
  const float world = static_cast<float>(j.world);
  const BlockFn<T, OP> block = block_fn<T, OP>(j.world);
  for (size_t b = begin; b < end; b += kBlock) {
    const size_t n = std::min(kBlock, end - b);
    block(acc, j, b, n);
    if constexpr (OP == SYMMEM_AVG)
      for (size_t i = 0; i < n; ++i) acc[i] = acc[i] / world;
    const void* out = acc;
    if constexpr (!std::is_same_v<T, F32>) {
      narrow<T>(res, acc, n);
      out = res;
    }
    // Every input of this block has been read before any output is written, so an output may be
    // one of the inputs (in place): no thread but this one touches these elements.
    for (int d = 0; d < j.ndst; ++d)
      put_bytes(static_cast<Raw*>(j.dst[d]) + b, out, n * sizeof(Raw), j.streaming);
  }
  store_fence(j.streaming);
}

}  // namespace

float bf16_to_float(uint16_t h) { return float_of(uint32_t{h} << 16); }

uint16_t float_to_bf16(float f) {
  const uint32_t u = bits_of(f);
  // NaN: the canonical quiet NaN, as __float2bfloat16 gives (and rounding could carry a NaN's
  // payload into infinity).
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t em = h & 0x7fffu;  // exponent and mantissa
  // Finite: the bits moved into float position are the value times 2^-112 (subnormal halves land
  // on float subnormals), so one exact multiply rescales every finite half. Inf/NaN keep their
  // mantissa under the float's all-ones exponent.
  const float finite = float_of(em << 13) * 0x1p112f;
  const uint32_t mag = em >= 0x7c00u ? (0x7f800000u | (em << 13)) : bits_of(finite);
  return float_of(mag | sign);
}

uint16_t float_to_half(float f) {
  const uint32_t u = bits_of(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7fff;                  // NaN: canonical, as __float2half
  if (a >= 0x477ff000u) return sign | 0x7c00u;         // >= 65520 rounds to infinity
  if (a < 0x38800000u) {
    // Below 2^-14: a half subnormal (or zero). Adding 0.5 puts the value's 2^-24 units into the
    // float mantissa's low bits, and the addition itself rounds to nearest even.
    const uint32_t m = bits_of(float_of(a) + 0.5f) - bits_of(0.5f);
    return static_cast<uint16_t>(sign | m);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest even; a
  // carry out of the mantissa correctly bumps the exponent.
  const uint32_t r = a - ((127u - 15u) << 23);
  return static_cast<uint16_t>(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
}

size_t element_bytes(int dtype) { return dtype == SYMMEM_FLOAT32 ? 4 : 2; }

void reduce_chunk(const ReduceJob& j, uint64_t index) {
  const size_t begin = static_cast<size_t>(index * j.chunk);
  const size_t end = static_cast<size_t>(std::min(j.count, (index + 1) * j.chunk));
  if (begin >= end) return;
  with_dtype<F32, BF16, F16>(j.dtype, [&](auto t) {
    with_op(j.op, [&](auto r) { reduce_range<typename decltype(t)::type, decltype(r)::value>(j, begin, end); });
  });
}

void copy_chunk(const CopyJob& j, uint64_t index) {
  const int s = static_cast<int>(index / j.per_segment);
  const uint64_t begin = (index % j.per_segment) * j.chunk;
  if (s >= j.segments || begin >= j.bytes[s]) return;
  const uint64_t n = std::min(j.chunk, j.bytes[s] - begin);
  std::memcpy(static_cast<char*>(j.dst[s]) + begin, static_cast<const char*>(j.src[s]) + begin, n);
}

}  // namespace symmem::host
