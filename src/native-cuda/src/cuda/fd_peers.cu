#include "cuda/fd_peers.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "core/status.h"
#include "core/tunables.h"

namespace symmem::cuda {

void FdPeers::unmap(Mapping& m) {
  if (m.mapped) drv_->MemUnmap(m.va, m.bytes);
  if (m.va != 0) drv_->MemAddressFree(m.va, m.bytes);
  m = Mapping();
}

void FdPeers::unmap_all() {
  for (Mapping& m : maps_) unmap(m);
  maps_.clear();
}

symmem_status FdPeers::map(const Driver* d, int device, uint64_t requested, uint64_t total,
                           int rank, int world, const int* fds, std::vector<CUdeviceptr>* bases) {
  drv_ = d;
  unmap_all();
  maps_.assign(world, Mapping());
  bool ok = false;
  struct Undo {
    FdPeers* self;
    bool& ok;
    ~Undo() {
      if (!ok) self->unmap_all();
    }
  } undo{this, ok};
  CUmemAccessDesc acc;
  acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  acc.location.id = device;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  bases->assign(world, 0);
  for (int r = 0; r < world; ++r) {
    if (r == rank) continue;
    CUmemGenericAllocationHandle h;
    CUresult cr = d->MemImportFromShareableHandle(
        &h, reinterpret_cast<void*>(static_cast<uintptr_t>(fds[r])),
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    if (cr != CUDA_SUCCESS) {
      if (fcntl(fds[r], F_GETFD) < 0 && errno == EBADF)
        return fail(SYMMEM_ERR_INVALID_ARGUMENT, "fds[%d] (%d) is not an open file descriptor", r,
                    fds[r]);
      return fail_cu(cr, "cuMemImportFromShareableHandle(rank %d's fd %d; is it a symmem GPU "
                         "buffer?)", r, fds[r]);
    }
    Mapping& m = maps_[r];
    cr = d->MemAddressReserve(&m.va, total, 0, 0, 0);
    if (cr != CUDA_SUCCESS) {
      d->MemRelease(h);
      return fail_cu(cr, "cuMemAddressReserve for rank %d's buffer", r);
    }
    m.bytes = total;
    cr = d->MemMap(m.va, total, 0, h, 0);
    d->MemRelease(h);  // the mapping keeps the memory alive
    if (cr != CUDA_SUCCESS) {
      // A peer allocation of another size fails here, before the header check could name the
      // cause: INVALID_VALUE, or NOT_SUPPORTED (801: seen on 2 x H200 with the pad regions sized
      // differently), so the message names both candidates.
      if (cr == CUDA_ERROR_INVALID_VALUE || cr == CUDA_ERROR_NOT_SUPPORTED)
        return fail(SYMMEM_ERR_MISMATCH,
                    "rank %d's allocation cannot be mapped with this rank's size (%llu bytes "
                    "requested, %llu allocated; CUresult %d): the buffer sizes, "
                    "SYMMEM_CUDA_PUSH_SCRATCH_BYTES and SYMMEM_CUDA_LL128_MAX_BYTES (which size "
                    "the pad region; %llu and %llu on this rank) must be the same on every rank",
                    r, static_cast<unsigned long long>(requested),
                    static_cast<unsigned long long>(total), static_cast<int>(cr),
                    static_cast<unsigned long long>(tunable_value(Tunable::kCudaPushScratchBytes)),
                    static_cast<unsigned long long>(tunable_value(Tunable::kCudaLl128MaxBytes)));
      return fail_cu(cr, "cuMemMap of rank %d's buffer", r);
    }
    m.mapped = true;
    cr = d->MemSetAccess(m.va, total, &acc, 1);
    if (cr != CUDA_SUCCESS)
      return fail_cu(cr,
                     "cuMemSetAccess of rank %d's buffer for device %d (can this GPU reach the "
                     "peer's over P2P?)",
                     r, device);
    (*bases)[r] = m.va;
  }
  ok = true;
  return SYMMEM_OK;
}

symmem_status export_allocation_fd(const Driver* d, CUdeviceptr allocation, const char* origin,
                                   int* out_fd) {
  CUmemGenericAllocationHandle h;
  CUresult cr = d->MemRetainAllocationHandle(&h, reinterpret_cast<void*>(allocation));
  if (cr != CUDA_SUCCESS)
    return fail_cu(cr, "cuMemRetainAllocationHandle on memory from %s: it is not a cuMem (VMM) "
                       "allocation (with NCCL, is NCCL_CUMEM_ENABLE=0 set?), so it cannot be "
                       "shared with the peers", origin);
  int fd = -1;
  cr = d->MemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  d->MemRelease(h);  // only the retain's reference: the allocation stays its owner's
  if (cr != CUDA_SUCCESS)
    return fail_cu(cr, "cuMemExportToShareableHandle(POSIX fd) of memory from %s (was it created "
                       "without the POSIX fd handle type?)", origin);
  *out_fd = fd;
  return SYMMEM_OK;
}

FdSharedBuffer::~FdSharedBuffer() {
  peers_.unmap_all();
  if (fd_ >= 0) close(fd_);
}

symmem_status FdSharedBuffer::import(int rank, int world, const int* fds) {
  SYMMEM_TRY(set_device());
  std::vector<CUdeviceptr> bases;
  SYMMEM_TRY(peers_.map(drv_, device_, requested_, total_, rank, world, fds, &bases));
  bases[rank] = local_;
  symmem_status st = bind_peers(rank, world, bases, [&](int r) {
    return "rank " + std::to_string(r) + "'s " + fd_name_ + " " + std::to_string(fds[r]);
  });
  if (st != SYMMEM_OK) peers_.unmap_all();
  return st;
}

}  // namespace symmem::cuda
