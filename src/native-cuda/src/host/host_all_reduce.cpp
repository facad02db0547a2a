// One-shot all-reduce on host memory: every rank reads every peer's input directly.
#include <algorithm>
#include <cstring>

#include "core/status.h"
#include "host/host_buffer.h"

namespace symmem::host {
namespace {

// restrict + a plain loop: GCC vectorises this at -O3. Element-wise adds never reassociate, so
// the result is the same bits as the scalar loop.
void add_into(float* __restrict out, const float* __restrict in, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] += in[i];
}

// out = ((in[0] + in[1]) + in[2]) + ... in rank order, so every rank computes identical bits.
// Blocked so the partial sum stays in L1 while each peer's block streams through.
void sum_ranks(const float* const* in, int world, float* __restrict out, size_t count) {
  constexpr size_t kBlock = 2048;  // 8 KiB of floats
  for (size_t begin = 0; begin < count; begin += kBlock) {
    const size_t n = std::min(kBlock, count - begin);
    std::memcpy(out + begin, in[0] + begin, n * sizeof(float));
    for (int r = 1; r < world; ++r) add_into(out + begin, in[r] + begin, n);
  }
}

}  // namespace

symmem_status HostBuffer::all_reduce_sum_f32(uint64_t at, uint64_t count, float* out, int channel,
                                             int timeout_ms) {
  // Barrier 1: every rank's input is written (release/acquire through the signal pads).
  if (symmem_status s = barrier(channel, timeout_ms); s != SYMMEM_OK) {
    prefix_error("all_reduce_one_shot (waiting for inputs): ");
    return s;
  }
  std::vector<const float*> in(world_);
  for (int r = 0; r < world_; ++r) in[r] = reinterpret_cast<const float*>(data_at(r, at));
  sum_ranks(in.data(), world_, out, static_cast<size_t>(count));
  // Barrier 2: nobody overwrites its input while a peer may still be reading it.
  if (symmem_status s = barrier(channel, timeout_ms); s != SYMMEM_OK) {
    prefix_error("all_reduce_one_shot (waiting for peers to finish reading): ");
    return s;
  }
  return SYMMEM_OK;
}

}  // namespace symmem::host
