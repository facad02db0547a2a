// The shared part of the GPU-memory buffers (cuda/device_buffer.h): kernels, signals, error
// record, copies, algorithm choice, peer checks. Nothing here allocates or maps the data memory.
#include "cuda/device_buffer.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "core/abort.h"
#include "core/hot_count.h"
#include "core/status.h"
#include "core/tunables.h"
#include "cuda/graph.h"
#include "cuda/kernels.h"

namespace symmem::cuda {

namespace {

uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

// Streams made by symmem_stream_create and not yet destroyed. symmem_stream_destroy synchronizes a
// stream before it leaves this set, so a stream that is not here any more has no work left.
std::mutex g_streams_mutex;
std::unordered_set<void*> g_streams;

// The process's abort word for device code: pinned, mapped into every device's address space
// (portable), allocated once on the first buffer and kept for the life of the process (4 bytes),
// registered with the core so that symmem_abort sets it. Returns its device address, or an error.
symmem_status abort_word_for_devices(const uint32_t** out) {
  static std::mutex mutex;
  static uint32_t* host = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (host == nullptr) {
    void* p = nullptr;
    SYMMEM_RT(cudaHostAlloc(&p, sizeof(uint32_t), cudaHostAllocMapped | cudaHostAllocPortable),
              "cudaHostAlloc(abort word)");
    host = static_cast<uint32_t*>(p);
    register_abort_word(host);
  }
  void* dev = nullptr;
  SYMMEM_RT(cudaHostGetDevicePointer(&dev, host, 0), "cudaHostGetDevicePointer(abort word)");
  *out = static_cast<const uint32_t*>(dev);
  return SYMMEM_OK;
}

// Error records come from pinned, mapped slabs that live as long as the process and are reused:
// cudaFreeHost waits for the whole device (and page-locked allocation is one of the calls CUDA may
// serialise the device on), so a buffer allocated or freed by one thread would otherwise wait for
// the collectives other threads have in flight, and across ranks those can wait for this thread.
class ErrorRecords {
 public:
  symmem_status take(ErrorRecord** host, ErrorRecord** dev) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) {
      void* p = nullptr;
      SYMMEM_RT(cudaHostAlloc(&p, kPerSlab * sizeof(ErrorRecord),
                              cudaHostAllocMapped | cudaHostAllocPortable),
                "cudaHostAlloc(error records)");
      void* d = nullptr;
      SYMMEM_RT(cudaHostGetDevicePointer(&d, p, 0), "cudaHostGetDevicePointer(error records)");
      const auto offset = reinterpret_cast<char*>(d) - reinterpret_cast<char*>(p);
      for (int i = kPerSlab - 1; i >= 0; --i) free_.push_back(static_cast<ErrorRecord*>(p) + i);
      offset_ = offset;  // portable + mapped: one device alias for the whole process (UVA)
    }
    *host = free_.back();
    free_.pop_back();
    std::memset(const_cast<ErrorRecord*>(*host), 0, sizeof(ErrorRecord));
    *dev = reinterpret_cast<ErrorRecord*>(reinterpret_cast<char*>(*host) + offset_);
    return SYMMEM_OK;
  }
  void give_back(ErrorRecord* host) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(host);
  }

 private:
  static constexpr int kPerSlab = 128;
  std::mutex mutex_;
  std::vector<ErrorRecord*> free_;
  std::ptrdiff_t offset_ = 0;
};

ErrorRecords& error_records() {
  static ErrorRecords* records = new ErrorRecords();  // never destroyed: kernels may outlive exit
  return *records;
}

// Every kernel loaded on `device` before this process's first buffer there is made, so before any
// collective can spin on it (cuda/kernels.h, load_all_kernels). Once per device; the current
// device is `device` (init_local set it). A kernel that cannot be loaded here is left to its first
// launch, which reports why.
// SYMMEM_CUDA_LOAD_KERNELS=0 leaves them to CUDA's lazy loading (a faster first buffer, for
// programs that issue collectives from one thread).
void load_kernels_once(int device) {
  static std::mutex mutex;
  static std::unordered_set<int> done;
  std::lock_guard<std::mutex> lock(mutex);
  if (done.count(device) != 0) return;
  const bool load = tunable_or(Tunable::kCudaLoadKernels, 1) != 0;
  if (load && load_all_kernels() != cudaSuccess) cudaGetLastError();
  done.insert(device);
}

const char* op_name(uint32_t op) {
  switch (op) {
    case kOpBarrier: return "barrier";
    case kOpPutSignal: return "put_signal";
    case kOpWaitSignal: return "wait_signal";
    case kOpAllReduceOneShot: return "all_reduce one-shot";
    case kOpAllReduceTwoShot: return "all_reduce two-shot";
    case kOpAllGather: return "all_gather";
    case kOpReduceScatter: return "reduce_scatter";
    case kOpAllReduceCe: return "all_reduce two-shot-ce";
    case kOpBroadcast: return "broadcast";
    case kOpAllToAll: return "all_to_all";
    case kOpAllToAllV: return "all_to_all_v";
    default: return "device wait";
  }
}

// What a copy-engine two-shot's wait was for (ErrorRecord: channel = CeFlag + 1, nbarriers = chunk).
void ce_waiting(const ErrorRecord& e, char* out, size_t cap) {
  switch (e.channel - 1) {
    case kCePushed:
      std::snprintf(out, cap, "for the push of chunk %d", e.nbarriers);
      break;
    case kCeConsumed:
      std::snprintf(out, cap, "for chunk %d's scratch slot to be read", e.nbarriers);
      break;
    default:
      std::snprintf(out, cap, "for the reduced chunks (%d)", e.nbarriers);
  }
}

// A size limit for messages: "the default" for all ones (the tunable unset: what fits).
const char* limit_text(uint64_t v, char (&out)[32]) {
  if (v == ~uint64_t{0}) return "the default";
  std::snprintf(out, sizeof out, "%llu bytes", static_cast<unsigned long long>(v));
  return out;
}

}  // namespace

