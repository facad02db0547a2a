// The "host" backend: symmetric buffers in shared CPU memory. Always available; the default.
#include <cstring>

#include "core/backend.h"
#include "host/host_buffer.h"

namespace symmem {
namespace {

class HostBackend final : public symmem_backend {
 public:
  HostBackend() {
    std::memset(&info_, 0, sizeof info_);
    std::strncpy(info_.name, "host", sizeof info_.name - 1);
    std::strncpy(info_.device_name, "cpu", sizeof info_.device_name - 1);
    info_.device = -1;
    info_.device_count = 1;  // the CPU
  }
  const symmem_backend_info& info() const override { return info_; }
  symmem_status alloc(uint64_t size_bytes, symmem_buffer** out) override {
    return host::HostBuffer::create(size_bytes, out);
  }

 private:
  symmem_backend_info info_;
};

}  // namespace

symmem_status open_host_backend(symmem_backend** out) {
  *out = new HostBackend();
  return SYMMEM_OK;
}

}  // namespace symmem
