// The ABI-1 collectives on the host backend: float32 on the CPU, synchronous (stream ignored).
// Reductions run in rank order, so every rank computes the same bits.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/status.h"
#include "host/host_buffer.h"

namespace symmem::host {
namespace {

void combine(float* __restrict acc, const float* __restrict in, size_t n, int op) {
  switch (op) {
    case SYMMEM_MAX:
      for (size_t i = 0; i < n; ++i) acc[i] = std::max(acc[i], in[i]);
      break;
    case SYMMEM_MIN:
      for (size_t i = 0; i < n; ++i) acc[i] = std::min(acc[i], in[i]);
      break;
    default:  // SUM, AVG
      for (size_t i = 0; i < n; ++i) acc[i] += in[i];
  }
}

// out[0..n) = op over ranks of in[r][0..n), blocked to stay in L1.
void reduce_ranks(const std::vector<const float*>& in, int op, float* out, size_t n) {
  constexpr size_t kBlock = 2048;
  const int world = static_cast<int>(in.size());
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t m = std::min(kBlock, n - b);
    std::memcpy(out + b, in[0] + b, m * sizeof(float));
    for (int r = 1; r < world; ++r) combine(out + b, in[r] + b, m, op);
    if (op == SYMMEM_AVG)
      for (size_t i = 0; i < m; ++i) out[b + i] /= static_cast<float>(world);
  }
}

symmem_status only_f32(int dtype, const char* what) {
  if (dtype == SYMMEM_FLOAT32) return SYMMEM_OK;
  return fail(SYMMEM_ERR_UNSUPPORTED,
              "%s: the host backend supports dtype SYMMEM_FLOAT32 only (got %d); use the cuda "
              "backend for bfloat16/float16",
              what, dtype);
}

}  // namespace

symmem_status HostBuffer::memset32(int r, uint64_t offset, uint32_t value, uint64_t count,
                                   void*) {
  uint32_t* p = reinterpret_cast<uint32_t*>(static_cast<char*>(base(r == rank_ ? SYMMEM_RANK_SELF : r)) + offset);
  for (uint64_t i = 0; i < count; ++i) __atomic_store_n(p + i, value, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  return SYMMEM_OK;
}

symmem_status HostBuffer::write_value32(int r, uint64_t offset, uint32_t value, void*) {
  uint32_t* p = reinterpret_cast<uint32_t*>(static_cast<char*>(base(r == rank_ ? SYMMEM_RANK_SELF : r)) + offset);
  __atomic_store_n(p, value, __ATOMIC_RELEASE);
  return SYMMEM_OK;
}

symmem_status HostBuffer::all_reduce(uint64_t at, int, int dtype, int op, uint64_t count, void* out,
                                     void*, int timeout_ms) {
  if (symmem_status s0 = only_f32(dtype, "all_reduce"); s0 != SYMMEM_OK) return s0;
  const int ch = kCollectiveChannel;
  if (symmem_status s = barrier(ch, timeout_ms); s != SYMMEM_OK) {
    prefix_error("all_reduce (waiting for inputs): ");
    return s;
  }
  std::vector<const float*> in(world_);
  for (int r = 0; r < world_; ++r) in[r] = reinterpret_cast<const float*>(data_at(r, at));
  std::vector<float> tmp;
  float* dst = static_cast<float*>(out);
  if (dst == nullptr) {
    tmp.resize(count);
    dst = tmp.data();
  }
  reduce_ranks(in, op, dst, static_cast<size_t>(count));
  if (symmem_status s = barrier(ch, timeout_ms); s != SYMMEM_OK) {
    prefix_error("all_reduce (waiting for peers to finish reading): ");
    return s;
  }
  // In place: peers are done reading, so the own input can be replaced now.
  if (out == nullptr) std::memcpy(data_at(rank_, at), tmp.data(), count * sizeof(float));
  return SYMMEM_OK;
}

symmem_status HostBuffer::all_gather(uint64_t at, int dtype, uint64_t count, void* out, void*,
                                     int timeout_ms) {
  if (symmem_status s0 = only_f32(dtype, "all_gather"); s0 != SYMMEM_OK) return s0;
  const int ch = kCollectiveChannel;
  const size_t bytes = count * sizeof(float);
  if (symmem_status s = barrier(ch, timeout_ms); s != SYMMEM_OK) {
    prefix_error("all_gather (waiting for inputs): ");
    return s;
  }
  for (int r = 0; r < world_; ++r) {
    if (out != nullptr)
      std::memcpy(static_cast<char*>(out) + r * bytes, data_at(r, at), bytes);
    else if (r != rank_)
      std::memcpy(data_at(rank_, at) + r * bytes, data_at(r, at) + r * bytes, bytes);
  }
  if (symmem_status s = barrier(ch, timeout_ms); s != SYMMEM_OK) {
    prefix_error("all_gather (waiting for peers to finish reading): ");
    return s;
  }
  return SYMMEM_OK;
}

symmem_status HostBuffer::reduce_scatter(uint64_t at, int dtype, int op, uint64_t count, void* out,
                                         void*, int timeout_ms) {
  if (symmem_status s0 = only_f32(dtype, "reduce_scatter"); s0 != SYMMEM_OK) return s0;
  const int ch = kCollectiveChannel;
  if (symmem_status s = barrier(ch, timeout_ms); s != SYMMEM_OK) {
    prefix_error("reduce_scatter (waiting for inputs): ");
    return s;
  }
  std::vector<const float*> in(world_);
  for (int r = 0; r < world_; ++r)
    in[r] = reinterpret_cast<const float*>(data_at(r, at)) + rank_ * count;
  std::vector<float> tmp;
  float* dst = static_cast<float*>(out);
  if (dst == nullptr) {  // block rank_ of the own buffer is read by nobody else: safe in place,
    tmp.resize(count);   // but reduce into a copy since the own block is one of the inputs
    dst = tmp.data();
  }
  reduce_ranks(in, op, dst, static_cast<size_t>(count));
  if (out == nullptr)
    std::memcpy(reinterpret_cast<float*>(data_at(rank_, at)) + rank_ * count, tmp.data(),
                count * sizeof(float));
  if (symmem_status s = barrier(ch, timeout_ms); s != SYMMEM_OK) {
    prefix_error("reduce_scatter (waiting for peers to finish reading): ");
    return s;
  }
  return SYMMEM_OK;
}

}  // namespace symmem::host