std::string uuid_text(const uint8_t* u) {
  char b[48];
  std::snprintf(b, sizeof b,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
  return b;
}

symmem_status allocation_geometry(const Driver* d, int device, uint64_t size_bytes, bool ce_scratch,
                                  Geometry* g) {
  if (size_bytes > (uint64_t{1} << 50))
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "size_bytes %llu is too large",
                static_cast<unsigned long long>(size_bytes));
  const CUmemAllocationProp ap = fd_shareable_device_memory(device);
  size_t gran = 0;
  SYMMEM_CU(d->MemGetAllocationGranularity(&gran, &ap, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
            "cuMemGetAllocationGranularity(device %d)", device);
  // SYMMEM_CUDA_PUSH_SCRATCH_BYTES: room for 2 slots x 2 ranks of push scratch (the world is not
  // known before import; world 2 is where a push one-shot moves no more than a two-shot does).
  // A small buffer needs no more than its own size: up to about 114 KiB (with the 128-byte-line
  // area below) the pad region stays at one granularity (2 MiB), as with both at 0.
  const uint64_t per_rank = std::min(round_up(size_bytes, 256),
                                     round_up(tunable_value(Tunable::kCudaPushScratchBytes), 256));
  // Copy-engine scratch: two slots of at most size / 8 (a call on the whole buffer then moves each
  // half in at least 4 chunks, few enough that the copies' fixed cost stays small).
  const uint64_t ce_slot_max = tunable_value(Tunable::kCudaCeSlotBytes);
  const bool ce = ce_scratch && ce_slot_max > 0 && size_bytes >= tunable_value(Tunable::kCudaCeMinBytes);
  g->ce_slot = ce ? std::min(round_up(ce_slot_max, 4096), round_up(size_bytes / 8, 4096)) : 0;
  // SYMMEM_CUDA_LL128_MAX_BYTES: 2 slots x 2 ranks of lines, as the push scratch, and the two-shot's
  // slack (0: none).
  const uint64_t ll128_max = tunable_value(Tunable::kCudaLl128MaxBytes);
  g->ll128_area =
      ll128_max > 0 ? 4 * ll128_lines_bytes(std::min(size_bytes, ll128_max)) + kLl128AreaSlack : 0;
  g->pad_region = round_up(std::max<uint64_t>(sizeof(PadRegion), kScratchOff + 4 * per_rank) +
                               g->ll128_area + 2 * g->ce_slot,
                           gran);
  g->total = g->pad_region + round_up(size_bytes, gran);
  return SYMMEM_OK;
}

namespace {
// The device this thread last made current through set_device: its primary context is current
// on this thread from then on, unless the caller switches devices (which cudaGetDevice sees).
thread_local int t_device_set = -1;
}  // namespace

// Every call on a buffer runs here first. cudaSetDevice makes the primary context current even
// when it already is (a driver call each time); cudaGetDevice only reads the runtime's state of
// this thread. The device is confirmed that way on every call, not only remembered: the caller
// may switch devices (torch, its own cudaSetDevice) between two of ours. A thread that never came
// through here gets the real cudaSetDevice once, so the context is current for the driver calls
// (cuLaunchKernelEx, cuStreamWriteValue32) that follow.
symmem_status DeviceBuffer::set_device() {
  int current = -1;
  t_launch_device = device_;
  SYMMEM_HOT_COUNT(kGetDevice);
  if (t_device_set == device_ && cudaGetDevice(&current) == cudaSuccess && current == device_)
    return SYMMEM_OK;
  SYMMEM_HOT_COUNT(kSetDevice);
  SYMMEM_RT(cudaSetDevice(device_), "cudaSetDevice(%d)", device_);
  t_device_set = device_;
  return SYMMEM_OK;
}

symmem_status DeviceBuffer::init_local(const Driver* d, int device, uint64_t size_bytes,
                                       const Geometry& g, CUdeviceptr local) {
  drv_ = d;
  device_ = device;
  requested_ = size_bytes;
  pad_region_ = g.pad_region;
  total_ = g.total;
  ce_slot_ = g.ce_slot;
  ll128_area_ = g.ll128_area;
  local_ = local;
  SYMMEM_TRY(set_device());
  cudaDeviceProp prop;
  SYMMEM_RT(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties(%d)", device);
  std::memcpy(uuid_, prop.uuid.bytes, 16);
  // Non-blocking: the legacy default stream, which other code may use, never waits for this
  // buffer's kernels, nor they for it. Everything below is ordered on this stream alone: a buffer
  // made while other threads' collectives run does not wait for them.
  SYMMEM_RT(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  SYMMEM_TRY(error_records().take(&err_host_, &err_dev_));
  load_kernels_once(device);
  SYMMEM_TRY(abort_word_for_devices(&abort_dev_));
  // Signal pads, flags, epochs and claim start at zero; then the header.
  void* pad = reinterpret_cast<void*>(local_);
  SYMMEM_RT(cudaMemsetAsync(pad, 0, kHeaderOff, stream_), "cudaMemsetAsync(signal pad)");
  SYMMEM_RT(cudaMemsetAsync(static_cast<char*>(pad) + kEpochsOff, 0, sizeof(PadRegion) - kEpochsOff,
                            stream_),
            "cudaMemsetAsync(epochs)");
  // The low-latency lines too: memory a freed buffer left here may hold flags a new call expects.
  SYMMEM_RT(cudaMemsetAsync(static_cast<char*>(pad) + kLlOff, 0, kLlAreaBytes, stream_),
            "cudaMemsetAsync(low-latency area)");
  if (ll128_area_ > 0)
    SYMMEM_RT(cudaMemsetAsync(static_cast<char*>(pad) + ll128_off(), 0, ll128_area_, stream_),
              "cudaMemsetAsync(128-byte-line area)");
  Header h;
  std::memset(&h, 0, sizeof h);
  h.magic = kMagic;
  h.layout_version = kLayoutVersion;
  h.requested_bytes = size_bytes;
  h.total_bytes = total_;
  std::memcpy(h.uuid, uuid_, 16);
  h.device = device;
  h.pid = static_cast<int32_t>(getpid());
  h.pad_region_bytes = pad_region_;
  h.push_scratch_bytes = tunable_value(Tunable::kCudaPushScratchBytes);
  h.ce_slot_bytes = ce_slot_;
  h.ll_max_bytes = tuning().ll_max_bytes;
  h.push_max_bytes = tuning().push_max_bytes;
  h.ll128_max_bytes = tunable_value(Tunable::kCudaLl128MaxBytes);
  h.ll128_area_bytes = ll128_area_;
  SYMMEM_RT(cudaMemcpyAsync(static_cast<char*>(pad) + kHeaderOff, &h, sizeof h,
                            cudaMemcpyHostToDevice, stream_),
            "cudaMemcpyAsync(header)");
  SYMMEM_RT(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after alloc");
  return SYMMEM_OK;
}

// Waits for every launch symmem made on this buffer, whichever stream carried it, and for the
// buffer's own stream. Nothing else: other buffers' collectives may be waiting for peers that
// wait for this thread.
symmem_status DeviceBuffer::finish_own_work() {
  std::lock_guard<std::mutex> lock(order_mu_);
  if (last_order_ == Order::kLazy) {
    // The end of the last launch is marked under the streams lock (it keeps that stream from
    // being destroyed meanwhile) and waited for after the lock is released. The lock is the
    // process's: held across this wait, whose launch may be a barrier or collective spinning on a
    // peer, it stopped every other thread's copies and first launches, and with them kernels that
    // this wait's peer was itself waiting for: the ranks' threads stalled each other until a
    // deadline (test_cuda_copy_lock).
    std::lock_guard<std::mutex> streams(g_streams_mutex);
    if (!stream_known_locked(last_launch_stream_)) {
      last_order_ = Order::kNone;
    } else {
      auto last = static_cast<cudaStream_t>(last_launch_stream_);
      // Waiting for a capturing stream's work would end its capture with an error.
      bool capturing = false;
      SYMMEM_TRY(stream_capturing(last, &capturing, "waiting for the buffer's work"));
      if (capturing)
        return fail(SYMMEM_ERR_STATE,
                    "the buffer's work went to stream %p, which is capturing a CUDA graph now; a "
                    "copy or free waits for that work, which cannot happen during the capture: end "
                    "the capture first (symmem_graph_capture_end)",
                    last_launch_stream_);
      SYMMEM_TRY(ensure_order_event());
      SYMMEM_RT(cudaEventRecord(last_launch_, last), "cudaEventRecord (the buffer's last launch)");
      // Marked: the event stands for the last launch from here on, as after a foreign stream.
      last_order_ = Order::kRecorded;
    }
  }
  if (last_order_ == Order::kRecorded)
    SYMMEM_RT(cudaEventSynchronize(last_launch_), "cudaEventSynchronize (the buffer's last launch)");
  if (stream_ != nullptr)
    SYMMEM_RT(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (the buffer's stream)");
  return SYMMEM_OK;
}

void DeviceBuffer::quiesce() {
  if (device_ >= 0) cudaSetDevice(device_);
  (void)finish_own_work();
  cudaGetLastError();
}

DeviceBuffer::~DeviceBuffer() {
  quiesce();
  if (last_launch_ != nullptr) cudaEventDestroy(last_launch_);
  for (const CeStreams& p : ce_streams_) {
    cudaStreamDestroy(p.push);
    cudaStreamDestroy(p.back);
  }
  for (cudaEvent_t e : {ce_fork_, ce_reduced_, ce_pushes_done_, ce_returns_done_})
    if (e != nullptr) cudaEventDestroy(e);
  if (err_host_ != nullptr) error_records().give_back(const_cast<ErrorRecord*>(err_host_));
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  cudaGetLastError();
}

symmem_status DeviceBuffer::check_peer_header(int rank, int r, CUdeviceptr peer_base,
                                              const char* how_reached,
                                              std::array<uint8_t, 16>* uuid) {
  Header h2;
  SYMMEM_RT(cudaMemcpyAsync(&h2, reinterpret_cast<void*>(peer_base + kHeaderOff), sizeof h2,
                            cudaMemcpyDeviceToHost, stream_),
            "reading rank %d's buffer header (%s)", r, how_reached);
  SYMMEM_RT(cudaStreamSynchronize(stream_), "reading rank %d's buffer header (%s)", r, how_reached);
  if (h2.magic != kMagic || h2.layout_version != kLayoutVersion)
    return fail(SYMMEM_ERR_MISMATCH, "%s is not a symmem buffer of this backend (bad header)",
                how_reached);
  if (h2.requested_bytes != requested_)
    return fail(SYMMEM_ERR_MISMATCH, "rank %d's buffer is %llu bytes, this rank's is %llu", r,
                static_cast<unsigned long long>(h2.requested_bytes),
                static_cast<unsigned long long>(requested_));
  if (h2.ce_slot_bytes != ce_slot_)
    return fail(SYMMEM_ERR_MISMATCH,
                "rank %d's buffer has %llu-byte copy-engine scratch slots, rank %d's %llu-byte ones: "
                "set SYMMEM_CUDA_CE_SLOT_BYTES and SYMMEM_CUDA_CE_MIN_BYTES to the same values on "
                "every rank (unset is their default)",
                r, static_cast<unsigned long long>(h2.ce_slot_bytes), rank,
                static_cast<unsigned long long>(ce_slot_));
  if (h2.ll128_max_bytes != tunable_value(Tunable::kCudaLl128MaxBytes) ||
      h2.ll128_area_bytes != ll128_area_)
    return fail(SYMMEM_ERR_MISMATCH,
                "rank %d sends one-shots as 128-byte lines up to %llu bytes (SYMMEM_CUDA_LL128_MAX_BYTES "
                "there, a %llu-byte area), rank %d up to %llu (a %llu-byte area): a rank waits for its "
                "peers' lines where its own path puts them, so set SYMMEM_CUDA_LL128_MAX_BYTES to the "
                "same value on every rank (unset is its default)",
                r, static_cast<unsigned long long>(h2.ll128_max_bytes),
                static_cast<unsigned long long>(h2.ll128_area_bytes), rank,
                static_cast<unsigned long long>(tunable_value(Tunable::kCudaLl128MaxBytes)),
                static_cast<unsigned long long>(ll128_area_));
  if (h2.pad_region_bytes != pad_region_) {
    const uint64_t mine = tunable_value(Tunable::kCudaPushScratchBytes);
    return fail(SYMMEM_ERR_MISMATCH,
                "rank %d's buffer has a %llu-byte pad region (SYMMEM_CUDA_PUSH_SCRATCH_BYTES=%llu "
                "there), rank %d's a %llu-byte one (SYMMEM_CUDA_PUSH_SCRATCH_BYTES=%llu here): the push scratch is found at the same offset on every rank, so set "
                "SYMMEM_CUDA_PUSH_SCRATCH_BYTES to the same value on every rank",
                r, static_cast<unsigned long long>(h2.pad_region_bytes),
                static_cast<unsigned long long>(h2.push_scratch_bytes), rank,
                static_cast<unsigned long long>(pad_region_), static_cast<unsigned long long>(mine));
  }
  if (h2.ll_max_bytes != tuning().ll_max_bytes || h2.push_max_bytes != tuning().push_max_bytes) {
    char theirs[2][32], mine[2][32];
    return fail(SYMMEM_ERR_MISMATCH,
                "rank %d sends one-shots as low-latency lines up to %s and pushes all-reduces into "
                "its peers' scratch up to %s (SYMMEM_CUDA_LL_MAX_BYTES, SYMMEM_CUDA_PUSH_MAX_BYTES "
                "there), rank %d up to %s and "
                "%s: a rank waits for its peers' data where its own path puts it, so set both to the "
                "same values on every rank (unset is their default)",
                r, limit_text(h2.ll_max_bytes, theirs[0]), limit_text(h2.push_max_bytes, theirs[1]),
                rank, limit_text(tuning().ll_max_bytes, mine[0]),
                limit_text(tuning().push_max_bytes, mine[1]));
  }
  std::memcpy(uuid->data(), h2.uuid, 16);
  if (!overlapping_devices_allowed() && std::memcmp(h2.uuid, uuid_, 16) == 0)
    return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                "ranks %d and %d both use GPU %s (device %d here, device %d in rank %d's "
                "process): one GPU per rank, or set SYMMEM_ALLOW_OVERLAPPING_DEVICES=1",
                std::min(r, rank), std::max(r, rank), uuid_text(uuid_).c_str(), device_, h2.device,
                r);
  return SYMMEM_OK;
}

symmem_status DeviceBuffer::finish_binding(int rank, int world,
                                           const std::vector<CUdeviceptr>& bases,
                                           std::vector<std::array<uint8_t, 16>> uuids) {
  std::memcpy(uuids[rank].data(), uuid_, 16);
  // The device array of public pads, for the signal kernels.
  std::vector<uint32_t*> pads(world);
  for (int r = 0; r < world; ++r) pads[r] = reinterpret_cast<uint32_t*>(r == rank ? local_ : bases[r]);
  auto* dev = reinterpret_cast<uint32_t**>(local_ + kPadTableOff);
  SYMMEM_RT(cudaMemcpyAsync(dev, pads.data(), world * sizeof(uint32_t*), cudaMemcpyHostToDevice,
                            stream_),
            "cudaMemcpyAsync(pad table)");
  SYMMEM_RT(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (pad table)");
  dev_pads_ = dev;
  bases_ = bases;
  bases_[rank] = local_;
  // Every rank decides alike from the same uuids: all distinct, or no 128-byte lines anywhere.
  own_gpus_ = true;
  for (int i = 0; i < world; ++i)
    for (int j = i + 1; j < world; ++j)
      if (uuids[i] == uuids[j]) own_gpus_ = false;
  peer_uuid_ = std::move(uuids);
  rank_ = rank;
  world_ = world;
  return SYMMEM_OK;
}

bool DeviceBuffer::overlaps(const void* p, size_t n) const {
  const uint64_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + (n == 0 ? 1 : n);
  auto hits = [&](CUdeviceptr va) { return va != 0 && lo < va + total_ && va < hi; };
  if (hits(local_)) return true;
  for (CUdeviceptr va : bases_)
    if (hits(va)) return true;
  return false;
}

// Copies wait for this buffer's own work (every launch on it, any stream), copy on the buffer's
// stream and return once the data has landed, so the next kernels (also peers') read it. They do
// not wait for the rest of the device: another thread's collective may be waiting for a peer whose
// thread waits for this one.
symmem_status DeviceBuffer::copy_in(int r, uint64_t offset, const void* src, uint64_t bytes) {
  SYMMEM_TRY(set_device());
  if (const symmem_status st = finish_own_work(); st != SYMMEM_OK) {
    prefix_error("symmem_buffer_copy_in: ");
    return st;
  }
  SYMMEM_RT(cudaMemcpyAsync(reinterpret_cast<void*>(base(r) + pad_region_ + offset), src, bytes,
                            cudaMemcpyHostToDevice, stream_),
            "symmem_buffer_copy_in: cudaMemcpyAsync(rank %d, offset %llu, %llu bytes)", r,
            static_cast<unsigned long long>(offset), static_cast<unsigned long long>(bytes));
  SYMMEM_RT(cudaStreamSynchronize(stream_), "symmem_buffer_copy_in: cudaStreamSynchronize");
  return SYMMEM_OK;
}

symmem_status DeviceBuffer::copy_out(int r, uint64_t offset, void* dst, uint64_t bytes) {
  SYMMEM_TRY(set_device());
  if (const symmem_status st = finish_own_work(); st != SYMMEM_OK) {
    prefix_error("symmem_buffer_copy_out: ");
    return st;
  }
  SYMMEM_TRY(check());  // a device-side timeout of earlier work: the data is not a result
  SYMMEM_RT(cudaMemcpyAsync(dst, reinterpret_cast<const void*>(base(r) + pad_region_ + offset),
                            bytes, cudaMemcpyDeviceToHost, stream_),
            "symmem_buffer_copy_out: cudaMemcpyAsync(rank %d, offset %llu, %llu bytes)", r,
            static_cast<unsigned long long>(offset), static_cast<unsigned long long>(bytes));
  SYMMEM_RT(cudaStreamSynchronize(stream_), "symmem_buffer_copy_out: cudaStreamSynchronize");
  return SYMMEM_OK;
}

// Through the peer's mapping with the copy engines, ordered like a collective (the buffer's earlier
// work on any stream comes first).
symmem_status DeviceBuffer::put_on_stream(int r, uint64_t offset, const void* src, uint64_t bytes, void* s) {
  SYMMEM_TRY(set_device());
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_RT(cudaMemcpyAsync(reinterpret_cast<void*>(base(r) + pad_region_ + offset), src, bytes,
                              cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(s)),
              "symmem_put_on_stream: cudaMemcpyAsync(rank %d, offset %llu, %llu bytes)", r,
              static_cast<unsigned long long>(offset), static_cast<unsigned long long>(bytes));
    return SYMMEM_OK;
  });
}

symmem_status DeviceBuffer::get_on_stream(int r, uint64_t offset, void* dst, uint64_t bytes, void* s) {
  SYMMEM_TRY(set_device());
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_RT(cudaMemcpyAsync(dst, reinterpret_cast<const void*>(base(r) + pad_region_ + offset), bytes,
                              cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(s)),
              "symmem_get_on_stream: cudaMemcpyAsync(rank %d, offset %llu, %llu bytes)", r,
              static_cast<unsigned long long>(offset), static_cast<unsigned long long>(bytes));
    return SYMMEM_OK;
  });
}

symmem_status DeviceBuffer::device_uuid(int r, uint8_t out[16]) {
  std::memcpy(out, r == SYMMEM_RANK_SELF || r == rank_ ? uuid_ : peer_uuid_[r].data(), 16);
  return SYMMEM_OK;
}

SigArgs DeviceBuffer::sig_args(int peer, int channel, int timeout_ms) const {
  SigArgs a;
  a.pads = dev_pads_;
  a.claim = reinterpret_cast<uint32_t*>(local_ + kClaimOff);
  a.err = err_dev_;
  a.abort = abort_dev_;
  a.rank = rank_;
  a.world = world_;
  a.peer = peer;
  a.channel = channel;
  a.epochs = reinterpret_cast<uint32_t*>(local_ + kBarEpochsOff);
  a.timeout_ms = static_cast<uint32_t>(timeout_ms);
  a.timeout_ns = static_cast<uint64_t>(timeout_ms) * 1000000ull;
  a.value = 0;
  a.op = 0;
  return a;
}


bool DeviceBuffer::stream_known_locked(void* s) const {
  return s == nullptr || s == static_cast<void*>(stream_) || g_streams.count(s) != 0;
}

bool DeviceBuffer::stream_known(void* s) const {
  if (s == nullptr || s == static_cast<void*>(stream_)) return true;  // no lock for these two
  SYMMEM_HOT_COUNT(kStreamsLock);
  std::lock_guard<std::mutex> lock(g_streams_mutex);
  return stream_known_locked(s);
}

template <class Launch>
symmem_status DeviceBuffer::ordered(void* s, Launch&& launch) {
  std::lock_guard<std::mutex> order(order_mu_);  // copies read the order too (finish_own_work)
  SYMMEM_HOT_COUNT(kOrderedLaunches);
  if (s == last_launch_stream_ && last_order_ == Order::kLazy) {
    // The hot path: the same stream as the previous launch, one symmem knows; stream order holds,
    // and nothing but the launch reaches CUDA. When that stream is capturing, the launch is
    // recorded and the order (which names this stream already) stays as it is.
    SYMMEM_TRY(launch());
    if (captures_open()) note_captured(s, this);
    return SYMMEM_OK;
  }
  bool capturing = false;
  SYMMEM_TRY(order_before(s, &capturing));
  SYMMEM_TRY(launch());
  if (capturing) {
    note_captured(s, this);
    return SYMMEM_OK;
  }
  return order_after(s);
}

symmem_status DeviceBuffer::order_before(void* s, bool* capturing) {
  SYMMEM_TRY(stream_capturing(s, capturing, "ordering the buffer's work"));
  if (*capturing || last_order_ == Order::kNone || s == last_launch_stream_) return SYMMEM_OK;
  auto stream = static_cast<cudaStream_t>(s);
  if (last_order_ == Order::kRecorded) {
    // Recorded only on streams that were not capturing: an event of eager work.
    SYMMEM_HOT_COUNT(kStreamWaitEvent);
    SYMMEM_RT(cudaStreamWaitEvent(stream, last_launch_, 0),
              "cudaStreamWaitEvent (ordering the buffer's work across streams)");
    return SYMMEM_OK;
  }
  // The last launch went to a stream symmem knows: mark its end only now that another stream
  // comes (launches on one stream need no event).
  SYMMEM_HOT_COUNT(kStreamsLock);
  std::lock_guard<std::mutex> lock(g_streams_mutex);
  if (!stream_known_locked(last_launch_stream_)) return SYMMEM_OK;
  auto last = static_cast<cudaStream_t>(last_launch_stream_);
  bool last_capturing = false;
  SYMMEM_TRY(stream_capturing(last, &last_capturing, "ordering the buffer's work"));
  if (last_capturing)
    return fail(SYMMEM_ERR_STATE,
                "the buffer's previous launch went to stream %p, which is capturing a CUDA graph "
                "now: its earlier work cannot be waited for from stream %p until the capture ends; "
                "end the capture first, or issue this call on the capturing stream",
                last_launch_stream_, s);
  SYMMEM_TRY(ensure_order_event());
  SYMMEM_HOT_COUNT(kEventRecord);
  SYMMEM_RT(cudaEventRecord(last_launch_, last), "cudaEventRecord (buffer order)");
  SYMMEM_HOT_COUNT(kStreamWaitEvent);
  SYMMEM_RT(cudaStreamWaitEvent(stream, last_launch_, 0),
            "cudaStreamWaitEvent (ordering the buffer's work across streams)");
  return SYMMEM_OK;
}

symmem_status DeviceBuffer::order_after(void* s) {
  const bool same_known_stream = s == last_launch_stream_ && last_order_ == Order::kLazy;
  // The same stream as last time, found foreign then: still foreign (a handle that symmem_stream_
  // create handed out since would be a recycled one, and recording on it is merely cautious), so
  // the process-wide streams lock is not taken again for it.
  const bool same_foreign_stream = s == last_launch_stream_ && last_order_ == Order::kRecorded;
  last_launch_stream_ = s;
  if (same_known_stream) return SYMMEM_OK;
  if (!same_foreign_stream && stream_known(s)) {
    last_order_ = Order::kLazy;
    return SYMMEM_OK;
  }
  // A stream symmem did not make may be destroyed without symmem knowing: record now.
  SYMMEM_TRY(ensure_order_event());
  SYMMEM_HOT_COUNT(kEventRecord);
  SYMMEM_RT(cudaEventRecord(last_launch_, static_cast<cudaStream_t>(s)),
            "cudaEventRecord (buffer order)");
  last_order_ = Order::kRecorded;
  return SYMMEM_OK;
}

symmem_status DeviceBuffer::replay_before(void* s, bool* capturing) {
  SYMMEM_TRY(set_device());
  // A graph captured earlier holds this buffer's collectives: replayed on a buffer whose signal
  // state is out of step, they would pair with the wrong arrivals of its peers.
  SYMMEM_TRY(refuse_if_out_of_step("a replay of a graph that uses this buffer"));
  std::lock_guard<std::mutex> order(order_mu_);
  return order_before(s, capturing);
}

symmem_status DeviceBuffer::replay_after(void* s, bool capturing) {
  if (capturing) return SYMMEM_OK;
  std::lock_guard<std::mutex> order(order_mu_);
  return order_after(s);
}

symmem_status DeviceBuffer::ensure_order_event() {
  if (last_launch_ == nullptr)
    SYMMEM_RT(cudaEventCreateWithFlags(&last_launch_, cudaEventDisableTiming),
              "cudaEventCreateWithFlags (buffer order)");
  return SYMMEM_OK;
}

symmem_status DeviceBuffer::coll_args(uint64_t at, int timeout_ms, CollArgs* a, const char* what) {
  SYMMEM_TRY(refuse_if_out_of_step(what));
  if (world_ > kMaxCollWorld)
    return fail(SYMMEM_ERR_UNSUPPORTED, "%s: the cuda collectives support world 1..%d (world is %d)",
                what, kMaxCollWorld, world_);
  std::memset(a, 0, sizeof *a);
  for (int r = 0; r < world_; ++r) {
    const CUdeviceptr b = base(r);
    a->data[r] = reinterpret_cast<char*>(b + pad_region_ + at);
    a->flags[r] = reinterpret_cast<uint32_t*>(b + kFlagsOff);
  }
  a->epochs = reinterpret_cast<uint32_t*>(local_ + kEpochsOff);
  a->claim = reinterpret_cast<uint32_t*>(local_ + kClaimOff);
  a->err = err_dev_;
  a->abort = abort_dev_;
  a->rank = rank_;
  a->world = world_;
  a->timeout_ms = static_cast<uint32_t>(timeout_ms);
  a->timeout_ns = static_cast<uint64_t>(timeout_ms) * 1000000ull;
  a->scratch_delta = static_cast<int64_t>(kScratchOff) - static_cast<int64_t>(pad_region_ + at);
  a->scratch_cap = push_cap();
  a->ll_delta = static_cast<int64_t>(kLlOff) - static_cast<int64_t>(pad_region_ + at);
  a->ll_cap = ll_capacity(world_);
  a->ll128_delta = static_cast<int64_t>(ll128_off()) - static_cast<int64_t>(pad_region_ + at);
  a->ll128_cap = ll128_cap();
  return SYMMEM_OK;
}

symmem_status DeviceBuffer::put_signal_on_stream(int peer, int channel, void* s, int timeout_ms) {
  SYMMEM_TRY(set_device());
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_RT(launch_put_signal(sig_args(peer, channel, timeout_ms), static_cast<cudaStream_t>(s)),
              "put_signal(peer %d, channel %d): kernel launch", peer, channel);
    return SYMMEM_OK;
  });
}

