// CUDA-graph capture and replay of symmem's work (include/symmem.h, "CUDA graphs"). The kernels
// need nothing special to be captured: their epochs live in device memory (cuda/layout.h). What is
// here is the host side: which streams are capturing, which buffers a symmem capture has touched,
// and the instantiated graph that replays in order with the buffers' other work.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <vector>

#include "core/backend.h"

namespace symmem::cuda {

class DeviceBuffer;

// True while a symmem capture is open anywhere in this process: one relaxed load, so that the
// launch path asks for more only while someone captures.
bool captures_open();
// Adds `b` to the symmem capture open on stream s, if there is one (and counts it in b->graphs,
// so the buffer cannot be freed under the graph to come). Any thread; cheap when none is open.
void note_captured(void* s, DeviceBuffer* b);
// Whether stream s is capturing now (cudaStreamIsCapturing; an invalidated capture counts as
// capturing: work may not go there either). The legacy stream (NULL) is never captured here.
symmem_status stream_capturing(void* s, bool* capturing, const char* what);

// SYMMEM_ERR_STATE naming `what` when this thread has a symmem capture open: calls that wait for the
// whole device (cudaDeviceSynchronize, cudaMalloc, cudaMemcpy) are forbidden to a thread-local
// capture's thread, and CUDA would end the capture with an error instead of refusing the call.
symmem_status refuse_device_wait_in_capture(const char* what);

symmem_status begin_capture(int device, void* s);
symmem_status end_capture(int device, void* s, symmem_graph** out);

}  // namespace symmem::cuda
