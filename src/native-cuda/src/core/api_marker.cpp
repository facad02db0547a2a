// Stream markers: a point recorded in a stream that later says whether the stream has passed it
// (CUDA events on device backends; always passed on the host, whose streams are synchronous). The
// memory pool uses them so that a block freed while a stream still uses it is not handed out again
// before that stream has passed the free.
#include "core/abort.h"
#include "core/backend.h"
#include "core/deadline.h"
#include "core/validate.h"

using namespace symmem;

struct symmem_stream_marker {
  symmem_backend* backend;
  void* event;
  void* stream;
};

extern "C" {

symmem_status symmem_stream_marker_record(symmem_backend* backend, void* stream,
                                          symmem_stream_marker** out) {
  return guarded("symmem_stream_marker_record", [&]() -> symmem_status {
    SYMMEM_REQUIRE(backend != nullptr, "symmem_stream_marker_record: backend is NULL");
    SYMMEM_REQUIRE(out != nullptr, "symmem_stream_marker_record: out is NULL");
    *out = nullptr;
    void* event = nullptr;
    SYMMEM_TRY(backend->marker_record(stream, &event));
    *out = new symmem_stream_marker{backend, event, stream};
    return SYMMEM_OK;
  });
}

symmem_status symmem_stream_marker_query(symmem_stream_marker* marker, int* out_passed) {
  return guarded("symmem_stream_marker_query", [&]() -> symmem_status {
    SYMMEM_REQUIRE(marker != nullptr, "symmem_stream_marker_query: marker is NULL");
    SYMMEM_REQUIRE(out_passed != nullptr, "symmem_stream_marker_query: out_passed is NULL");
    return marker->backend->marker_query(marker->event, out_passed);
  });
}

symmem_status symmem_stream_marker_wait(symmem_stream_marker* marker, int timeout_ms) {
  return guarded("symmem_stream_marker_wait", [&]() -> symmem_status {
    SYMMEM_REQUIRE(marker != nullptr, "symmem_stream_marker_wait: marker is NULL");
    SYMMEM_TRY(check_timeout(timeout_ms));
    Deadline deadline(timeout_ms);
    Backoff backoff;
    for (;;) {
      int passed = 0;
      SYMMEM_TRY(marker->backend->marker_query(marker->event, &passed));
      if (passed) return SYMMEM_OK;
      if (aborted()) return fail_aborted("symmem_stream_marker_wait");
      if (deadline.expired())
        return fail(SYMMEM_ERR_TIMEOUT,
                    "symmem_stream_marker_wait: stream %p has not passed the marker within %d ms "
                    "(work enqueued before it is still running)",
                    marker->stream, timeout_ms);
      backoff.pause();
    }
  });
}

symmem_status symmem_stream_marker_free(symmem_stream_marker* marker) {
  if (marker == nullptr) return SYMMEM_OK;
  marker->backend->marker_destroy(marker->event);
  delete marker;
  return SYMMEM_OK;
}

}  // extern "C"