symmem_status DeviceBuffer::wait_signal_on_stream(int peer, int channel, void* s, int timeout_ms) {
  SYMMEM_TRY(set_device());
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_RT(launch_wait_signal(sig_args(peer, channel, timeout_ms), static_cast<cudaStream_t>(s)),
              "wait_signal(peer %d, channel %d): kernel launch", peer, channel);
    return SYMMEM_OK;
  });
}

symmem_status DeviceBuffer::signal_value_on_stream(int peer, int channel, uint64_t value, int op, void* s) {
  SYMMEM_TRY(set_device());
  SigArgs a = sig_args(peer, channel, 1);
  a.value = value;
  a.op = op;
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_RT(launch_signal_value(a, static_cast<cudaStream_t>(s)), "signal_value(peer %d, channel %d): kernel launch",
              peer, channel);
    return SYMMEM_OK;
  });
}

symmem_status DeviceBuffer::wait_signal_value_on_stream(int peer, int channel, int cmp, uint64_t value, void* s,
                                                        int timeout_ms) {
  SYMMEM_TRY(set_device());
  SigArgs a = sig_args(peer, channel, timeout_ms);
  a.value = value;
  a.op = cmp;
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_RT(launch_wait_signal_value(a, static_cast<cudaStream_t>(s)),
              "wait_signal_value(peer %d, channel %d): kernel launch", peer, channel);
    return SYMMEM_OK;
  });
}

