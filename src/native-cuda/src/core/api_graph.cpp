// C entry points for CUDA-graph capture and replay (include/symmem.h, "CUDA graphs"). The work is
// the backend's (cuda/graph.cu); the host backend has nothing to capture.
#include "core/abort.h"
#include "core/backend.h"
#include "core/validate.h"

using namespace symmem;

symmem_status symmem_backend::graph_capture_begin(void*) {
  return fail(SYMMEM_ERR_UNSUPPORTED,
              "symmem_graph_capture_begin: the %s backend has no CUDA graphs (its calls run "
              "synchronously on the CPU; there is nothing to capture)",
              info().name);
}

symmem_status symmem_backend::graph_capture_end(void*, symmem_graph**) {
  return fail(SYMMEM_ERR_UNSUPPORTED, "symmem_graph_capture_end: the %s backend has no CUDA graphs",
              info().name);
}

namespace {

symmem_status check_capture_stream(symmem_backend* backend, void* stream, const char* what) {
  SYMMEM_REQUIRE(backend != nullptr, "%s: backend is NULL", what);
  SYMMEM_REQUIRE(stream != nullptr,
                 "%s: stream is NULL; the legacy default stream cannot be captured: pass a stream "
                 "of your own (symmem_stream_create)",
                 what);
  return SYMMEM_OK;
}

}  // namespace

extern "C" {

symmem_status symmem_graph_capture_begin(symmem_backend* backend, void* stream) {
  return guarded("symmem_graph_capture_begin", [&]() -> symmem_status {
    SYMMEM_TRY(check_capture_stream(backend, stream, "symmem_graph_capture_begin"));
    return backend->graph_capture_begin(stream);
  });
}

symmem_status symmem_graph_capture_end(symmem_backend* backend, void* stream, symmem_graph** out) {
  return guarded("symmem_graph_capture_end", [&]() -> symmem_status {
    SYMMEM_REQUIRE(out != nullptr, "symmem_graph_capture_end: out is NULL");
    *out = nullptr;
    SYMMEM_TRY(check_capture_stream(backend, stream, "symmem_graph_capture_end"));
    return backend->graph_capture_end(stream, out);
  });
}

symmem_status symmem_graph_replay(symmem_graph* graph, void* stream) {
  return guarded("symmem_graph_replay", [&]() -> symmem_status {
    SYMMEM_REQUIRE(graph != nullptr, "symmem_graph_replay: graph is NULL");
    SYMMEM_REQUIRE(stream != nullptr,
                   "symmem_graph_replay: stream is NULL; replay on a stream of your own (the "
                   "legacy default stream would serialise with every other stream)");
    SYMMEM_TRY(refuse_if_aborted("symmem_graph_replay"));
    return graph->replay(stream);
  });
}

symmem_status symmem_graph_synchronize(symmem_graph* graph, void* stream) {
  return guarded("symmem_graph_synchronize", [&]() -> symmem_status {
    SYMMEM_REQUIRE(graph != nullptr, "symmem_graph_synchronize: graph is NULL");
    return graph->synchronize(stream);
  });
}

int symmem_graph_buffer_count(symmem_graph* graph) {
  if (graph == nullptr) {
    fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_graph_buffer_count: graph is NULL");
    return -1;
  }
  return graph->buffer_count();
}

uint64_t symmem_graph_node_count(symmem_graph* graph) {
  if (graph == nullptr) {
    fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_graph_node_count: graph is NULL");
    return 0;
  }
  return graph->node_count();
}

symmem_status symmem_graph_free(symmem_graph* graph) {
  delete graph;
  return SYMMEM_OK;
}

}  // extern "C"
