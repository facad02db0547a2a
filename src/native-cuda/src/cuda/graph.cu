// CUDA-graph capture and replay (cuda/graph.h). A capture is the CUDA runtime's own stream capture
// (thread-local mode); symmem adds the list of buffers the captured work uses, so that a replay can
// be ordered with their other work and freeing one of them under a live graph is refused.
#include "cuda/graph.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include "core/hot_count.h"
#include "cuda/device_buffer.h"
#include "cuda/driver.h"

namespace symmem::cuda {

namespace {

struct OpenCapture {
  void* stream;
  int device;
  std::thread::id thread;  // thread-local mode: only this thread's calls are restricted
  std::vector<DeviceBuffer*> buffers;  // each counted once in its `graphs`
};

std::mutex g_captures_mutex;
std::vector<OpenCapture> g_captures;  // open symmem captures (a handful at most)
std::atomic<int> g_captures_open{0};

OpenCapture* find_capture(void* s) {
  for (auto& c : g_captures)
    if (c.stream == s) return &c;
  return nullptr;
}

// Lets go of the buffers a capture or a graph counted.
void release_buffers(const std::vector<DeviceBuffer*>& buffers) {
  for (DeviceBuffer* b : buffers) b->graphs.fetch_sub(1, std::memory_order_acq_rel);
}

// The replay's claim on its buffers, as one_caller (core/one_caller.h) claims one for a call: a
// second thread that issues on one of them meanwhile is refused rather than interleaved.
class BufferClaims {
 public:
  ~BufferClaims() {
    for (symmem_buffer* b : held_) {
      b->call_what.store(nullptr, std::memory_order_release);
      b->call_busy.store(false, std::memory_order_release);
    }
  }
  symmem_status take(symmem_buffer* b) {
    bool expected = false;
    if (!b->call_busy.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      const char* inside = b->call_what.load(std::memory_order_acquire);
      return fail(SYMMEM_ERR_STATE,
                  "symmem_graph_replay: another thread is issuing a call on one of the graph's "
                  "buffers right now (%s); the calls on one buffer, replays included, form one "
                  "sequence that every rank issues in the same order: issue them from one thread",
                  inside != nullptr ? inside : "a call just starting");
    }
    b->call_what.store("symmem_graph_replay", std::memory_order_release);
    held_.push_back(b);
    return SYMMEM_OK;
  }

 private:
  std::vector<symmem_buffer*> held_;
};

class CudaGraph : public symmem_graph {
 public:
  CudaGraph(int device, cudaGraphExec_t exec, uint64_t nodes, std::vector<DeviceBuffer*> buffers)
      : device_(device), exec_(exec), nodes_(nodes), buffers_(std::move(buffers)) {}
  ~CudaGraph() override {
    cudaSetDevice(device_);
    cudaGraphExecDestroy(exec_);  // a replay in flight completes first (CUDA frees it afterwards)
    cudaGetLastError();
    release_buffers(buffers_);
  }

  symmem_status replay(void* s) override {
    SYMMEM_RT(cudaSetDevice(device_), "cudaSetDevice(%d)", device_);
    BufferClaims claims;
    for (DeviceBuffer* b : buffers_) SYMMEM_TRY(claims.take(b));
    bool capturing = false;
    for (DeviceBuffer* b : buffers_) {
      if (const symmem_status st = b->replay_before(s, &capturing); st != SYMMEM_OK) {
        prefix_error("symmem_graph_replay: ");
        return st;
      }
    }
    SYMMEM_RT(cudaGraphLaunch(exec_, static_cast<cudaStream_t>(s)),
              "symmem_graph_replay: cudaGraphLaunch(stream %p)", s);
    for (DeviceBuffer* b : buffers_) SYMMEM_TRY(b->replay_after(s, capturing));
    return SYMMEM_OK;
  }

  symmem_status synchronize(void* s) override {
    SYMMEM_RT(cudaSetDevice(device_), "cudaSetDevice(%d)", device_);
    bool capturing = false;
    SYMMEM_TRY(stream_capturing(s, &capturing, "symmem_graph_synchronize"));
    if (capturing)
      return fail(SYMMEM_ERR_STATE,
                  "symmem_graph_synchronize: stream %p is capturing a CUDA graph; a host wait "
                  "cannot be captured",
                  s);
    SYMMEM_RT(cudaStreamSynchronize(static_cast<cudaStream_t>(s)),
              "symmem_graph_synchronize: cudaStreamSynchronize(stream %p)", s);
    // Every buffer's record is read (and cleared); the first failure is reported.
    symmem_status first = SYMMEM_OK;
    std::string message;
    for (DeviceBuffer* b : buffers_) {
      const symmem_status st = b->check();
      if (st != SYMMEM_OK && first == SYMMEM_OK) {
        first = st;
        message = last_error();
      }
    }
    if (first != SYMMEM_OK) return fail(first, "%s", message.c_str());
    return SYMMEM_OK;
  }

  int buffer_count() const override { return static_cast<int>(buffers_.size()); }
  uint64_t node_count() const override { return nodes_; }