symmem_status DeviceBuffer::barrier_on_stream(int channel, void* s, int timeout_ms) {
  SYMMEM_TRY(set_device());
  if (world_ == 1) return SYMMEM_OK;
  const SigArgs a = sig_args(-1, channel, timeout_ms);
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_RT(launch_barrier(a, static_cast<cudaStream_t>(s)), "barrier(channel %d): kernel launch",
              channel);
    return SYMMEM_OK;
  });
}

symmem_status DeviceBuffer::memset32(int r, uint64_t offset, uint32_t value, uint64_t count,
                                   void* s) {
  SYMMEM_TRY(set_device());
  uint32_t* p = reinterpret_cast<uint32_t*>(base(r) + pad_region_ + offset);
  // Ordered after the buffer's earlier work on any stream, like a collective: a fill must not
  // overtake a collective still reading or writing the same memory from another stream.
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_RT(launch_memset32(p, value, count, static_cast<cudaStream_t>(s)),
              "memset32: kernel launch");
    return SYMMEM_OK;
  });
}

symmem_status DeviceBuffer::write_value32(int r, uint64_t offset, uint32_t value, void* s) {
  SYMMEM_TRY(set_device());
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_CU(drv_->StreamWriteValue32(static_cast<CUstream>(s), base(r) + pad_region_ + offset,
                                       value, CU_STREAM_WRITE_VALUE_DEFAULT),
              "cuStreamWriteValue32(rank %d, offset %llu)", r,
              static_cast<unsigned long long>(offset));
    return SYMMEM_OK;
  });
}

