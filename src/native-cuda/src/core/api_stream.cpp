// C entry points for streams of a backend's device (cuda: non-blocking CUDA streams; host: NULL).
#include "core/backend.h"
#include "core/validate.h"

using namespace symmem;

extern "C" {

symmem_status symmem_stream_create(symmem_backend* backend, void** out_stream) {
  return guarded("symmem_stream_create", [&]() -> symmem_status {
    SYMMEM_REQUIRE(backend != nullptr, "symmem_stream_create: backend is NULL");
    SYMMEM_REQUIRE(out_stream != nullptr, "symmem_stream_create: out_stream is NULL");
    *out_stream = nullptr;
    return backend->stream_create(out_stream);
  });
}

symmem_status symmem_stream_destroy(symmem_backend* backend, void* stream) {
  return guarded("symmem_stream_destroy", [&]() -> symmem_status {
    if (stream == nullptr) return SYMMEM_OK;
    SYMMEM_REQUIRE(backend != nullptr, "symmem_stream_destroy: backend is NULL");
    return backend->stream_destroy(stream);
  });
}

}  // extern "C"