 private:
  int device_;
  cudaGraphExec_t exec_;
  uint64_t nodes_;
  std::vector<DeviceBuffer*> buffers_;
};

const char* capture_status_name(cudaStreamCaptureStatus st) {
  switch (st) {
    case cudaStreamCaptureStatusNone: return "not capturing";
    case cudaStreamCaptureStatusActive: return "capturing";
    case cudaStreamCaptureStatusInvalidated: return "capturing, invalidated by an earlier error";
    default: return "in an unknown capture state";
  }
}

}  // namespace

bool captures_open() { return g_captures_open.load(std::memory_order_relaxed) != 0; }

void note_captured(void* s, DeviceBuffer* b) {
  std::lock_guard<std::mutex> lock(g_captures_mutex);
  OpenCapture* c = find_capture(s);
  if (c == nullptr) return;  // a capture the caller began with the CUDA runtime itself
  if (std::find(c->buffers.begin(), c->buffers.end(), b) != c->buffers.end()) return;
  b->graphs.fetch_add(1, std::memory_order_acq_rel);
  c->buffers.push_back(b);
}

void* stream_captured_by_this_thread() {
  if (!captures_open()) return nullptr;
  std::lock_guard<std::mutex> lock(g_captures_mutex);
  for (const auto& c : g_captures)
    if (c.thread == std::this_thread::get_id()) return c.stream;
  return nullptr;
}

symmem_status refuse_device_wait_in_capture(const char* what) {
  void* s = stream_captured_by_this_thread();
  if (s == nullptr) return SYMMEM_OK;
  return fail(SYMMEM_ERR_STATE,
              "%s: this thread is capturing a CUDA graph on stream %p, and this call waits for the "
              "whole device, which a capture forbids (it would end the capture with an error): call "
              "it before symmem_graph_capture_begin or after symmem_graph_capture_end, or copy inside "
              "the graph with cudaMemcpyAsync on the capturing stream",
              what, s);
}

symmem_status stream_capturing(void* s, bool* capturing, const char* what) {
  *capturing = false;
  if (s == nullptr) return SYMMEM_OK;
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  SYMMEM_HOT_COUNT(kIsCapturing);
  SYMMEM_RT(cudaStreamIsCapturing(static_cast<cudaStream_t>(s), &st),
            "%s: cudaStreamIsCapturing(stream %p)", what, s);
  *capturing = st != cudaStreamCaptureStatusNone;
  return SYMMEM_OK;
}

symmem_status begin_capture(int device, void* s) {
  SYMMEM_RT(cudaSetDevice(device), "cudaSetDevice(%d)", device);
  auto stream = static_cast<cudaStream_t>(s);
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  SYMMEM_RT(cudaStreamIsCapturing(stream, &st),
            "symmem_graph_capture_begin: cudaStreamIsCapturing(stream %p)", s);
  if (st != cudaStreamCaptureStatusNone)
    return fail(SYMMEM_ERR_STATE,
                "symmem_graph_capture_begin: stream %p is %s already; end that capture first", s,
                capture_status_name(st));
  std::lock_guard<std::mutex> lock(g_captures_mutex);
  // Thread-local: other threads' work (their own buffers' collectives, copies) is neither
  // captured nor refused while this thread captures.
  SYMMEM_RT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
            "symmem_graph_capture_begin: cudaStreamBeginCapture(stream %p)", s);
  g_captures.push_back({s, device, std::this_thread::get_id(), {}});
  g_captures_open.fetch_add(1, std::memory_order_relaxed);
  return SYMMEM_OK;
}

symmem_status end_capture(int device, void* s, symmem_graph** out) {
  SYMMEM_RT(cudaSetDevice(device), "cudaSetDevice(%d)", device);
  std::vector<DeviceBuffer*> buffers;
  {
    std::lock_guard<std::mutex> lock(g_captures_mutex);
    OpenCapture* c = find_capture(s);
    if (c == nullptr)
      return fail(SYMMEM_ERR_STATE,
                  "symmem_graph_capture_end: stream %p has no capture begun by "
                  "symmem_graph_capture_begin",
                  s);
    if (c->device != device)
      return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                  "symmem_graph_capture_end: the capture of stream %p was begun on device %d, this "
                  "backend's device is %d",
                  s, c->device, device);
    buffers = std::move(c->buffers);
    g_captures.erase(g_captures.begin() + (c - g_captures.data()));
    g_captures_open.fetch_sub(1, std::memory_order_relaxed);
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(static_cast<cudaStream_t>(s), &graph);
  if (ended != cudaSuccess) {
    cudaGetLastError();
    release_buffers(buffers);
    return fail(SYMMEM_ERR_STATE,
                "symmem_graph_capture_end: the capture of stream %p failed: %s (%s); an operation "
                "that cannot be captured was issued during it (a host wait, a synchronous copy, a "
                "wait for an event recorded outside the capture); the capture is over",
                s, cudaGetErrorName(ended), cudaGetErrorString(ended));
  }
  size_t nodes = 0;
  cudaGraphGetNodes(graph, nullptr, &nodes);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (made != cudaSuccess) {
    cudaGetLastError();
    release_buffers(buffers);
    return fail_rt(made, "symmem_graph_capture_end: cudaGraphInstantiate (%zu nodes)", nodes);
  }
  *out = new CudaGraph(device, exec, nodes, std::move(buffers));
  return SYMMEM_OK;
}

symmem_status DeviceBackend::graph_capture_begin(void* stream) {
  return begin_capture(info_.device, stream);
}

symmem_status DeviceBackend::graph_capture_end(void* stream, symmem_graph** out) {
  return end_capture(info_.device, stream, out);
}

}  // namespace symmem::cuda