symmem_status DeviceBuffer::synchronize(void* s) {
  SYMMEM_TRY(set_device());
  bool capturing = false;
  SYMMEM_TRY(stream_capturing(s, &capturing, "symmem_stream_synchronize"));
  if (capturing)
    return fail(SYMMEM_ERR_STATE,
                "symmem_stream_synchronize: stream %p is capturing a CUDA graph; a host wait cannot "
                "be captured: end the capture, replay the graph, then synchronize",
                s);
  SYMMEM_RT(cudaStreamSynchronize(static_cast<cudaStream_t>(s)), "cudaStreamSynchronize");
  return check();
}

symmem_status DeviceBuffer::check() {
  if (err_host_->status == 0) {
    if (err_host_->bad_splits == 0) return SYMMEM_OK;
    const SplitVerdict v{err_host_->bad_splits, err_host_->split_from, err_host_->split_to, err_host_->split_n,
                         err_host_->split_at, err_host_->split_limit, err_host_->split_total};
    err_host_->bad_splits = 0;
    return report_bad_splits(v);
  }
  ErrorRecord e{err_host_->status, err_host_->op,          err_host_->channel,
                err_host_->peer,   err_host_->nbarriers, err_host_->timeout_ms};
  e.value_wanted = err_host_->value_wanted;
  e.value_seen = err_host_->value_seen;
  e.cmp = err_host_->cmp;
  // Clear for the next report: the record, then the device claim word. The in-place two-shot's
  // chunk counter too: a kernel whose blocks gave up part way left it where they stopped, and a
  // counter not at zero would make the next call skip chunks.
  std::memset(const_cast<ErrorRecord*>(err_host_), 0, sizeof(ErrorRecord));
  SYMMEM_TRY(set_device());
  cudaMemsetAsync(reinterpret_cast<void*>(local_ + kClaimOff), 0, 4, stream_);
  cudaMemsetAsync(reinterpret_cast<void*>(local_ + kTwoShotClaimOff), 0, 8, stream_);
  cudaStreamSynchronize(stream_);
  const symmem_status st = e.status == kGaveUpAborted ? report_aborted(e) : report_timeout(e);
  // A collective that gave up left the epochs and flags of this buffer where they stopped, on this rank
  // and not on its peers: the next collective could pass a barrier on a peer's stale arrival and
  // return a wrong result. So every later collective on this buffer is refused here (and a peer that
  // waits for this rank's next arrival reaches its own deadline and is refused from then on too).
  if (e.op != kOpBarrier && e.op != kOpPutSignal && e.op != kOpWaitSignal && e.op != kOpWaitSignalValue)
    go_out_of_step(symmem_last_error());
  return st;
}

