// The data of the all-to-all tests (test_host_all_to_all, test_cuda_all_to_all): every rank can compute
// every rank's splits and elements, so each checks what it received bit for bit.
#pragma once
#include <cstdint>
#include <cstring>

#include "symmem.h"

namespace a2a {

inline const symmem_dtype kDtypes[] = {SYMMEM_FLOAT32, SYMMEM_BFLOAT16, SYMMEM_FLOAT16};
inline const uint64_t kRoomBytes = 6006;  // input room before the splits: odd element counts for every dtype

inline uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

// Element k of rank q's part for rank p in round `round`, as raw bits of the element's size.
inline uint32_t element(int q, int p, uint64_t k, int round) {
  return static_cast<uint32_t>(mix((uint64_t(round) << 48) ^ (uint64_t(q) << 40) ^ (uint64_t(p) << 32) ^ k));
}

// How many elements rank q sends to rank p in round `round` (every rank computes every rank's).
inline int64_t split(int world, int round, int q, int p, uint64_t room) {
  const uint64_t share = room / world;
  switch (round % 5) {
    case 0: return 0;                                                     // nothing moves
    case 1: return p == round % world ? int64_t(share) - q : 0;           // everything to one rank
    case 2: return (q + p) % 2 == 0 ? 0 : int64_t(mix(round * 131 + q * 17 + p) % (share + 1));
    case 3: return q == p ? int64_t(share) : 1;                           // mostly to itself
    default: return int64_t(mix(round * 7919 + q * 31 + p) % (share + 1));
  }
}

inline void put(char* p, uint64_t i, size_t es, uint32_t v) {
  if (es == 4) std::memcpy(p + i * 4, &v, 4);
  else {
    const uint16_t h = static_cast<uint16_t>(v);
    std::memcpy(p + i * 2, &h, 2);
  }
}

inline uint32_t get(const char* p, uint64_t i, size_t es) {
  if (es == 4) {
    uint32_t v;
    std::memcpy(&v, p + i * 4, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, p + i * 2, 2);
  return h;
}

inline uint32_t narrow(uint32_t v, size_t es) { return es == 4 ? v : (v & 0xffffu); }

}  // namespace a2a
