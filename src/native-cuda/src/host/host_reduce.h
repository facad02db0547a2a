// The element work of the host collectives: reduce a range over the ranks' inputs, and copy a
// range. Both are split into chunks that any thread may run (see worker_pool.h); a chunk's result
// never depends on which thread runs it or on how the range was cut, because every element is
// reduced from rank 0 to rank world-1 in that order, accumulated in float32 as the cuda kernels do
// (cuda_kernels.cu): bf16/fp16 inputs are widened exactly, the sum/max/min runs in float32, AVG
// divides the float32 sum by world, and the result is rounded once to the element type (to
// nearest, ties to even). MAX/MIN follow fmaxf/fminf: a NaN loses against a number.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/abi.h"

namespace symmem::host {

// One reduction: element e of the result is op over src[0][e], ..., src[world-1][e], written to
// every dst[d][e]. Pointers already point at element 0 of the range.
struct ReduceJob {
  const void* src[SYMMEM_MAX_WORLD];
  void* dst[SYMMEM_MAX_WORLD];
  int world = 0;
  int ndst = 0;
  int dtype = SYMMEM_FLOAT32;
  int op = SYMMEM_SUM;
  uint64_t count = 0;       // elements
  uint64_t chunk = 0;       // elements per chunk (chunks(): how many)
  bool streaming = false;   // dst is not read again soon: store around the cache where possible
  uint64_t chunks() const { return (count + chunk - 1) / chunk; }
};
void reduce_chunk(const ReduceJob& job, uint64_t index);

// Copies: segment s moves bytes[s] bytes from src[s] to dst[s]; chunk i is the i-th `chunk`-byte
// piece of the segments laid end to end per segment (segment s owns chunks [s*per, (s+1)*per)).
struct CopyJob {
  const void* src[SYMMEM_MAX_WORLD];
  void* dst[SYMMEM_MAX_WORLD];
  uint64_t bytes[SYMMEM_MAX_WORLD];
  int segments = 0;
  uint64_t chunk = 0;          // bytes per chunk
  uint64_t per_segment = 0;    // chunks per segment (of the longest)
  uint64_t chunks() const { return per_segment * static_cast<uint64_t>(segments); }
};
void copy_chunk(const CopyJob& job, uint64_t index);

// Element conversions, exposed for the tests (exhaustive checks against the compiler's own).
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f);
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

size_t element_bytes(int dtype);

}  // namespace symmem::host
