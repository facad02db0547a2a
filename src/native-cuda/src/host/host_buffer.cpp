#include "host/host_buffer.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/status.h"

namespace symmem::host {
namespace {

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

symmem_status HostBuffer::create(uint64_t size_bytes, std::shared_ptr<PoolHolder> pool,
                                symmem_buffer** out) {
  const size_t page = page_size();
  // Refuse sizes whose rounding or mapping length (twice the data) would overflow size_t / off_t.
  if (size_bytes > (uint64_t{1} << 61))
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "size_bytes %llu is too large",
                static_cast<unsigned long long>(size_bytes));
  HostBuffer* b = new HostBuffer();
  b->requested_ = size_bytes;
  b->pool_ = std::move(pool);
  b->data_bytes_ = round_up(size_bytes, page);
  b->pad_bytes_ = round_up(kSignalPadBytes, page);  // channels, marks, reasons, values
  // memfd: anonymous, shareable by fd, zero-filled (so signal pads start cleared), and it vanishes
  // with its last fd/mapping. CLOEXEC so a child we spawn never inherits it.
  b->fd_ = memfd_create("symmem", MFD_CLOEXEC);
  if (b->fd_ < 0) {
    delete b;
    return fail_errno(errno, "memfd_create for a %llu-byte buffer",
                      static_cast<unsigned long long>(size_bytes));
  }
  const size_t bytes = b->mapping_bytes();
  if (ftruncate(b->fd_, static_cast<off_t>(bytes)) != 0) {
    int err = errno;
    delete b;
    return fail_errno(err, "ftruncate memfd to %zu bytes", bytes);
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd_, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    delete b;
    return fail_errno(err, "mmap of the %zu-byte local buffer", bytes);
  }
  b->local_ = p;
  *out = b;
  return SYMMEM_OK;
}

HostBuffer::~HostBuffer() {
  for (size_t r = 0; r < maps_.size(); ++r)
    if (maps_[r] != nullptr && maps_[r] != local_) munmap(maps_[r], mapping_bytes());
  if (local_ != nullptr) munmap(local_, mapping_bytes());
  if (fd_ >= 0) close(fd_);
}

symmem_status HostBuffer::export_fd(int* out_fd) {
  *out_fd = fd_;
  return SYMMEM_OK;
}

symmem_status HostBuffer::import(int rank, int world, const int* fds) {
  // The rank's threads start with the first imported buffer (now that rank and world are known),
  // before anything is mapped: nothing to undo if that throws.
  WorkerPool& workers = pool_->pool(rank, world);
  const size_t bytes = mapping_bytes();
  std::vector<void*> maps(world, nullptr);
  maps[rank] = local_;
  // Any failure must leave the buffer exactly as before: unmap what this call mapped.
  auto undo = [&]() {
    for (int r = 0; r < world; ++r)
      if (r != rank && maps[r] != nullptr) munmap(maps[r], bytes);
  };
  for (int r = 0; r < world; ++r) {
    if (r == rank) continue;
    struct stat st;
    if (fstat(fds[r], &st) != 0) {
      int err = errno;
      undo();
      if (err == EBADF)
        return fail(SYMMEM_ERR_INVALID_ARGUMENT, "fds[%d] (%d) is not an open file descriptor", r,
                    fds[r]);
      return fail_errno(err, "fstat of rank %d's fd %d", r, fds[r]);
    }
    // Same geometry is what makes the buffer symmetric: compare data sizes (page-rounded, as
    // that is all the fd records), after checking the fd is big enough to hold a pad at all.
    const long long peer_total = static_cast<long long>(st.st_size);
    if (peer_total != static_cast<long long>(bytes)) {
      undo();
      if (peer_total < static_cast<long long>(pad_bytes_))
        return fail(SYMMEM_ERR_MISMATCH,
                    "rank %d's fd %d is not a symmem buffer (%lld bytes, smaller than a signal pad)",
                    r, fds[r], peer_total);
      return fail(SYMMEM_ERR_MISMATCH, "rank %d's buffer is %lld bytes, this rank's is %zu", r,
                  (peer_total - static_cast<long long>(pad_bytes_)) / 2, data_bytes_);
    }
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[r], 0);
    if (p == MAP_FAILED) {
      int err = errno;
      undo();
      return fail_errno(err, "mmap of rank %d's buffer (fd %d, %zu bytes)", r, fds[r], bytes);
    }
    maps[r] = p;
  }
  workers_ = &workers;
  maps_ = std::move(maps);
  rank_ = rank;
  world_ = world;
  return SYMMEM_OK;
}

bool HostBuffer::overlaps(const void* p, size_t n) const {
  const char* lo = static_cast<const char*>(p);
  const char* hi = lo + (n == 0 ? 1 : n);
  auto hits = [&](const void* base) {
    const char* b = static_cast<const char*>(base);
    return base != nullptr && lo < b + mapping_bytes() && b < hi;
  };
  if (hits(local_)) return true;
  for (void* m : maps_)
    if (hits(m)) return true;
  return false;
}

}  // namespace symmem::host