symmem_status DeviceBuffer::report_timeout(const ErrorRecord& e) {
  switch (e.op) {
    case kOpBarrier:
      return fail(SYMMEM_ERR_TIMEOUT, "barrier(channel %d): rank %d did not arrive within %u ms",
                  e.channel, e.peer, e.timeout_ms);
    case kOpPutSignal:
      return fail(SYMMEM_ERR_TIMEOUT,
                  "put_signal(peer %d, channel %d): rank %d did not consume the previous signal "
                  "within %u ms",
                  e.peer, e.channel, e.peer, e.timeout_ms);
    case kOpWaitSignal:
      return fail(SYMMEM_ERR_TIMEOUT,
                  "wait_signal(peer %d, channel %d): no signal from rank %d within %u ms", e.peer,
                  e.channel, e.peer, e.timeout_ms);
    case kOpWaitSignalValue:
      return fail(SYMMEM_ERR_TIMEOUT,
                  "wait_signal_value(peer %d, channel %d, %s %llu): timed out after %u ms; rank %d's value is %llu",
                  e.peer, e.channel, e.cmp == SYMMEM_CMP_EQ ? "==" : ">=",
                  static_cast<unsigned long long>(e.value_wanted), e.timeout_ms, e.peer,
                  static_cast<unsigned long long>(e.value_seen));
    case kOpAllReduceCe: {
      char waiting[96];
      ce_waiting(e, waiting, sizeof waiting);
      return fail(SYMMEM_ERR_TIMEOUT,
                  "all_reduce two-shot-ce: rank %d did not answer within %u ms (waiting %s); the "
                  "buffer's signal state is now undefined, free it",
                  e.peer, e.timeout_ms, waiting);
    }
    default:
      return fail(SYMMEM_ERR_TIMEOUT,
                  "%s (barrier %d of %d, %s): rank %d did not arrive within %u ms; the buffer's "
                  "signal state is now undefined, free it",
                  op_name(e.op), e.channel, e.nbarriers,
                  e.channel == 1 ? "waiting for inputs" : "waiting for peers", e.peer,
                  e.timeout_ms);
  }
}

symmem_status DeviceBuffer::report_bad_splits(const SplitVerdict& e) {
  const char* what = "all_to_all_v";
  switch (e.kind) {
    case kSplitNegative:
      return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                  "%s: rank %d's split for rank %d is %lld; a split counts elements and cannot be negative; "
                  "nothing was written", what, e.split_from, e.split_to, static_cast<long long>(e.split_n));
    case kSplitInput:
      return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                  "%s: rank %d's splits need more input than it holds: its part for rank %d (%lld elements from "
                  "element %llu) ends past the %llu elements before its splits; nothing was written", what,
                  e.split_from, e.split_to, static_cast<long long>(e.split_n),
                  static_cast<unsigned long long>(e.split_at), static_cast<unsigned long long>(e.split_limit));
    default:
      return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                  "%s: rank %d would receive %llu elements, more than its output holds (%llu): the part from rank "
                  "%d (%lld elements at element %llu) does not fit; nothing was written", what, e.split_to,
                  static_cast<unsigned long long>(e.split_total), static_cast<unsigned long long>(e.split_limit),
                  e.split_from, static_cast<long long>(e.split_n), static_cast<unsigned long long>(e.split_at));
  }
}

void DeviceBuffer::go_out_of_step(const char* why) {
  std::lock_guard<std::mutex> lock(out_of_step_mu_);
  if (out_of_step_.empty()) out_of_step_ = why != nullptr && *why != 0 ? why : "a collective gave up";
  out_of_step_flag_.store(true, std::memory_order_release);
}

symmem_status DeviceBuffer::refuse_if_out_of_step(const char* what) {
  if (!out_of_step_flag_.load(std::memory_order_acquire)) return SYMMEM_OK;
  std::lock_guard<std::mutex> lock(out_of_step_mu_);
  return fail(SYMMEM_ERR_STATE,
              "%s refused: this buffer's collectives are out of step since an earlier one failed on this "
              "rank (%s); every collective on it is refused from now on: free it (a pool block: close "
              "its pool) and allocate a new one",
              what, out_of_step_.c_str());
}

// The device wait that saw the abort, named like the timeouts name theirs.
symmem_status DeviceBuffer::report_aborted(const ErrorRecord& e) {
  char what[256];
  switch (e.op) {
    case kOpBarrier:
      std::snprintf(what, sizeof what, "barrier(channel %d) waiting for rank %d", e.channel, e.peer);
      break;
    case kOpPutSignal:
      std::snprintf(what, sizeof what, "put_signal(peer %d, channel %d)", e.peer, e.channel);
      break;
    case kOpWaitSignal:
      std::snprintf(what, sizeof what, "wait_signal(peer %d, channel %d)", e.peer, e.channel);
      break;
    case kOpWaitSignalValue:
      std::snprintf(what, sizeof what, "wait_signal_value(peer %d, channel %d, %s %llu)", e.peer, e.channel,
                    e.cmp == SYMMEM_CMP_EQ ? "==" : ">=", static_cast<unsigned long long>(e.value_wanted));
      break;
    case kOpAllReduceCe: {
      char waiting[96];
      ce_waiting(e, waiting, sizeof waiting);
      std::snprintf(what, sizeof what, "all_reduce two-shot-ce waiting %s of rank %d; the buffer's signal "
                    "state is now undefined, free it", waiting, e.peer);
      break;
    }
    default:
      std::snprintf(what, sizeof what, "%s (barrier %d of %d) waiting for rank %d; the buffer's signal state "
                    "is now undefined, free it", op_name(e.op), e.channel, e.nbarriers, e.peer);
  }
  return fail_aborted(what);
}

symmem_status DeviceBuffer::all_reduce(uint64_t at, int algo, int dtype, int op, uint64_t count,
                                       void* out, void* s, int timeout_ms) {
  SYMMEM_TRY(set_device());
  if (algo == SYMMEM_ALGO_TWO_SHOT_CE) {
    SYMMEM_TRY(refuse_if_out_of_step("all_reduce"));
    SYMMEM_TRY(ce_refusal(out == nullptr));
    return ordered(s, [&] {
      return all_reduce_ce(at, dtype, op, count, static_cast<cudaStream_t>(s), timeout_ms);
    });
  }
  CollArgs a;
  SYMMEM_TRY(coll_args(at, timeout_ms, &a, "all_reduce"));
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_RT(launch_all_reduce(a, algo, dtype, op, count, out, static_cast<cudaStream_t>(s)),
              "all_reduce: kernel launch");
    return SYMMEM_OK;
  });
}

symmem_status DeviceBuffer::all_gather(uint64_t at, int dtype, uint64_t count, void* out, void* s,
                                       int timeout_ms) {
  SYMMEM_TRY(set_device());
  CollArgs a;
  SYMMEM_TRY(coll_args(at, timeout_ms, &a, "all_gather"));
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_RT(launch_all_gather(a, dtype, count, out, static_cast<cudaStream_t>(s)),
              "all_gather: kernel launch");
    return SYMMEM_OK;
  });
}

symmem_status DeviceBuffer::reduce_scatter(uint64_t at, int dtype, int op, uint64_t count,
                                           void* out, void* s, int timeout_ms) {
  SYMMEM_TRY(set_device());
  CollArgs a;
  SYMMEM_TRY(coll_args(at, timeout_ms, &a, "reduce_scatter"));
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_RT(launch_reduce_scatter(a, dtype, op, count, out, static_cast<cudaStream_t>(s)),
              "reduce_scatter: kernel launch");
    return SYMMEM_OK;
  });
}

symmem_status DeviceBuffer::broadcast(uint64_t at, int dtype, uint64_t count, int root, void* out, void* s,
                                      int timeout_ms) {
  SYMMEM_TRY(set_device());
  CollArgs a;
  SYMMEM_TRY(coll_args(at, timeout_ms, &a, "broadcast"));
  return ordered(s, [&]() -> symmem_status {
    SYMMEM_RT(launch_broadcast(a, dtype, count, root, out, static_cast<cudaStream_t>(s)), "broadcast: kernel launch");
    return SYMMEM_OK;
  });
}

