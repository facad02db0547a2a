// The backend interface. The opaque C handles are these C++ classes themselves: the C entry points
// (api_*.cpp) validate arguments and state, then call the virtual methods, so a backend only
// implements the work and never re-checks ranges.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/abi.h"

struct symmem_buffer {
  virtual ~symmem_buffer() = default;

  virtual symmem_status export_fd(int* out_fd) = 0;
  // rank/world are in range, fds[r] >= 0 for r != rank, and the buffer is not imported yet.
  virtual symmem_status import(int rank, int world, const int* fds) = 0;

  virtual uint64_t size() const = 0;  // bytes the caller asked for
  virtual int rank() const = 0;       // -1 before import
  virtual int world() const = 0;      // 0 before import
  bool imported() const { return world() > 0; }

  // r is SYMMEM_RANK_SELF or, after import, 0..world-1.
  virtual void* ptr(int r) = 0;
  virtual void* signal_pad(int r) = 0;
  // True if [p, p + n) touches any memory this buffer maps (own or peers').
  virtual bool overlaps(const void* p, size_t n) const = 0;

  // Imported; peer/channel in range; peer != own rank.
  virtual symmem_status put_signal(int peer, int channel, int timeout_ms) = 0;
  virtual symmem_status wait_signal(int peer, int channel, int timeout_ms) = 0;
  virtual symmem_status barrier(int channel, int timeout_ms) = 0;
  // Imported; count * 4 <= size(); out does not overlap; float32 sum.
  virtual symmem_status all_reduce_sum_f32(uint64_t count, float* out, int channel,
                                           int timeout_ms) = 0;
};

struct symmem_backend {
  virtual ~symmem_backend() = default;
  virtual const symmem_backend_info& info() const = 0;
  // size_bytes > 0.
  virtual symmem_status alloc(uint64_t size_bytes, symmem_buffer** out) = 0;
};

namespace symmem {

// src/host
symmem_status open_host_backend(symmem_backend** out);
// src/cuda when built with nvcc, else core/cuda_stub.cpp.
symmem_status open_cuda_backend(int device, symmem_backend** out);
symmem_status cuda_device_count(int* out);

}  // namespace symmem
