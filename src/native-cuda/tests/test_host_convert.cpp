// The host backend's element conversions (host/host_reduce.cpp, compiled into this test) against
// the compiler's own float16 (_Float16) and an independent bfloat16 rounding: every float16 and
// bfloat16 widened, and float32 narrowed over every 2^8th bit pattern plus the boundaries.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "host/host_reduce.h"
#include "test_util.h"

using namespace symmem::host;

static float as_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
static uint32_t as_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static uint16_t half_bits(_Float16 h) {
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}

// Nearest bfloat16 by exact integer arithmetic on the magnitude: keep the top 16 bits, look at
// the dropped 16 (above, below or at half, then the kept lowest bit decides).
static uint16_t bf16_reference(float f) {
  const uint32_t u = as_bits(f);
  uint32_t kept = u >> 16;
  const uint32_t dropped = u & 0xffffu;
  if (dropped > 0x8000u || (dropped == 0x8000u && (kept & 1u))) ++kept;
  return static_cast<uint16_t>(kept);
}

static void check_narrow(uint32_t u) {
  const float f = as_float(u);
  const uint16_t h = float_to_half(f), b = float_to_bf16(f);
  if (std::isnan(f)) {
    CHECK(h == 0x7fff && b == 0x7fff);
    return;
  }
  const uint16_t want_h = half_bits(static_cast<_Float16>(f));
  if (h != want_h) TEST_FAIL("float_to_half(%a = 0x%08x) = 0x%04x, _Float16 gives 0x%04x", f, u, h, want_h);
  const uint16_t want_b = bf16_reference(f);
  if (b != want_b) TEST_FAIL("float_to_bf16(%a = 0x%08x) = 0x%04x, expected 0x%04x", f, u, b, want_b);
}

int main() {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    _Float16 x;
    const uint16_t bits = static_cast<uint16_t>(h);
    std::memcpy(&x, &bits, 2);
    const float want = static_cast<float>(x), got = half_to_float(bits);
    if (std::isnan(want) ? !std::isnan(got) : as_bits(got) != as_bits(want))
      TEST_FAIL("half_to_float(0x%04x) = %a, _Float16 gives %a", h, got, want);
    if (!std::isnan(want) && float_to_half(got) != bits)
      TEST_FAIL("float_to_half(half_to_float(0x%04x)) = 0x%04x", h, float_to_half(got));
    const float bf = bf16_to_float(bits);
    if (as_bits(bf) != (h << 16)) TEST_FAIL("bf16_to_float(0x%04x)", h);
  }
  for (uint64_t u = 0; u <= 0xffffffffull; u += 251) check_narrow(static_cast<uint32_t>(u));
  // Around every float16 rounding boundary and the ends of its range.
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const uint32_t mid = as_bits((half_to_float(static_cast<uint16_t>(h)) +
                                  half_to_float(static_cast<uint16_t>(h + 1))) / 2);
    for (uint32_t d = 0; d < 3; ++d) {
      check_narrow(mid - 1 + d);
      check_narrow((mid - 1 + d) | 0x80000000u);
    }
  }
  const float edges[] = {65504.0f, 65519.99f, 65520.0f, 1e30f, INFINITY, -INFINITY, 0x1p-24f,
                         0x1p-25f, 0x1.8p-25f, 0x1p-26f, 0x1p-14f, 0x1.ffcp-15f, 0.0f, -0.0f,
                         3.4028235e38f, 1e-45f};
  for (float e : edges) check_narrow(as_bits(e));
  std::printf("test_host_convert: OK\n");
  return 0;
}
