// The peers' allocations of an fd-shared buffer, mapped into this process: each rank's cuMem
// allocation arrives as a POSIX fd (over symmem's channel) and is imported, mapped and made
// accessible to this device. Shared by every buffer whose own memory is a cuMem allocation that can
// be exported as an fd: the cuda backend's own cuMemCreate and NCCL's ncclMemAlloc.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "core/abi.h"
#include "cuda/device_buffer.h"
#include "cuda/driver.h"

namespace symmem::cuda {

class FdPeers {
 public:
  FdPeers() = default;
  FdPeers(const FdPeers&) = delete;
  FdPeers& operator=(const FdPeers&) = delete;
  ~FdPeers() { unmap_all(); }

  // Maps rank r's allocation from fds[r] for every r != rank (total bytes each, the own size);
  // bases[r] gets its address. `requested` only serves the size-mismatch message. On failure
  // nothing stays mapped.
  symmem_status map(const Driver* d, int device, uint64_t requested, uint64_t total, int rank,
                    int world, const int* fds, std::vector<CUdeviceptr>* bases);
  void unmap_all();

 private:
  struct Mapping {
    CUdeviceptr va = 0;
    uint64_t bytes = 0;
    bool mapped = false;
  };
  void unmap(Mapping& m);

  const Driver* drv_ = nullptr;
  std::vector<Mapping> maps_;  // maps_[own rank] stays empty
};

// The own allocation as an fd to send to the peers (the caller owns the fd). `allocation` is the
// start of a cuMem allocation; a pointer that is not one (cudaMalloc memory) gets a message that
// says so, with `origin` naming who allocated it.
symmem_status export_allocation_fd(const Driver* d, CUdeviceptr allocation, const char* origin,
                                   int* out_fd);

// A GPU buffer whose own memory is one cuMem allocation shared with the peers as a POSIX fd: export
// and import are the same whoever made the memory (CudaBuffer's cuMemCreate, NCCL's ncclMemAlloc).
// A subclass sets fd_ when it creates the memory, and in its destructor quiesces, then frees that
// memory; this class then unmaps the peers and closes the fd.
class FdSharedBuffer : public DeviceBuffer {
 public:
  ~FdSharedBuffer() override;
  symmem_status export_fd(int* out_fd) override {
    *out_fd = fd_;
    return SYMMEM_OK;
  }
  symmem_status import(int rank, int world, const int* fds) override;

 protected:
  // fd_name: how messages name a peer's fd ("fd", "ncclMemAlloc fd").
  explicit FdSharedBuffer(const char* fd_name) : fd_name_(fd_name) {}
  int fd_ = -1;

 private:
  const char* fd_name_;
  FdPeers peers_;
};

}  // namespace symmem::cuda
