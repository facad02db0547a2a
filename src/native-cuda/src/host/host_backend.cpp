// The "host" backend: symmetric buffers in shared CPU memory. Always available; the default.
#include <cstring>
#include <memory>

#include "core/backend.h"
#include "host/host_buffer.h"
#include "host/host_settings.h"

namespace symmem {
namespace {

class HostBackend final : public symmem_backend {
 public:
  explicit HostBackend(const host::HostSettings& settings)
      : pool_(std::make_shared<host::PoolHolder>(settings)) {
    std::memset(&info_, 0, sizeof info_);
    std::strncpy(info_.name, "host", sizeof info_.name - 1);
    std::strncpy(info_.device_name, "cpu", sizeof info_.device_name - 1);
    info_.device = -1;
    info_.device_count = 1;  // the CPU
  }
  const symmem_backend_info& info() const override { return info_; }
  symmem_status alloc(uint64_t size_bytes, symmem_buffer** out) override {
    return host::HostBuffer::create(size_bytes, pool_, out);
  }

 private:
  symmem_backend_info info_;
  // Shared with every buffer: the workers outlive the backend while a buffer still uses them.
  std::shared_ptr<host::PoolHolder> pool_;
};

}  // namespace

symmem_status open_host_backend(symmem_backend** out) {
  host::HostSettings settings;
  if (symmem_status s = host::read_host_settings(&settings); s != SYMMEM_OK) return s;
  *out = new HostBackend(settings);
  return SYMMEM_OK;
}

}  // namespace symmem