namespace {

// In place, the peers read this rank's data until the kernel is done: the kernel writes the result
// into scratch from the stream-ordered pool (no device-wide synchronisation, capturable in a graph),
// `finish` moves it over the data once the kernel is done, and the scratch is freed, all in stream
// order. A failed launch still frees the scratch.
template <class Kernel, class Finish>
symmem_status through_scratch(const char* what, uint64_t bytes, cudaStream_t st, Kernel&& kernel,
                              Finish&& finish) {
  void* scratch = nullptr;
  SYMMEM_RT(cudaMallocAsync(&scratch, bytes, st), "%s: cudaMallocAsync of %llu bytes of scratch", what,
            static_cast<unsigned long long>(bytes));
  const cudaError_t launched = kernel(static_cast<char*>(scratch));
  const cudaError_t finished = launched == cudaSuccess ? finish(static_cast<char*>(scratch)) : cudaSuccess;
  const cudaError_t freed = cudaFreeAsync(scratch, st);
  SYMMEM_RT(launched, "%s: kernel launch", what);
  SYMMEM_RT(finished, "%s: the copy of the result over the data", what);
  SYMMEM_RT(freed, "%s: cudaFreeAsync of the scratch", what);
  return SYMMEM_OK;
}

}  // namespace

symmem_status DeviceBuffer::all_to_all(uint64_t at, int dtype, uint64_t count, void* out, void* s,
                                       int timeout_ms) {
  SYMMEM_TRY(set_device());
  CollArgs a;
  SYMMEM_TRY(coll_args(at, timeout_ms, &a, "all_to_all"));
  const cudaStream_t st = static_cast<cudaStream_t>(s);
  const uint64_t bytes = count * (dtype == SYMMEM_FLOAT32 ? 4 : 2) * static_cast<uint64_t>(world_);
  return ordered(s, [&]() -> symmem_status {
    if (out != nullptr) {
      SYMMEM_RT(launch_all_to_all(a, dtype, count, out, st), "all_to_all: kernel launch");
      return SYMMEM_OK;
    }
    return through_scratch(
        "all_to_all", bytes, st, [&](char* scratch) { return launch_all_to_all(a, dtype, count, scratch, st); },
        [&](char* scratch) {
          return cudaMemcpyAsync(a.data[rank_], scratch, bytes, cudaMemcpyDeviceToDevice, st);
        });
  });
}

// In place, the scratch starts with the header the copy back reads (a2av_scratch_header).
symmem_status DeviceBuffer::all_to_all_v(uint64_t at, int dtype, uint64_t splits_at, void* out,
                                         uint64_t out_capacity, int64_t* out_splits, void* s, int timeout_ms) {
  SYMMEM_TRY(set_device());
  CollArgs a;
  SYMMEM_TRY(coll_args(at, timeout_ms, &a, "all_to_all_v"));
  const cudaStream_t st = static_cast<cudaStream_t>(s);
  const uint64_t es = dtype == SYMMEM_FLOAT32 ? 4 : 2;
  return ordered(s, [&]() -> symmem_status {
    if (out != nullptr) {
      SYMMEM_RT(launch_all_to_all_v(a, dtype, splits_at, out, out_capacity, out_splits, false, st),
                "all_to_all_v: kernel launch");
      return SYMMEM_OK;
    }
    const uint64_t header = a2av_scratch_header();
    return through_scratch(
        "all_to_all_v", header + splits_at, st,
        [&](char* scratch) {
          return launch_all_to_all_v(a, dtype, splits_at, scratch + header, splits_at / es, out_splits, true, st);
        },
        [&](char* scratch) { return launch_a2av_copy_back(dtype, a.data[rank_], scratch + header, splits_at, st); });
  });
}

// AUTO's crossovers, bf16 sum (docs/cuda-backend.md), µs one-shot / two-shot on 4 x H100 where
// not said otherwise.
// - Out of place, world 1: one-shot at every size; world 2: one-shot except where only the push
//   two-shot fits (below).
// - Worlds 3 and 4 on GPUs of their own, where the 128-byte-line two-shot takes the size: two-shot
//   from 1 MiB in and out of place (world 3 512 KiB 8.2 / 8.7, 1 MiB 12.7 / 8.5; world 4 512 KiB
//   10.7 / 10.8, 1 MiB 16.4 / 12.1).
// - Otherwise at worlds 3 to 8 (the pull two-shot): out of place from 8 MiB / world, in place from
//   4 MiB / world, since a one-shot brings every rank world - 1 inputs and a two-shot
//   2 (world - 1) / world, so the two-shot catches up sooner the larger the world (world 3 out of
//   place 2 MiB 19.3 / 23.1, 4 MiB 38.0 / 32.2; world 4 out of place 1 MiB 16.5 / 19.7, 2 MiB
//   26.3 / 24.2, in place 512 KiB 11.3 / 12.7, 1 MiB 16.4 / 14.8). Worlds 5 to 8 have not run on
//   GPUs of their own: the same shares, unmeasured.
// - In place, never a one-shot above what the push scratch or the 128-byte lines hold.
// SYMMEM_CUDA_TWO_SHOT_MIN_BYTES / SYMMEM_CUDA_TWO_SHOT_IP_MIN_BYTES override.
int DeviceBuffer::auto_algo(int, uint64_t bytes, bool in_place) {
  // The environment is read once (getenv walks the whole environment: a JVM's is long); only the
  // fallbacks depend on the buffer.
  static const bool min_two_shot_set = tunable_is_set(Tunable::kCudaTwoShotMinBytes);
  static const uint64_t min_two_shot_env = tunable_or(Tunable::kCudaTwoShotMinBytes, 0);
  static const bool min_two_shot_ip_set = tunable_is_set(Tunable::kCudaTwoShotIpMinBytes);
  static const uint64_t min_two_shot_ip_env = tunable_or(Tunable::kCudaTwoShotIpMinBytes, 0);
  // In place at world 2 from SYMMEM_CUDA_CE_MIN_BYTES, where the buffer has the scratch (opt-in:
  // SYMMEM_CUDA_CE_SLOT_BYTES): the copy-engine two-shot (docs/cuda-backend.md).
  static const uint64_t ce_min = tunable_value(Tunable::kCudaCeMinBytes);
  if (in_place && world_ == 2 && ce_slot_ > 0 && bytes >= ce_min) return SYMMEM_ALGO_TWO_SHOT_CE;
  // Out of place at world 2 the pull one-shot reads a single peer and beats the pull two-shot at
  // every size (4 x H200: 10.7 against 13.9 us at 1 MiB, 821 against 822 us at 256 MiB); the
  // push two-shot beats it where the push one-shot no longer fits but the push two-shot's half
  // does (2 x H200, 8 MiB: 30.9 against 32.8 us; below, the push one-shot: 4 MiB 17.5 against
  // 18.5). At world 1 out of place, one-shot is a single copy and two-shot a copy in two passes
  // (H100: 62 against 82 us at 64 MiB), so one-shot at every size there.
  if (!in_place && world_ <= 2 && !min_two_shot_set) {
    const bool two_shot_pushes =
        world_ == 2 && bytes > std::max(push_one_shot_max_bytes(), ll128_one_shot_max_bytes()) &&
        bytes <= push_two_shot_max_bytes();
    return two_shot_pushes ? SYMMEM_ALGO_TWO_SHOT : SYMMEM_ALGO_ONE_SHOT;
  }
  const uint64_t share = world_ > 2 ? uint64_t(world_) : 1;
  const bool lines_take_it = bytes <= ll128_two_shot_max_bytes();
  uint64_t threshold;
  if (!in_place) {
    const uint64_t computed = lines_take_it ? kAutoLl128TwoShotMinBytes : 2 * kAutoOneShotTraffic / share;
    threshold = min_two_shot_set ? min_two_shot_env : computed;
  } else if (min_two_shot_ip_set) {
    threshold = min_two_shot_ip_env;
  } else {
    // One wait and no trailing barrier: 4.9 against 8.0 us at 4 KiB, 6.2 against 9.3 us at 128 KiB
    // on 4 x H200.
    threshold = std::max(push_cap(), ll128_one_shot_max_bytes()) + 1;
    if (world_ > 2)
      threshold =
          std::min(threshold, lines_take_it ? kAutoLl128TwoShotMinBytes : kAutoOneShotTraffic / share);
  }
  // Never an in-place one-shot that symmem_all_reduce would refuse (inclusive bound).
  const uint64_t ip_max = one_shot_in_place_max_bytes();
  if (in_place && threshold > ip_max + 1) threshold = ip_max + 1;
  return bytes < threshold ? SYMMEM_ALGO_ONE_SHOT : SYMMEM_ALGO_TWO_SHOT;
}

// The pull one-shot keeps its in-place results in registers (a bound from the grid); the push
// and 128-byte-line one-shots reduce each item in the thread that sent it, so in place they have no
// bound but their area's (which is below the pull bound unless SYMMEM_CUDA_PUSH_SCRATCH_BYTES or
// SYMMEM_CUDA_LL128_MAX_BYTES raised it).
uint64_t DeviceBuffer::one_shot_in_place_max_bytes() {
  const uint64_t pull = cuda::one_shot_in_place_max_bytes();
  if (world_ <= 0) return pull;
  return std::max({pull, push_one_shot_max_bytes(), ll128_one_shot_max_bytes()});
}

// 0 where two ranks share a GPU: the lines rely on a 128-byte store crossing NVLink whole, which
// stores within one GPU do not promise. Worlds 5 to 8 have not run on GPUs of their own: none
// there either.
uint64_t DeviceBuffer::ll128_cap() const {
  return own_gpus_ && world_ <= 4 ? ll128_capacity(ll128_area_, world_) : 0;
}

uint64_t DeviceBuffer::ll128_one_shot_max_bytes() const {
  return cuda::ll128_one_shot_max_bytes(ll128_cap(), world_);
}

uint64_t DeviceBuffer::push_one_shot_max_bytes() const {
  return cuda::push_one_shot_max_bytes(push_cap());
}

uint64_t DeviceBuffer::ll128_two_shot_max_bytes() const {
  return cuda::ll128_two_shot_max_bytes(ll128_cap(), world_);
}

uint64_t DeviceBuffer::push_two_shot_max_bytes() const {
  return cuda::push_two_shot_max_bytes(push_cap(), world_);
}

DeviceBackend::DeviceBackend(const char* name, int device, int count, const char* device_name) {
  std::memset(&info_, 0, sizeof info_);
  std::strncpy(info_.name, name, sizeof info_.name - 1);
  std::strncpy(info_.device_name, device_name, sizeof info_.device_name - 1);
  info_.device = device;
  info_.device_count = count;
}

symmem_status DeviceBackend::local_alloc(uint64_t bytes, void** out) {
  SYMMEM_TRY(refuse_device_wait_in_capture("symmem_local_alloc"));
  SYMMEM_RT(cudaSetDevice(info_.device), "cudaSetDevice(%d)", info_.device);
  void* p = nullptr;
  SYMMEM_RT(cudaMalloc(&p, bytes), "symmem_local_alloc: cudaMalloc(%llu bytes) on device %d",
            static_cast<unsigned long long>(bytes), info_.device);
  cudaError_t e = cudaMemset(p, 0, bytes);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    cudaFree(p);
    return fail_rt(e, "symmem_local_alloc: cudaMemset(%llu bytes)",
                   static_cast<unsigned long long>(bytes));
  }
  *out = p;
  return SYMMEM_OK;
}

void DeviceBackend::local_free(void* p) {
  cudaSetDevice(info_.device);
  cudaFree(p);
  cudaGetLastError();
}

symmem_status DeviceBackend::local_copy_in(void* dst, const void* src, uint64_t bytes) {
  SYMMEM_TRY(refuse_device_wait_in_capture("symmem_local_copy_in"));
  SYMMEM_RT(cudaSetDevice(info_.device), "cudaSetDevice(%d)", info_.device);
  SYMMEM_RT(cudaDeviceSynchronize(), "symmem_local_copy_in: cudaDeviceSynchronize");
  SYMMEM_RT(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice),
            "symmem_local_copy_in: cudaMemcpy(%llu bytes)", static_cast<unsigned long long>(bytes));
  SYMMEM_RT(cudaDeviceSynchronize(), "symmem_local_copy_in: cudaDeviceSynchronize after copy");
  return SYMMEM_OK;
}

symmem_status DeviceBackend::local_copy_out(void* dst, const void* src, uint64_t bytes) {
  SYMMEM_TRY(refuse_device_wait_in_capture("symmem_local_copy_out"));
  SYMMEM_RT(cudaSetDevice(info_.device), "cudaSetDevice(%d)", info_.device);
  SYMMEM_RT(cudaDeviceSynchronize(), "symmem_local_copy_out: cudaDeviceSynchronize");
  SYMMEM_RT(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost),
            "symmem_local_copy_out: cudaMemcpy(%llu bytes)", static_cast<unsigned long long>(bytes));
  return SYMMEM_OK;
}

symmem_status DeviceBackend::stream_create(void** out) {
  SYMMEM_RT(cudaSetDevice(info_.device), "cudaSetDevice(%d)", info_.device);
  cudaStream_t s = nullptr;
  SYMMEM_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
            "symmem_stream_create: cudaStreamCreateWithFlags(device %d)", info_.device);
  {
    std::lock_guard<std::mutex> lock(g_streams_mutex);
    g_streams.insert(s);
  }
  *out = s;
  return SYMMEM_OK;
}

symmem_status DeviceBackend::stream_destroy(void* stream) {
  SYMMEM_RT(cudaSetDevice(info_.device), "cudaSetDevice(%d)", info_.device);
  bool capturing = false;
  SYMMEM_TRY(stream_capturing(stream, &capturing, "symmem_stream_destroy"));
  if (capturing)
    return fail(SYMMEM_ERR_STATE,
                "symmem_stream_destroy: stream %p is capturing a CUDA graph; end the capture first "
                "(symmem_graph_capture_end)",
                stream);
  auto s = static_cast<cudaStream_t>(stream);
  cudaError_t e = cudaStreamSynchronize(s);
  {
    // Synchronized first: a segment that finds the stream gone knows its work is done.
    std::lock_guard<std::mutex> lock(g_streams_mutex);
    g_streams.erase(stream);
  }
  cudaError_t d = cudaStreamDestroy(s);
  if (e != cudaSuccess) return fail_rt(e, "symmem_stream_destroy: cudaStreamSynchronize");
  if (d != cudaSuccess) return fail_rt(d, "symmem_stream_destroy: cudaStreamDestroy");
  return SYMMEM_OK;
}

symmem_status DeviceBackend::marker_record(void* stream, void** out_event) {
  SYMMEM_RT(cudaSetDevice(info_.device), "cudaSetDevice(%d)", info_.device);
  cudaEvent_t e = nullptr;
  SYMMEM_RT(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
            "symmem_stream_marker_record: cudaEventCreateWithFlags");
  cudaError_t r = cudaEventRecord(e, static_cast<cudaStream_t>(stream));
  if (r != cudaSuccess) {
    cudaEventDestroy(e);
    return fail_rt(r, "symmem_stream_marker_record: cudaEventRecord(stream %p)", stream);
  }
  *out_event = e;
  return SYMMEM_OK;
}

symmem_status DeviceBackend::marker_query(void* event, int* passed) {
  cudaError_t r = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (r == cudaErrorNotReady) {
    cudaGetLastError();  // not an error: the stream has not got there yet
    *passed = 0;
    return SYMMEM_OK;
  }
  SYMMEM_RT(r, "symmem_stream_marker_passed: cudaEventQuery");
  *passed = 1;
  return SYMMEM_OK;
}

void DeviceBackend::marker_destroy(void* event) {
  cudaEventDestroy(static_cast<cudaEvent_t>(event));
  cudaGetLastError();
}

}  // namespace symmem::cuda
