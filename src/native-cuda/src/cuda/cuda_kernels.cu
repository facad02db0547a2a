// Device code: signals, barriers and the collectives on symmetric buffers.
//
// Memory ordering: every signal is a store with release semantics at system scope
// (st.release.sys) and every wait a load with acquire semantics at system scope (ld.acquire.sys),
// done by one thread per peer between two __syncthreads, so the whole block's earlier accesses are
// ordered before the signal and its later accesses after the wait (cumulativity through bar.sync).
// Peers' data are read with ld.global.cg (L2, never a stale L1 line).
//
// Timeouts: a waiting thread reads %globaltimer every 64 polls; past the deadline it takes the
// buffer's claim word (atomicCAS, first timeout wins), writes the error record in host-mapped
// memory (status last, with a system fence) and the block leaves. Waits also give up once the
// claim word is taken, so one timeout ends the whole kernel quickly. An abort (symmem_abort: a peer is
// dead) ends a wait the same way: the waiting thread reads the process's pinned abort word, but at
// most every kAbortCheckNs of %globaltimer, since a read of host memory crosses the bus and a wait
// that is about to succeed must not pay for it.
//
// Launch: every kernel may be launched with programmatic dependent launch (PDL, sm_90): it starts
// with griddepcontrol.wait (returns once the previous grid on the stream has completed and its
// memory is visible, exactly the ordering of a plain launch), then lets the next grid launch
// (griddepcontrol.launch_dependents), so at most two of our grids are resident per stream and the
// next one's launch latency hides behind this one. Without the attribute both are no-ops.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <utility>

#include "core/dispatch.h"
#include "core/hot_count.h"
#include "core/tunables.h"
#include "cuda/arch.h"
#include "cuda/driver.h"
#include "cuda/kernels.h"
#include "cuda/kernel_phases.cuh"

namespace symmem::cuda {
namespace {

// ---- primitives ---------------------------------------------------------------------------------
__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ uint32_t ld_acquire_sys(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release_sys(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed_sys(uint32_t* p, uint32_t v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// 64-bit, single-copy atomic: the low-latency one-shot's lines (data and flag in one access).
__device__ __forceinline__ void st_relaxed_sys_u64(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ uint64_t ld_relaxed_sys_u64(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void pdl_enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The deadline of one wait. give_up is true when it has passed (why = kGaveUpTimeout), when the
// process was aborted (why = kGaveUpAborted), or when another wait of the buffer already failed
// (why stays 0: that one records the error).
struct Waiter {
  uint64_t start = 0;
  uint64_t abort_checked = 0;
  uint32_t polls = 0;
  uint32_t why = 0;
  __device__ __forceinline__ bool give_up(uint64_t timeout_ns, uint32_t* claim, const uint32_t* abort) {
    if ((++polls & 63u) != 0) return false;
    const uint64_t now = globaltimer();
    if (start == 0) start = abort_checked = now;
    if (now - start > timeout_ns) {
      why = kGaveUpTimeout;
      return true;
    }
    if (now - abort_checked >= kAbortCheckNs) {
      abort_checked = now;
      if (aborted(claim + kAbortCheckedWord, abort, now)) {
        why = kGaveUpAborted;
        return true;
      }
    }
    return *reinterpret_cast<const volatile uint32_t*>(claim) != 0;
  }

 private:
  // Whether the process was aborted, read by the thread that moves the buffer's last read on, once
  // per kAbortCheckNs. Every waiting thread reading it (a load from host memory) every kAbortCheckNs
  // queued thousands of reads on the bus, and each wait lasted until its read came back: a one-shot
  // whose threads waited over kAbortCheckNs for their peer's lines took 200 to 1000 us instead of
  // 5 to 8, and every other call of a loop did so until the ranks next synchronised (the bench's
  // slow loops, docs/benchmarks-history.md). The thread that sees the abort takes the claim, and every other
  // wait of the buffer gives up at its next look at the claim.
  // Out of line: a wait runs it at most once per kAbortCheckNs, and inlined it cost the out-of-place
  // 128-byte-line one-shot 0.2 us at 512 KiB and 1 MiB (2 x H200), which out of line it does not.
  __device__ __noinline__ static bool aborted(uint32_t* last_read, const uint32_t* abort, uint64_t now) {
    const uint32_t now_us = static_cast<uint32_t>(now >> 10);
    const uint32_t last = *reinterpret_cast<const volatile uint32_t*>(last_read);
    if (now_us - last < static_cast<uint32_t>(kAbortCheckNs >> 10)) return false;
    if (atomicCAS(last_read, last, now_us) != last) return false;
    return *reinterpret_cast<const volatile uint32_t*>(abort) != 0;
  }
};

__device__ void record(uint32_t why, uint32_t* claim, ErrorRecord* err, uint32_t op, int channel,
                       int peer, int nbarriers, uint32_t timeout_ms) {
  if (why == 0 || atomicCAS(claim, 0u, 1u) != 0u) return;
  err->op = op;
  err->channel = channel;
  err->peer = peer;
  err->nbarriers = nbarriers;
  err->timeout_ms = timeout_ms;
  __threadfence_system();
  err->status = why;
  __threadfence_system();
}

__device__ __forceinline__ uint32_t* slot(uint32_t* pad, int channel, int rank) {
  return &reinterpret_cast<PadRegion*>(pad)->signals[channel][rank];
}

// put: wait for the slot on peer's pad to be 0 (the previous signal consumed), then set 1 with
// release. wait: wait for 1 on the own pad with acquire, then clear it. Only the sender turns 0
// into 1 and only the receiver 1 into 0, so plain acquire loads and release stores suffice.
__device__ bool dev_put(const SigArgs& a, int peer) {
  uint32_t* s = slot(a.pads[peer], a.channel, a.rank);
  Waiter w;
  while (ld_acquire_sys(s) != 0u)
    if (w.give_up(a.timeout_ns, a.claim, a.abort)) {
      record(w.why, a.claim, a.err, kOpPutSignal, a.channel, peer, 0, a.timeout_ms);
      return false;
    }
  st_release_sys(s, 1u);
  return true;
}

__device__ bool dev_wait(const SigArgs& a, int peer, uint32_t op) {
  uint32_t* s = slot(a.pads[a.rank], a.channel, peer);
  Waiter w;
  while (ld_acquire_sys(s) != 1u)
    if (w.give_up(a.timeout_ns, a.claim, a.abort)) {
      record(w.why, a.claim, a.err, op, a.channel, peer, 0, a.timeout_ms);
      return false;
    }
  st_relaxed_sys(s, 0u);
  return true;
}

__global__ void put_signal_kernel(SigArgs a) {
  pdl_enter();
  if (threadIdx.x == 0) dev_put(a, a.peer);
}
__global__ void wait_signal_kernel(SigArgs a) {
  pdl_enter();
  if (threadIdx.x == 0) dev_wait(a, a.peer, kOpWaitSignal);
}
// Value signals: the sender alone writes its value on the peer's pad (a store or an add, release),
// the pad's rank alone waits (acquire) and leaves it as it is.
__device__ __forceinline__ uint64_t* value_slot(uint32_t* pad, int channel, int rank) {
  return &reinterpret_cast<PadRegion*>(pad)->values[channel][rank];
}
__global__ void signal_value_kernel(SigArgs a) {
  pdl_enter();
  if (threadIdx.x != 0) return;
  uint64_t* s = value_slot(a.pads[a.peer], a.channel, a.rank);
  if (a.op == SYMMEM_SIGNAL_SET)
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(s), "l"(a.value) : "memory");
  else
    asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(s), "l"(a.value) : "memory");
}
__global__ void wait_signal_value_kernel(SigArgs a) {
  pdl_enter();
  if (threadIdx.x != 0) return;
  const uint64_t* s = value_slot(a.pads[a.rank], a.channel, a.peer);
  Waiter w;
  for (;;) {
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(s) : "memory");
    if (a.op == SYMMEM_CMP_EQ ? v == a.value : v >= a.value) return;
    if (w.give_up(a.timeout_ns, a.claim, a.abort)) {
      // The value fields first: record() publishes the status last.
      if (w.why != 0 && atomicAdd(a.claim, 0u) == 0u) {
        a.err->value_wanted = a.value;
        a.err->value_seen = v;
        a.err->cmp = a.op;
      }
      record(w.why, a.claim, a.err, kOpWaitSignalValue, a.channel, a.peer, 0, a.timeout_ms);
      return;
    }
  }
}

// Barrier on a channel: an epoch barrier on its own flag array (PadRegion::barrier_flags), not the public 0/1
// slots: thread t stores the call's epoch into peer t's flag [channel][rank] (release), then waits
// until its own flag [channel][t] has reached it (acquire). No round trip to the peer, and a peer
// already at a later barrier satisfies the wait too. Epochs are counted per channel on the device.
__global__ void barrier_kernel(SigArgs a) {
  pdl_enter();
  const int t = threadIdx.x;
  // The channel's epoch is kept in device memory (a graph replay reads the current one): every
  // thread reads it before thread 0 advances it.
  const uint32_t epoch = __ldcg(a.epochs + a.channel) + 1;
  __syncthreads();
  if (t == 0) a.epochs[a.channel] = epoch;
  if (t >= a.world || t == a.rank) return;
  st_release_sys(&reinterpret_cast<PadRegion*>(a.pads[t])->barrier_flags[a.channel][a.rank], epoch);
  const uint32_t* mine = &reinterpret_cast<const PadRegion*>(a.pads[a.rank])->barrier_flags[a.channel][t];
  Waiter w;
  while (static_cast<int32_t>(ld_acquire_sys(mine) - epoch) < 0)
    if (w.give_up(a.timeout_ns, a.claim, a.abort)) {
      record(w.why, a.claim, a.err, kOpBarrier, a.channel, t, 0, a.timeout_ms);
      return;
    }
}

__global__ void memset32_kernel(uint32_t* p, uint32_t v, uint64_t n) {
  pdl_enter();
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x)
    p[i] = v;
}

// ---- collective barrier: per-block epochs -------------------------------------------------------
// Block b of rank r announces epoch e to every peer p by storing e (release) into p's flag
// [b][r], then waits until its own flag [b][p] has reached e (acquire). The epochs are counted in
// the own pad region on the device (enter_epoch, advance_epochs: every call advances them by 3, the
// most barriers a kernel has), and every rank makes the same calls, so all agree, also when a call
// is a kernel replayed from a CUDA graph, whose arguments were fixed at capture. Epochs only grow,
// so a peer that is already one collective ahead has stored a later epoch, which also satisfies the
// wait: back-to-back launches need no reset. Every rank launches the same grid for the same call.
// Starts a collective kernel: waits for the previous grid (PDL), then reads this call's epoch from
// the block's own word; the next grid reads it only after this one has completed (stream order, or
// griddepcontrol.wait). No barrier follows the read, so the compiler may overlap it with the
// kernel's first data loads; the word is advanced by the first coll_barrier, after its opening
// __syncthreads, when every thread of the block has read it.
__device__ __forceinline__ uint32_t enter_epoch(const CollArgs& a) {
  const uint64_t entry = phases::entry_time();
  pdl_enter();
  phases::mark_go(entry);
  return __ldcg(a.epochs + blockIdx.x);
}

// The next call's epoch into this block's word. Block 0 also advances the words of the blocks this
// grid does not launch, so that every word stays equal to every other (one epoch per call, hence
// one push slot for all blocks) and a block index a smaller grid left out is never behind.
__device__ __forceinline__ void advance_epochs(const CollArgs& a, uint32_t next) {
  if (threadIdx.x == 0) a.epochs[blockIdx.x] = next;
  if (blockIdx.x == 0)
    for (unsigned b = gridDim.x + threadIdx.x; b < unsigned(kMaxBlocks); b += blockDim.x) a.epochs[b] = next;
}

// Every kernel's first barrier is index 1 (e = epoch + 1): it also advances the epoch words, before
// it waits, so that a barrier that times out leaves them as equal as a completed one.
__device__ __forceinline__ bool coll_barrier(const CollArgs& a, uint32_t e, int index, int total) {
  __syncthreads();
  phases::mark_issued(index);
  if (index == 1) advance_epochs(a, e + 2);
  bool ok = true;
  const int t = threadIdx.x;
  if (t < a.world && t != a.rank) {
    st_release_sys(a.flags[t] + blockIdx.x * kMaxCollWorld + a.rank, e);
    phases::mark_released(index);
    const uint32_t* mine = a.flags[a.rank] + blockIdx.x * kMaxCollWorld + t;
    Waiter w;
    while (static_cast<int32_t>(ld_acquire_sys(mine) - e) < 0)
      if (w.give_up(a.timeout_ns, a.claim, a.abort)) {
        record(w.why, a.claim, a.err, a.op, index, t, total, a.timeout_ms);
        ok = false;
        break;
      }
  }
  const bool all = __syncthreads_and(ok) != 0;
  phases::mark_passed(index);
  return all;
}

// ---- element types and vectors ------------------------------------------------------------------
__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
template <class T>
__device__ __forceinline__ T from_f(float x);
template <>
__device__ __forceinline__ float from_f<float>(float x) { return x; }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) { return __float2bfloat16(x); }
template <>
__device__ __forceinline__ __half from_f<__half>(float x) { return __float2half(x); }

// N elements of T moved as one access of N * sizeof(T) bytes (16 for the vector path).
template <class T, int N>
struct alignas(N * sizeof(T)) Pack {
  T v[N];
};
template <class T, int N>
__device__ __forceinline__ Pack<T, N> load_cg(const T* p) {
  Pack<T, N> r;
  if constexpr (sizeof(Pack<T, N>) == 16) {
    uint4 u = __ldcg(reinterpret_cast<const uint4*>(p));
    memcpy(&r, &u, 16);
  } else if constexpr (sizeof(Pack<T, N>) == 4) {
    unsigned u = __ldcg(reinterpret_cast<const unsigned*>(p));
    memcpy(&r, &u, 4);
  } else {
    static_assert(sizeof(Pack<T, N>) == 2, "2, 4 or 16 bytes");
    unsigned short u = __ldcg(reinterpret_cast<const unsigned short*>(p));
    memcpy(&r, &u, 2);
  }
  return r;
}
template <class T, int N>
__device__ __forceinline__ void store(T* p, const Pack<T, N>& v) {
  *reinterpret_cast<Pack<T, N>*>(p) = v;
}
// A pack into a caller's out: whole where out is 16-byte aligned (out_vec), element by element where
// it is not. Each rank's out is its own, so its alignment may differ between ranks; the kernels take
// their grid and their items from the count alone and only store differently, so that every rank
// still pairs the same blocks over the same items (a grid taken from out's alignment paired
// different items, or waited for blocks a peer did not launch).
template <class T, int N>
__device__ __forceinline__ void store_out(T* p, const Pack<T, N>& v, int out_vec) {
  if (out_vec) {
    store<T, N>(p, v);
  } else {
#pragma unroll
    for (int q = 0; q < N; ++q) p[q] = v.v[q];
  }
}

template <int OP>
__device__ __forceinline__ float combine(float acc, float x) {
  if constexpr (OP == SYMMEM_MAX) return fmaxf(acc, x);
  else if constexpr (OP == SYMMEM_MIN) return fminf(acc, x);
  else return acc + x;
}

// W, a template parameter of the reducing kernels: how many ranks their per-thread arrays hold.
// World 2 runs kernels compiled for two ranks (W = 2), worlds 3 and 4 for four (W = 4), worlds 5 to
// 8 the generic ones (W = kMaxCollWorld). W = 2 and W = 4 keep two and four packs per item where the
// generic ones keep eight: at most 64 registers per thread (launch bounds) instead of 100 to 128, so
// that two 512-thread blocks fit on an SM. A full grid then holds half of every SM, and a second
// collective launched meanwhile by another thread or stream still finds room on every SM; with one
// block per SM, two collectives each waiting for its peer fill both GPUs and stall until the
// deadline (worlds 3 and 4 did, with the generic kernels, in test_cuda_streams). Three or more at
// once can still, and so can two at worlds 5 to 8 (docs/cuda-backend.md, concurrency).
template <int W>
constexpr int blocks_per_sm() { return W <= 4 ? 2 : 1; }
template <int W>
__device__ __forceinline__ int world_of(const CollArgs& a) { return W == 2 ? 2 : a.world; }
// Calls f with std::integral_constant<int, W>: the kernels' W for a collective of `world` ranks.
template <class F>
decltype(auto) with_world(int world, F&& f) {
  if (world == 2) return f(std::integral_constant<int, 2>{});
  if (world <= 4) return f(std::integral_constant<int, 4>{});
  return f(std::integral_constant<int, kMaxCollWorld>{});
}

// Reduces N elements at element offset `off` of every source (src[r]: rank r's values), in rank
// order (every rank gets the same bits). All loads are issued before the first add.
template <class T, int N, int W>
__device__ __forceinline__ void load_all(char* const* src, int world, uint64_t off,
                                         Pack<T, N> (&in)[W]) {
#pragma unroll
  for (int r = 0; r < W; ++r)
    if (r < world) in[r] = load_cg<T, N>(reinterpret_cast<const T*>(src[r]) + off);
}
template <class T, int N, int OP, int W>
__device__ __forceinline__ Pack<T, N> reduce_packs(const Pack<T, N> (&in)[W], int world) {
  float acc[N];
#pragma unroll
  for (int i = 0; i < N; ++i) acc[i] = to_f(in[0].v[i]);
#pragma unroll
  for (int r = 1; r < W; ++r)
    if (r < world) {
#pragma unroll
      for (int i = 0; i < N; ++i) acc[i] = combine<OP>(acc[i], to_f(in[r].v[i]));
    }
  Pack<T, N> out;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    float v = acc[i];
    if constexpr (OP == SYMMEM_AVG) v = v / static_cast<float>(world);
    out.v[i] = from_f<T>(v);
  }
  return out;
}
template <class T, int N, int OP, int W>
__device__ __forceinline__ Pack<T, N> reduce_src(char* const* src, int world, uint64_t off) {
  Pack<T, N> in[W];
  load_all<T, N, W>(src, world, off, in);
  return reduce_packs<T, N, OP, W>(in, world);
}
template <class T, int N, int OP, int W>
__device__ __forceinline__ Pack<T, N> reduce_at(const CollArgs& a, uint64_t off) {
  return reduce_src<T, N, OP, W>(a.data, world_of<W>(a), off);
}


__device__ __forceinline__ uint64_t gtid() { return blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; }
__device__ __forceinline__ uint64_t gsize() { return uint64_t(gridDim.x) * blockDim.x; }

// ---- one-shot all-reduce ----------------------------------------------------------------------
// Barrier (inputs ready) -> each rank reduces everything from every peer -> barrier (peers done
// reading). In place, each thread keeps its results in registers (KREG vectors) until after the
// second barrier, then overwrites its own input.
constexpr int KREG = 4;

template <class T, int N, int OP, bool IN_PLACE, int W>
__global__ void __launch_bounds__(512, blocks_per_sm<W>()) one_shot_kernel(CollArgs a, uint64_t count,
                                                                           T* out, int out_vec) {
  const uint32_t e = enter_epoch(a);
  if (!coll_barrier(a, e + 1, 1, 2)) return;
  const uint64_t nfull = count / N, items = (count + N - 1) / N;
  T* own = reinterpret_cast<T*>(a.data[a.rank]);
  if constexpr (!IN_PLACE) {
    for (uint64_t i = gtid(); i < items; i += gsize()) {
      if (i < nfull) {
        store_out<T, N>(out + i * N, reduce_at<T, N, OP, W>(a, i * N), out_vec);
      } else {
        for (uint64_t j = i * N; j < count; ++j) out[j] = reduce_at<T, 1, OP, W>(a, j).v[0];
      }
    }
    if (!coll_barrier(a, e + 2, 2, 2)) return;
  } else {
    Pack<T, N> res[KREG];
#pragma unroll
    for (int k = 0; k < KREG; ++k) {
      const uint64_t i = gtid() + k * gsize();
      if (i < nfull) res[k] = reduce_at<T, N, OP, W>(a, i * N);
      else if (i < items) {
#pragma unroll
        for (int q = 0; q < N; ++q)  // constant indices: res stays in registers
          if (i * N + q < count) res[k].v[q] = reduce_at<T, 1, OP, W>(a, i * N + q).v[0];
      }
    }
    if (!coll_barrier(a, e + 2, 2, 2)) return;
#pragma unroll
    for (int k = 0; k < KREG; ++k) {
      const uint64_t i = gtid() + k * gsize();
      if (i < nfull) store<T, N>(own + i * N, res[k]);
      else if (i < items) {
#pragma unroll
        for (int q = 0; q < N; ++q)
          if (i * N + q < count) own[i * N + q] = res[k].v[q];
      }
    }
  }
  phases::mark_end(phases::kOneShot, IN_PLACE, count * sizeof(T));
}

// ---- one-shot all-reduce, push ------------------------------------------------------------------
// For inputs that fit the scratch at the end of the pad region (kScratchOff): every rank writes its
// input into every peer's scratch [slot][own rank], signals (the barrier's release store, after the
// block's writes) and, once every peer's signal for this block has arrived, reduces from its own
// scratch (local memory) and its own input. One wait instead of two barriers and a remote read:
// no peer ever reads this rank's data, so neither "inputs ready" nor "peers done reading" is
// needed. Scratch slots alternate with the call (slot = epoch & 1: every collective advances the epoch
// by 3, an odd number, also across the 2^32 wrap): a peer writes the slot of call n+2
// only after passing a barrier of call n+1 with this rank, which this rank enters only after call
// n has completed. Every item is pushed and reduced by the same thread, so in place is safe. (All
// blocks of a call see the same epoch, hence the same slot: enter_epoch keeps every block's word equal.)
// The scratch's place comes with the arguments (CollArgs::scratch_delta, scratch_cap).
// unroll2 (SYMMEM_CUDA_UNROLL=2): a thread with more than one item (inputs above one item per
// thread of the grid, about 1 MiB) loads two before storing either, in both passes; inputs of at
// most one item per thread never enter that loop.
template <class T, int N, int OP, bool IN_PLACE, int W>
__global__ void __launch_bounds__(512, blocks_per_sm<W>()) one_shot_push_kernel(CollArgs a,
                                                                                uint64_t count,
                                                                                T* out, int unroll2,
                                                                                int out_vec) {
  const uint32_t e = enter_epoch(a);
  const int world = world_of<W>(a);
  const uint64_t slot = e & 1u;
  const uint64_t nfull = count / N, items = (count + N - 1) / N;
  const uint64_t step = gsize();
  T* own = reinterpret_cast<T*>(a.data[a.rank]);
  // Where this rank's input goes in rank r's scratch.
  auto dst_of = [&](int r) {
    return reinterpret_cast<T*>(a.data[r] + a.scratch_delta + (slot * world + a.rank) * a.scratch_cap);
  };
  auto push = [&](uint64_t i, const Pack<T, N>& v) {
#pragma unroll
    for (int r = 0; r < W; ++r)
      if (r < world && r != a.rank) store<T, N>(dst_of(r) + i * N, v);
  };
  uint64_t i = gtid();
  if (unroll2)
    for (; i + step < nfull; i += 2 * step) {
      const Pack<T, N> v0 = load_cg<T, N>(own + i * N);
      const Pack<T, N> v1 = load_cg<T, N>(own + (i + step) * N);
      push(i, v0);
      push(i + step, v1);
    }
  for (; i < items; i += step) {
    if (i < nfull) {
      push(i, load_cg<T, N>(own + i * N));
    } else {
      for (uint64_t j = i * N; j < count; ++j) {
        const T v = own[j];
        for (int r = 0; r < world; ++r)
          if (r != a.rank) dst_of(r)[j] = v;
      }
    }
  }
  // Reported like the pull version's first barrier ("barrier 1 of 2, waiting for inputs").
  if (!coll_barrier(a, e + 1, 1, 2)) return;
  char* src[W];
#pragma unroll
  for (int r = 0; r < W; ++r)
    src[r] = r == a.rank ? a.data[r]
                         : a.data[a.rank] + a.scratch_delta + (slot * world + r) * a.scratch_cap;
  T* dst = IN_PLACE ? own : out;
  const int dst_vec = IN_PLACE || out_vec;
  // The same items per thread as the push above: in place, a thread overwrites only input that it
  // has itself pushed already.
  i = gtid();
  if (unroll2)
    for (; i + step < nfull; i += 2 * step) {
      Pack<T, N> in0[W], in1[W];
      load_all<T, N, W>(src, world, i * N, in0);
      load_all<T, N, W>(src, world, (i + step) * N, in1);
      store_out<T, N>(dst + i * N, reduce_packs<T, N, OP, W>(in0, world), dst_vec);
      store_out<T, N>(dst + (i + step) * N, reduce_packs<T, N, OP, W>(in1, world), dst_vec);
    }
  for (; i < items; i += step) {
    if (i < nfull) {
      store_out<T, N>(dst + i * N, reduce_src<T, N, OP, W>(src, world, i * N), dst_vec);
    } else {
      for (uint64_t j = i * N; j < count; ++j) dst[j] = reduce_src<T, 1, OP, W>(src, world, j).v[0];
    }
  }
  phases::mark_end(phases::kOneShotPush, IN_PLACE, count * sizeof(T));
}

// ---- one-shot all-reduce, low latency ----------------------------------------------------------
// For the smallest inputs (SYMMEM_CUDA_LL_MAX_BYTES, within the low-latency area: layout.h). As in
// the push one-shot every rank writes its input into every peer's slot, but each 4-byte word goes
// with the call's flag in one 8-byte store (single-copy atomic), so the receiver knows from the line
// itself that the word has arrived. The push one-shot's signal needs a release fence first, which
// waits until the peer has acknowledged every earlier store; here the input crosses NVLink once,
// one way, and nothing waits for an acknowledgement. Twice the bytes, hence small inputs only.
// Word k of pack i lies at line k * npacks + i, so a warp's stores of one k are contiguous.
// The flag is the call's epoch with its low bit set: never 0 (the area is zeroed at allocation) and
// not the flag of the call before in the same slot (epochs grow by 3 per call, slots alternate).
// A peer reuses this call's slot two calls later, only after it has received this rank's input of
// the next call, which this rank sends only once this call has completed (stream order, or
// griddepcontrol.wait). Each item is sent and reduced by the same thread, so in place is safe.
constexpr int kLlWords = 4;  // 4-byte words of one 16-byte pack

template <class T, int N>
__device__ __forceinline__ Pack<T, N> load_pack_or_zero(const T* own, uint64_t i, uint64_t nfull,
                                                        uint64_t count) {
  if (i < nfull) return load_cg<T, N>(own + i * N);
  Pack<T, N> v;
#pragma unroll
  for (int q = 0; q < N; ++q) v.v[q] = i * N + q < count ? own[i * N + q] : from_f<T>(0.f);
  return v;
}

// out_vec: out is 16-byte aligned (else its elements are stored one by one). The path must not
// depend on it: it is each rank's own pointer, and every rank has to take the same path.
template <class T, int N, int OP, bool IN_PLACE>
__global__ void __launch_bounds__(512) one_shot_ll_kernel(CollArgs a, uint64_t count, T* out,
                                                          int out_vec) {
  static_assert(sizeof(Pack<T, N>) == kLlWords * 4, "low-latency lines carry 16-byte packs");
  const uint32_t e = enter_epoch(a);
  const uint64_t flag = uint64_t(e | 1u) << 32;
  const uint64_t slot = e & 1u;
  const uint64_t nfull = count / N, npacks = (count + N - 1) / N;
  T* own = reinterpret_cast<T*>(a.data[a.rank]);
  // Rank `to`'s lines from rank `from` in this call's slot.
  auto lines = [&](int to, int from) {
    return reinterpret_cast<uint64_t*>(a.data[to] + a.ll_delta + (slot * a.world + from) * a.ll_cap);
  };
  for (uint64_t i = gtid(); i < npacks; i += gsize()) {
    const Pack<T, N> v = load_pack_or_zero<T, N>(own, i, nfull, count);
    uint32_t w[kLlWords];
    memcpy(w, &v, sizeof w);
#pragma unroll
    for (int r = 0; r < kMaxCollWorld; ++r)
      if (r < a.world && r != a.rank) {
        uint64_t* dst = lines(r, a.rank) + i;
#pragma unroll
        for (int k = 0; k < kLlWords; ++k) st_relaxed_sys_u64(dst + k * npacks, flag | w[k]);
      }
  }
  __syncthreads();  // every thread has read the block's epoch word before it is advanced
  advance_epochs(a, e + 3);
  T* dst = IN_PLACE ? own : out;
  for (uint64_t i = gtid(); i < npacks; i += gsize()) {
    Pack<T, N> in[kMaxCollWorld];
#pragma unroll
    for (int r = 0; r < kMaxCollWorld; ++r) {
      if (r >= a.world) continue;
      if (r == a.rank) {
        in[r] = load_pack_or_zero<T, N>(own, i, nfull, count);
        continue;
      }
      // All four lines in flight at once, polled together: once they have landed, one read's
      // latency, not four in a row.
      const uint64_t* src = lines(a.rank, r) + i;
      uint64_t line[kLlWords];
      Waiter wt;
      for (;;) {
        bool arrived = true;
#pragma unroll
        for (int k = 0; k < kLlWords; ++k) line[k] = ld_relaxed_sys_u64(src + k * npacks);
#pragma unroll
        for (int k = 0; k < kLlWords; ++k) arrived &= (line[k] & 0xffffffff00000000ull) == flag;
        if (arrived) break;
        if (wt.give_up(a.timeout_ns, a.claim, a.abort)) {
          // Reported like the pull version's first barrier ("barrier 1 of 2, waiting for inputs").
          record(wt.why, a.claim, a.err, a.op, 1, r, 2, a.timeout_ms);
          return;
        }
      }
      uint32_t w[kLlWords];
#pragma unroll
      for (int k = 0; k < kLlWords; ++k) w[k] = static_cast<uint32_t>(line[k]);
      memcpy(&in[r], w, sizeof w);
    }
    const Pack<T, N> res = reduce_packs<T, N, OP, kMaxCollWorld>(in, a.world);
    if (i < nfull && (IN_PLACE || out_vec)) {
      store<T, N>(dst + i * N, res);
    } else {
#pragma unroll
      for (int q = 0; q < N; ++q)
        if (i * N + q < count) dst[i * N + q] = res.v[q];
    }
  }
  phases::mark_end(phases::kOneShotLl, IN_PLACE, count * sizeof(T));
}

// ---- one-shot all-reduce, 128-byte lines ---------------------------------------------------------
// For inputs above the low-latency lines up to SYMMEM_CUDA_LL128_MAX_BYTES, in an area of their own
// (layout.h). A warp sends its input in chunks of kLl128ChunkWords 8-byte words as four 128-byte
// lines: 8 lanes a line, 16 bytes a lane, and in each line's last word the call's flag. A line that
// one warp instruction stores crosses NVLink as one write, and one warp load reads it whole, so a
// receiver that finds the flag in a line's last word has its 15 data words too. That is what NCCL's
// LL128 protocol relies on; between ranks on one GPU nothing promises it, so buffers whose ranks
// share a GPU go without (DeviceBuffer::ll128_cap). As with the low-latency lines there is neither a
// fence nor a separate signal: nothing waits for the link to drain before signalling, and each
// chunk is reduced as soon as it has landed while later ones are still on their way (a warp sends
// kLl128Lead chunks ahead of the one it waits for: at 4 MiB on 2 x H200, 1 ahead 16.4 us, 2 ahead
// 16.8, 4 ahead 17.5). The push one-shot at 4 MiB spends a quarter of its kernel waiting for its
// fence while the link drains and an eighth reducing after the wait (kernel phases,
// docs/benchmarks-history.md). Flags, slots and in place as in the low-latency one-shot: the flag is the
// epoch with its low bit set, under a tag in the high word (never 0, never the previous call's flag
// in the slot), and a thread reduces exactly the words it sent.
constexpr uint64_t kLl128Lead = 1;
constexpr uint64_t kLl128FlagTag = uint64_t{0x4c4c3132} << 32;  // "LL12"
constexpr uint64_t kLl128LineWords = 15;                         // data words of one line
static_assert(4 * kLl128LineWords == kLl128ChunkWords && 4 * 128 == kLl128ChunkBytes,
              "a chunk is a warp's four lines");

__device__ __forceinline__ void st_volatile_v2(uint64_t* p, uint64_t x, uint64_t y) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(x), "l"(y) : "memory");
}
__device__ __forceinline__ void ld_volatile_v2(const uint64_t* p, uint64_t& x, uint64_t& y) {
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(x), "=l"(y) : "l"(p) : "memory");
}

// A lane's part of every chunk: word `pos` of the chunk, and pos + 1 except in a line's last lane,
// whose second word is the flag; its 16 bytes of a chunk's lines lie lane * 2 words in. Own words
// are read with plain loads, cached in L1: a kernel reads each own word a second time (only this
// lane writes it, and only after that second load), and L1 still holds it then (ld.global.cg,
// which goes to L2 both times, was 0.6 us slower at 4 MiB on 2 x H200). Results go to dst as 8-byte
// words where dst is 8-byte aligned (out_vec, or in place), else element by element; nothing is
// read or stored beyond `count`.
template <class T, bool IN_PLACE>
struct Ll128Lane {
  static constexpr int M = 8 / sizeof(T);  // elements of one word
  static_assert(M * sizeof(T) == 8, "8-byte words");
  using Word = Pack<T, M>;
  const T* own;
  T* dst;
  uint64_t count, nwords, nchunks;
  int lane, out_vec;
  uint64_t pos;
  bool flag_lane;

  __device__ Ll128Lane(const T* own_, T* dst_, uint64_t count_, int out_vec_)
      : own(own_), dst(dst_), count(count_), nwords((count_ + M - 1) / M),
        nchunks((nwords + kLl128ChunkWords - 1) / kLl128ChunkWords), lane(threadIdx.x & 31),
        out_vec(out_vec_), pos((lane >> 3) * kLl128LineWords + (lane & 7) * 2),
        flag_lane((lane & 7) == 7) {}

  // This lane's first word of chunk c.
  __device__ uint64_t word(uint64_t c) const { return c * kLl128ChunkWords + pos; }
  __device__ uint64_t load_word(uint64_t w) const {
    if (w >= nwords) return 0;
    const T* p = own + w * M;
    if ((w + 1) * M <= count) return *reinterpret_cast<const uint64_t*>(p);
    Word v;
#pragma unroll
    for (int q = 0; q < M; ++q) v.v[q] = w * M + q < count ? p[q] : from_f<T>(0.f);
    uint64_t u;
    memcpy(&u, &v, 8);
    return u;
  }
  __device__ void store_word(uint64_t w, const Word& v) const {
    if (w >= nwords) return;
    T* p = dst + w * M;
    if ((w + 1) * M <= count && (IN_PLACE || out_vec)) {
      *reinterpret_cast<Word*>(p) = v;
    } else {
#pragma unroll
      for (int q = 0; q < M; ++q)
        if (w * M + q < count) p[q] = v.v[q];
    }
  }
  // The own words of chunk c as this lane sends them: the flag in a line's last lane.
  __device__ void own_line(uint64_t c, uint64_t flag, uint64_t& x, uint64_t& y) const {
    const uint64_t w = word(c);
    x = load_word(w);
    y = flag_lane ? flag : load_word(w + 1);
  }
  // Stores the chunk's words x, y (y is not data in a line's last lane).
  __device__ void store_line(uint64_t c, uint64_t x, uint64_t y) const {
    Word v0, v1;
    memcpy(&v0, &x, 8);
    memcpy(&v1, &y, 8);
    store_word(word(c), v0);
    if (!flag_lane) store_word(word(c) + 1, v1);
  }
};

// This lane's 16 bytes of slice position k in the region `region` bytes into rank `to`'s area.
__device__ __forceinline__ uint64_t* ll128_at(const CollArgs& a, int to, uint64_t region, uint64_t k,
                                              int lane) {
  char* lines = a.data[to] + a.ll128_delta + region;
  return reinterpret_cast<uint64_t*>(lines) + k * (kLl128ChunkBytes / 8) + lane * 2;
}

// Waits until all four lines of a chunk at `src` (this lane's 16 bytes of them) carry `flag` and
// leaves this lane's words in x, y. Lane 0 decides for the whole warp, which polls and leaves
// together; false: the wait gave up, recorded as barrier `index` of 2 waiting for rank `from`.
__device__ __forceinline__ bool ll128_wait(const CollArgs& a, const uint64_t* src, uint64_t flag,
                                           int lane, int from, int index, uint64_t& x, uint64_t& y) {
  Waiter wt;
  for (;;) {
    ld_volatile_v2(src, x, y);
    const bool here = __shfl_sync(0xffffffffu, y, lane | 7) == flag;
    if (__all_sync(0xffffffffu, here)) return true;
    const int gave_up = wt.give_up(a.timeout_ns, a.claim, a.abort);
    if (__shfl_sync(0xffffffffu, gave_up, 0) != 0) {
      if (lane == 0) record(wt.why, a.claim, a.err, a.op, index, from, 2, a.timeout_ms);
      return false;
    }
  }
}

// out_vec: out is 8-byte aligned (else its elements are stored one by one), as in the low-latency
// one-shot.
template <class T, int OP, bool IN_PLACE, int W>
__global__ void __launch_bounds__(512, blocks_per_sm<W>())
    one_shot_ll128_kernel(CollArgs a, uint64_t count, T* out, int out_vec) {
  using Lane = Ll128Lane<T, IN_PLACE>;
  using Word = typename Lane::Word;
  const uint32_t e = enter_epoch(a);
  const int world = world_of<W>(a);
  const uint64_t flag = kLl128FlagTag | (e | 1u);
  const uint64_t slot = e & 1u;
  T* own = reinterpret_cast<T*>(a.data[a.rank]);
  const Lane l(own, IN_PLACE ? own : out, count, out_vec);
  const uint64_t warp = gtid() / 32, nwarps = gsize() / 32;
  // This lane's 16 bytes of chunk c's lines in rank `to`'s area, in this call's slot for `from`.
  auto lines_of = [&](int to, int from, uint64_t c) {
    return ll128_at(a, to, (slot * world + from) * a.ll128_cap, c, l.lane);
  };
  auto send = [&](uint64_t c) {
    uint64_t x, y;
    l.own_line(c, flag, x, y);
#pragma unroll
    for (int r = 0; r < W; ++r)
      if (r < world && r != a.rank) st_volatile_v2(lines_of(r, a.rank, c), x, y);
  };
  // Waits for chunk c of every peer and reduces it with the own words; false: the wait gave up.
  auto receive = [&](uint64_t c) -> bool {
    Word in0[W], in1[W];
#pragma unroll
    for (int r = 0; r < W; ++r) {
      if (r >= world) continue;
      uint64_t x, y;
      if (r == a.rank) {
        l.own_line(c, 0, x, y);
      } else if (!ll128_wait(a, lines_of(a.rank, r, c), flag, l.lane, r, 1, x, y)) {
        // Reported like the pull version's first barrier ("barrier 1 of 2, waiting for inputs").
        return false;
      }
      memcpy(&in0[r], &x, 8);
      memcpy(&in1[r], &y, 8);
    }
    l.store_word(l.word(c), reduce_packs<T, Lane::M, OP, W>(in0, world));
    if (!l.flag_lane) l.store_word(l.word(c) + 1, reduce_packs<T, Lane::M, OP, W>(in1, world));
    return true;
  };
  const uint64_t nchunks = l.nchunks;
  if (warp < nchunks) send(warp);
  __syncthreads();  // every thread has read the block's epoch word before it is advanced
  advance_epochs(a, e + 3);
  uint64_t waited = warp;  // the next chunk to receive
  for (uint64_t c = warp + nwarps, ahead = 1; c < nchunks; c += nwarps) {
    send(c);
    if (++ahead > kLl128Lead) {
      if (!receive(waited)) return;
      waited += nwarps;
    }
  }
  for (; waited < nchunks; waited += nwarps)
    if (!receive(waited)) return;
  phases::mark_end(phases::kOneShotLl128, IN_PLACE, count * sizeof(T));
}

// ---- two-shot all-reduce, 128-byte lines (worlds 3 and 4) --------------------------------------
// The one-shot's chunks, split into `world` slices of whole chunks (the last may be short or
// empty); rank r reduces slice r. Each [slot][rank] region of the area holds a reduce area and,
// from ll128_gather_off, a gather area, each with room for a slice.
//   1. Every rank sends each other slice's chunks of its input, as lines, into the owner's reduce
//      area [slot][own rank].
//   2. For each chunk of its own slice it waits for every peer's lines, reduces them with its own
//      words in rank order, stores the result and sends it, as lines, into every peer's gather
//      area [slot][own rank].
//   3. For each chunk of every other slice it waits for the owner's lines and stores them.
// A warp takes the same slice positions in all three steps, so a lane stores only words that it
// has already read (in place is safe). Nothing waits for anything but lines: no fence, no barrier,
// and each chunk goes on as soon as it has landed. Each rank moves 2 (world - 1) / world of the
// input (the one-shot: world - 1). Slots as in the one-shot: a peer writes this call's slot again
// two calls later, only after it has received this rank's results of the next call, which this
// rank sends only once this call has completed.
template <class T, int OP, bool IN_PLACE, int W>
__global__ void __launch_bounds__(512, blocks_per_sm<W>())
    two_shot_ll128_kernel(CollArgs a, uint64_t count, T* out, int out_vec) {
  using Lane = Ll128Lane<T, IN_PLACE>;
  using Word = typename Lane::Word;
  const uint32_t e = enter_epoch(a);
  const int world = world_of<W>(a);
  const uint64_t flag = kLl128FlagTag | (e | 1u);
  const uint64_t slot = e & 1u;
  T* own = reinterpret_cast<T*>(a.data[a.rank]);
  const Lane l(own, IN_PLACE ? own : out, count, out_vec);
  const uint64_t warp = gtid() / 32, nwarps = gsize() / 32;
  const uint64_t per = (l.nchunks + world - 1) / world;  // chunks of a slice
  const uint64_t gather = a.ll128_cap / 2 / kLl128ChunkBytes * kLl128ChunkBytes;  // ll128_gather_off
  // This lane's 16 bytes of slice position k in rank `to`'s reduce (area 0) or gather (1) area,
  // in this call's slot for `from`.
  auto lines_of = [&](int to, int from, int area, uint64_t k) {
    return ll128_at(a, to, (slot * world + from) * a.ll128_cap + area * gather, k, l.lane);
  };
  for (uint64_t k = warp; k < per; k += nwarps)
    for (int j = 1; j < world; ++j) {  // owners after the own rank first: the links share the load
      const int o = (a.rank + j) % world;
      if (o * per + k >= l.nchunks) continue;
      uint64_t x, y;
      l.own_line(o * per + k, flag, x, y);
      st_volatile_v2(lines_of(o, a.rank, 0, k), x, y);
    }
  __syncthreads();  // every thread has read the block's epoch word before it is advanced
  advance_epochs(a, e + 3);
  for (uint64_t k = warp; k < per && a.rank * per + k < l.nchunks; k += nwarps) {
    const uint64_t c = a.rank * per + k;
    Word in0[W], in1[W];
#pragma unroll
    for (int r = 0; r < W; ++r) {
      if (r >= world) continue;
      uint64_t x, y;
      if (r == a.rank) {
        l.own_line(c, 0, x, y);
      } else if (!ll128_wait(a, lines_of(a.rank, r, 0, k), flag, l.lane, r, 1, x, y)) {
        return;  // "barrier 1 of 2, waiting for inputs", as the pull two-shot's
      }
      memcpy(&in0[r], &x, 8);
      memcpy(&in1[r], &y, 8);
    }
    const Word r0 = reduce_packs<T, Lane::M, OP, W>(in0, world);
    const Word r1 = reduce_packs<T, Lane::M, OP, W>(in1, world);
    uint64_t x, y;
    memcpy(&x, &r0, 8);
    memcpy(&y, &r1, 8);
    if (l.flag_lane) y = flag;
    l.store_line(c, x, y);
    for (int j = 1; j < world; ++j) st_volatile_v2(lines_of((a.rank + j) % world, a.rank, 1, k), x, y);
  }
  for (uint64_t k = warp; k < per; k += nwarps)
    for (int j = 1; j < world; ++j) {
      const int o = (a.rank + j) % world;
      if (o * per + k >= l.nchunks) continue;
      uint64_t x, y;
      if (!ll128_wait(a, lines_of(a.rank, o, 1, k), flag, l.lane, o, 2, x, y))
        return;  // "barrier 2 of 2, waiting for peers"
      l.store_line(o * per + k, x, y);
    }
  phases::mark_end(phases::kTwoShotLl128, IN_PLACE, count * sizeof(T));
}

// ---- two-shot all-reduce ----------------------------------------------------------------------
// Items (vectors) are split into world slices; rank r reduces slice r from every peer.
// In place: the reduced slice is pushed into every rank's buffer; barrier; done (2 barriers).
// Out of place: the reduced slice goes to out and to the own buffer; barrier; every rank gathers
// the other slices from their owners into out; barrier (peers done reading) (3 barriers).
template <class T, int N, bool IN_PLACE, int W>
__device__ __forceinline__ void two_shot_put(const CollArgs& a, T* out, int out_vec, uint64_t i,
                                             const Pack<T, N>& v) {
  if constexpr (IN_PLACE) {
#pragma unroll
    for (int r = 0; r < W; ++r)
      if (r < world_of<W>(a)) store<T, N>(reinterpret_cast<T*>(a.data[r]) + i * N, v);
  } else {
    store_out<T, N>(out + i * N, v, out_vec);
    store<T, N>(reinterpret_cast<T*>(a.data[a.rank]) + i * N, v);
  }
}

// Copies item i (N elements; the last item may hold fewer, up to `count`) from src to dst.
// dst_vec: dst is 16-byte aligned (store_out).
template <class T, int N>
__device__ __forceinline__ void copy_item(T* dst, const T* src, uint64_t i, uint64_t nfull,
                                          uint64_t count, int dst_vec = 1) {
  if (i < nfull) {
    store_out<T, N>(dst, load_cg<T, N>(src), dst_vec);
  } else {
    for (uint64_t j = 0; j < count - i * N; ++j) dst[j] = load_cg<T, 1>(src + j).v[0];
  }
}

// One item of the own slice: reduced from every rank's buffer and put where two_shot_put says.
template <class T, int N, int OP, bool IN_PLACE, int W>
__device__ __forceinline__ void two_shot_item(const CollArgs& a, T* out, int out_vec, uint64_t i,
                                              uint64_t nfull, uint64_t count, int world) {
  if (i < nfull) {
    two_shot_put<T, N, IN_PLACE, W>(a, out, out_vec, i, reduce_at<T, N, OP, W>(a, i * N));
  } else {
    for (uint64_t j = i * N; j < count; ++j) {
      const T v = reduce_at<T, 1, OP, W>(a, j).v[0];
      if constexpr (IN_PLACE) {
        for (int r = 0; r < world; ++r) reinterpret_cast<T*>(a.data[r])[j] = v;
      } else {
        out[j] = v;
        reinterpret_cast<T*>(a.data[a.rank])[j] = v;
      }
    }
  }
}

// In place, the blocks take the own slice's items in chunks (claim_items per thread of a block)
// from a counter in the own pad region, so that a block the link serves faster takes more: with a
// fixed share each, the slowest block ended 10 % after the mean one at 64 and 256 MiB and the
// others idled meanwhile (the kernel phases, docs/benchmarks-history.md). Barrier 2 still pairs blocks:
// each block signals after its own stores, and a rank passes it only once every block of every
// peer has, which covers every chunk whichever block took it. (Out of place, block b gathers the
// items that the peers' block b reduced, so there the share stays fixed.) The next claim is taken
// while the current chunk is reduced; the last block to finish claiming resets the counter for
// the next call, which starts only after this one has completed (stream order, or
// griddepcontrol.wait).
template <class T, int N, int OP, int W>
__device__ __forceinline__ void two_shot_claimed(const CollArgs& a, uint64_t lo, uint64_t hi,
                                                 uint64_t nfull, uint64_t count, int world,
                                                 uint32_t claim_items) {
  PadRegion* pad = reinterpret_cast<PadRegion*>(reinterpret_cast<char*>(a.epochs) - kEpochsOff);
  const uint64_t chunk = uint64_t(blockDim.x) * claim_items;
  __shared__ uint32_t next[2];
  if (threadIdx.x == 0) next[0] = atomicAdd(&pad->two_shot_next, 1u);
  __syncthreads();
  for (int k = 0;; k ^= 1) {
    const uint64_t c_lo = lo + uint64_t(next[k]) * chunk;
    if (c_lo >= hi) break;
    if (threadIdx.x == 0) next[k ^ 1] = atomicAdd(&pad->two_shot_next, 1u);
    const uint64_t c_hi = min(hi, c_lo + chunk);
    for (uint64_t i = c_lo + threadIdx.x; i < c_hi; i += blockDim.x)
      two_shot_item<T, N, OP, true, W>(a, nullptr, 1, i, nfull, count, world);
    __syncthreads();  // the next claim is visible, and next[k] read by all before it is reused
  }
  if (threadIdx.x == 0 && atomicAdd(&pad->two_shot_done, 1u) == gridDim.x - 1) {
    pad->two_shot_next = 0;
    pad->two_shot_done = 0;
  }
}

// unroll2: each thread takes items i and i + gsize() per pass, all 2 x world loads in flight
// before the first add (with a fixed share only). claim_items > 0: in place, chunks claimed as
// above (SYMMEM_CUDA_TWO_SHOT_CLAIM_ITEMS).
template <class T, int N, int OP, bool IN_PLACE, int W>
__global__ void __launch_bounds__(512, blocks_per_sm<W>()) two_shot_kernel(CollArgs a, uint64_t count,
                                                                           T* out, int unroll2,
                                                                           uint32_t claim_items,
                                                                           int out_vec) {
  const uint32_t e = enter_epoch(a);
  const int world = world_of<W>(a);
  constexpr int kBarriers = IN_PLACE ? 2 : 3;
  if (!coll_barrier(a, e + 1, 1, kBarriers)) return;
  const uint64_t nfull = count / N, items = (count + N - 1) / N;
  const uint64_t per = (items + world - 1) / world;
  const uint64_t lo = per * a.rank, hi = min(items, lo + per);
  const uint64_t step = gsize();
  uint64_t i = lo + gtid();
  if (IN_PLACE && claim_items > 0) {
    two_shot_claimed<T, N, OP, W>(a, lo, hi, nfull, count, world, claim_items);
    i = hi;
  } else if (unroll2) {
    const uint64_t full_hi = min(hi, nfull);
    for (; i + step < full_hi; i += 2 * step) {
      Pack<T, N> in0[W], in1[W];
      load_all<T, N, W>(a.data, world, i * N, in0);
      load_all<T, N, W>(a.data, world, (i + step) * N, in1);
      two_shot_put<T, N, IN_PLACE, W>(a, out, out_vec, i, reduce_packs<T, N, OP, W>(in0, world));
      two_shot_put<T, N, IN_PLACE, W>(a, out, out_vec, i + step, reduce_packs<T, N, OP, W>(in1, world));
    }
  }
  for (; i < hi; i += step) two_shot_item<T, N, OP, IN_PLACE, W>(a, out, out_vec, i, nfull, count, world);
  if (!coll_barrier(a, e + 2, 2, kBarriers)) return;
  if constexpr (!IN_PLACE) {
    // Gather every other slice from its owner; visit owners starting after the own rank so the
    // ranks spread their reads over the links.
    for (int k = 1; k < world; ++k) {
      const int p = (a.rank + k) % world;
      const uint64_t plo = per * p, phi = min(items, plo + per);
      const T* src = reinterpret_cast<const T*>(a.data[p]);
      uint64_t i = plo + gtid();
      if (unroll2) {
        const uint64_t full_hi = min(phi, nfull);
        for (; i + step < full_hi; i += 2 * step) {
          const Pack<T, N> v0 = load_cg<T, N>(src + i * N);
          const Pack<T, N> v1 = load_cg<T, N>(src + (i + step) * N);
          store_out<T, N>(out + i * N, v0, out_vec);
          store_out<T, N>(out + (i + step) * N, v1, out_vec);
        }
      }
      for (; i < phi; i += step) copy_item<T, N>(out + i * N, src + i * N, i, nfull, count, out_vec);
    }
    if (!coll_barrier(a, e + 3, 3, kBarriers)) return;
  }
  phases::mark_end(phases::kTwoShot, IN_PLACE, count * sizeof(T));
}

// ---- two-shot all-reduce, push (world 2) -------------------------------------------------------
// The two contributions of a world-2 reduce combined in rank order (rank 0's first), so that both
// ranks round alike whichever holds which.
template <class T, int N, int OP>
__device__ __forceinline__ Pack<T, N> reduce_two(const Pack<T, N>& own, const Pack<T, N>& peer,
                                                 int me) {
  const Pack<T, N> in[2] = {me == 0 ? own : peer, me == 0 ? peer : own};
  return reduce_packs<T, N, OP, 2>(in, 2);
}

// For inputs whose half fits the push scratch. Rank r reduces half r of the items. Every byte
// crosses NVLink as a store, never as a load: on H100 the SMs store into a peer at 361-364 GB/s
// each way and load from it at 331-335 (docs/benchmarks-history.md, the link measured).
//   1. Each rank stores the peer's half of its input into the peer's scratch [slot][own rank] and
//      signals (barrier 1: the release store after the block's stores).
//   2. Once the peer's signal for this block has arrived, it reduces its own half from its own
//      input and that scratch (local reads only) and stores the result into its own data (in
//      place) or out, and into the peer's data at the same place; barrier 2: those stores landed.
//   3. Out of place the peer's result is in the own data (its half there is scratch, as the pull
//      two-shot's is): copied into out.
// Block b of both ranks takes the same items of a half (the same grid on every rank), so a block
// waits only for its partner block. Writing the result into the peer's data is safe: the partner
// block read the peer's input there before it signalled. The scratch slot alternates with the
// call's epoch, as in the push one-shot; nothing reads a peer's memory, so no barrier is needed
// before the first stores or after the last (a peer writes this rank's data only after a barrier
// of its next call, which this rank enters once this call has completed).
template <class T, int N, int OP, bool IN_PLACE>
__global__ void __launch_bounds__(512, blocks_per_sm<2>()) two_shot_push_kernel(CollArgs a,
                                                                                uint64_t count,
                                                                                T* out, int out_vec) {
  const uint32_t e = enter_epoch(a);
  const uint64_t slot = e & 1u;
  const int me = a.rank, peer = 1 - a.rank;
  const uint64_t nfull = count / N, items = (count + N - 1) / N;
  const uint64_t per = (items + 1) / 2;
  const uint64_t my_lo = per * me, my_hi = min(items, my_lo + per);
  const uint64_t peer_lo = per * peer, peer_hi = min(items, peer_lo + per);
  const uint64_t step = gsize();
  T* own = reinterpret_cast<T*>(a.data[me]);
  T* theirs = reinterpret_cast<T*>(a.data[peer]);
  // Element k of a half lies at k in the scratch: this rank's contribution in the peer's, the
  // peer's contribution here.
  T* to_peer = reinterpret_cast<T*>(a.data[peer] + a.scratch_delta + (slot * 2 + me) * a.scratch_cap);
  const T* from_peer =
      reinterpret_cast<const T*>(a.data[me] + a.scratch_delta + (slot * 2 + peer) * a.scratch_cap);
  for (uint64_t i = peer_lo + gtid(); i < peer_hi; i += step)
    copy_item<T, N>(to_peer + (i - peer_lo) * N, own + i * N, i, nfull, count);
  if (!coll_barrier(a, e + 1, 1, 2)) return;
  T* dst = IN_PLACE ? own : out;
  const int dst_vec = IN_PLACE || out_vec;
  for (uint64_t i = my_lo + gtid(); i < my_hi; i += step) {
    const uint64_t k = (i - my_lo) * N;
    if (i < nfull) {
      const Pack<T, N> v = reduce_two<T, N, OP>(load_cg<T, N>(own + i * N),
                                                load_cg<T, N>(from_peer + k), me);
      store_out<T, N>(dst + i * N, v, dst_vec);
      store<T, N>(theirs + i * N, v);
    } else {
      for (uint64_t j = i * N; j < count; ++j) {
        const T v = reduce_two<T, 1, OP>(load_cg<T, 1>(own + j),
                                         load_cg<T, 1>(from_peer + k + (j - i * N)), me).v[0];
        dst[j] = v;
        theirs[j] = v;
      }
    }
  }
  if (!coll_barrier(a, e + 2, 2, 2)) return;
  if constexpr (!IN_PLACE) {
    for (uint64_t i = peer_lo + gtid(); i < peer_hi; i += step)
      copy_item<T, N>(out + i * N, own + i * N, i, nfull, count, out_vec);
  }
  phases::mark_end(phases::kTwoShotPush, IN_PLACE, count * sizeof(T));
}

// ---- copy-engine two-shot (world 2) ------------------------------------------------------------
// The data move by copy engines (ce_two_shot.cu, which also has the protocol); these kernels only
// number the chunks, wait and add. Chunk k of a call has the sequence number *epoch + k (k from 1); flags only grow, so a
// flag a peer has already moved past satisfies a wait too.
__device__ __forceinline__ uint32_t* ce_flag(uint32_t* pad, int kind) {
  return pad + kCeFlagsOff / 4 + kind * kCeFlagStride;
}

// Waits until the own flag `kind` has reached `want`; false (and the error recorded) on a deadline,
// an abort, or another wait of the buffer that failed first.
__device__ bool ce_wait(const CeArgs& a, int kind, uint32_t want, int chunk) {
  const uint32_t* f = ce_flag(a.mine, kind);
  Waiter w;
  while (static_cast<int32_t>(ld_acquire_sys(f) - want) < 0)
    if (w.give_up(a.timeout_ns, a.claim, a.abort)) {
      record(w.why, a.claim, a.err, kOpAllReduceCe, kind + 1, a.peer_rank, chunk, a.timeout_ms);
      return false;
    }
  return true;
}

// The call's first kernel: every chunk's sequence number, from which the copy engines signal.
__global__ void ce_prepare_kernel(CeArgs a, int chunks) {
  const uint32_t base = __ldcg(a.epoch);
  for (int k = threadIdx.x; k < chunks; k += blockDim.x) a.seq[k] = base + k + 1;
}

// Waits until the own flag `kind` has reached chunk `chunk`. One thread: a wait holds no more than
// one block's slot, so that with several calls in flight spinning waits cannot fill the GPU and
// keep out the kernels that the awaited work needs.
__global__ void ce_wait_kernel(CeArgs a, int kind, int chunk) {
  if (threadIdx.x != 0) return;
  (void)ce_wait(a, kind, __ldcg(a.epoch) + chunk, chunk);
}

// dst (own half, chunk `chunk`) = dst op src (the peer's values of it, pushed into the own
// scratch; ce_wait_kernel before it on the stream waited for them). The last block to finish tells
// the peer that the scratch slot may take its next push. After a failed wait nothing is added and
// nothing is signalled (the buffer's state is undefined from then on anyway).
template <class T, int N, int OP>
__global__ void __launch_bounds__(512) ce_reduce_kernel(CeArgs a, T* dst, const T* src,
                                                        uint64_t count, int chunk) {
  if (*reinterpret_cast<const volatile uint32_t*>(a.claim) != 0) return;
  const uint32_t base = __ldcg(a.epoch);
  const uint64_t nfull = count / N;
  for (uint64_t i = gtid(); i < nfull; i += gsize()) {
    const Pack<T, N> in[2] = {load_cg<T, N>(dst + i * N), load_cg<T, N>(src + i * N)};
    store<T, N>(dst + i * N, reduce_packs<T, N, OP, 2>(in, 2));
  }
  for (uint64_t j = nfull * N + gtid(); j < count; j += gsize()) {
    const Pack<T, 1> in[2] = {load_cg<T, 1>(dst + j), load_cg<T, 1>(src + j)};
    dst[j] = reduce_packs<T, 1, OP, 2>(in, 2).v[0];
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(a.blocks_done, 1u) == gridDim.x - 1) {
      atomicExch(a.blocks_done, 0u);
      __threadfence_system();
      st_release_sys(ce_flag(a.peer, kCeConsumed), base + chunk);
    }
  }
}

// The call's last kernel, after every copy of this rank: waits until the peer's reduced half has
// arrived (all `chunks`), then moves the sequence on for the next call.
__global__ void ce_finish_kernel(CeArgs a, int chunks) {
  if (threadIdx.x != 0) return;
  const uint32_t base = __ldcg(a.epoch);
  (void)ce_wait(a, kCeReturned, base + chunks, chunks);
  *a.epoch = base + chunks;
}

// ---- all-gather ---------------------------------------------------------------------------------
// Out of place: out[p*count + j] = rank p's data[j]; barrier before (inputs) and after (reads).
// In place: rank r pushes its block [r*count, (r+1)*count) into every peer's buffer.
// Units of N elements when every block is 16-byte aligned (count % N == 0: the same on every rank),
// else single elements; out_vec: out is 16-byte aligned (store_out).
template <class T, int N, bool IN_PLACE>
__global__ void __launch_bounds__(512) all_gather_kernel(CollArgs a, uint64_t count, T* out,
                                                         int out_vec) {
  const uint32_t e = enter_epoch(a);
  if (!coll_barrier(a, e + 1, 1, 2)) return;
  const uint64_t items = count / N;  // the launcher guarantees count % N == 0
  for (int k = 0; k < a.world; ++k) {
    const int p = (a.rank + k) % a.world;
    if constexpr (IN_PLACE) {
      if (p == a.rank) continue;
      const T* src = reinterpret_cast<const T*>(a.data[a.rank]) + a.rank * count;
      T* dst = reinterpret_cast<T*>(a.data[p]) + a.rank * count;
      for (uint64_t i = gtid(); i < items; i += gsize())
        store<T, N>(dst + i * N, load_cg<T, N>(src + i * N));
    } else {
      const T* src = reinterpret_cast<const T*>(a.data[p]);
      T* dst = out + p * count;
      for (uint64_t i = gtid(); i < items; i += gsize())
        store_out<T, N>(dst + i * N, load_cg<T, N>(src + i * N), out_vec);
    }
  }
  if (!coll_barrier(a, e + 2, 2, 2)) return;
}

// ---- reduce-scatter -----------------------------------------------------------------------------
// Rank r reduces block r ([r*count, (r+1)*count)) over every rank into out (or in place into its
// own block r, which no peer reads).
template <class T, int N, int OP, int W>
__global__ void __launch_bounds__(512, blocks_per_sm<W>()) reduce_scatter_kernel(CollArgs a,
                                                                                 uint64_t count, T* out,
                                                                                 int out_vec) {
  const uint32_t e = enter_epoch(a);
  if (!coll_barrier(a, e + 1, 1, 2)) return;
  const uint64_t items = count / N;  // count % N == 0 (launcher)
  const uint64_t base = a.rank * count;
  for (uint64_t i = gtid(); i < items; i += gsize())
    store_out<T, N>(out + i * N, reduce_at<T, N, OP, W>(a, base + i * N), out_vec);
  if (!coll_barrier(a, e + 2, 2, 2)) return;
}

// ---- broadcast, all-to-all, all-to-all-v ----------------------------------------------------------
// Copies with no arithmetic, so type-blind: 4-byte elements move as float, 2-byte ones as __half.
// Each reads its peers' data between the two barriers (pull), as the all-gather does; the grid comes
// from arguments that are equal on every rank (count, splits_offset), never from a rank's own sizes,
// so that every rank launches the same blocks and the per-block barriers pair.

// n elements from src to dst by `lanes` threads, this one being `lane`: 16-byte vectors where src
// and dst are aligned alike (a head of single elements first), single elements otherwise.
template <class T>
__device__ __forceinline__ void copy_elements(T* dst, const T* src, uint64_t n, uint64_t lane, uint64_t lanes) {
  constexpr int N = 16 / sizeof(T);
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst), sa = reinterpret_cast<uintptr_t>(src);
  if ((d ^ sa) % 16 != 0) {
    for (uint64_t i = lane; i < n; i += lanes) dst[i] = src[i];
    return;
  }
  uint64_t head = ((16 - d % 16) % 16) / sizeof(T);
  if (head > n) head = n;
  for (uint64_t i = lane; i < head; i += lanes) dst[i] = src[i];
  const uint64_t packs = (n - head) / N;
  T* vd = dst + head;
  const T* vs = src + head;
  for (uint64_t i = lane; i < packs; i += lanes) store<T, N>(vd + i * N, load_cg<T, N>(vs + i * N));
  for (uint64_t i = head + packs * N + lane; i < n; i += lanes) dst[i] = src[i];
}

// Broadcast: every rank but an in-place root copies the root's count elements.
template <class T, bool IN_PLACE>
__global__ void __launch_bounds__(512) broadcast_kernel(CollArgs a, uint64_t count, int root, T* out) {
  const uint32_t e = enter_epoch(a);
  if (!coll_barrier(a, e + 1, 1, 2)) return;
  if (!IN_PLACE || a.rank != root)
    copy_elements<T>(IN_PLACE ? reinterpret_cast<T*>(a.data[a.rank]) : out,
                     reinterpret_cast<const T*>(a.data[root]), count, gtid(), gsize());
  coll_barrier(a, e + 2, 2, 2);  // the root's data stay until every rank has read them
}

// All-to-all: block q of the result is block `rank` of rank q's data. In place, `out` is scratch
// that the launcher copies back once the kernel is done (peers read the own data until then).
template <class T>
__global__ void __launch_bounds__(512) all_to_all_kernel(CollArgs a, uint64_t count, T* out) {
  const uint32_t e = enter_epoch(a);
  if (!coll_barrier(a, e + 1, 1, 2)) return;
  for (int k = 0; k < a.world; ++k) {
    const int q = (a.rank + k) % a.world;  // spread the ranks' reads over the owners
    copy_elements<T>(out + q * count, reinterpret_cast<const T*>(a.data[q]) + a.rank * count, count, gtid(),
                     gsize());
  }
  coll_barrier(a, e + 2, 2, 2);
}

// The verdict on every rank's splits row (world counts, then the capacity), the same on every rank
// and block: 0 when they fit, else kSplit*, recorded by block 0 (ErrorRecord::bad_splits).
__device__ uint32_t judge_splits(const int64_t* rows, int world, uint64_t room, ErrorRecord* err, bool report) {
  uint32_t kind = 0;
  int from = 0, to = 0;
  int64_t n = 0;
  uint64_t at = 0, limit = 0, total = 0;
  for (int q = 0; q < world && kind == 0; ++q) {
    uint64_t sent = 0;
    for (int p = 0; p < world; ++p) {
      const int64_t x = rows[q * (world + 1) + p];
      if (x < 0 || uint64_t(x) > room - sent) {
        kind = x < 0 ? kSplitNegative : kSplitInput;
        from = q, to = p, n = x, at = sent, limit = room;
        break;
      }
      sent += uint64_t(x);
    }
  }
  for (int p = 0; p < world && kind == 0; ++p) {
    const int64_t c = rows[p * (world + 1) + world];
    const uint64_t capacity = c < 0 ? 0 : uint64_t(c);
    uint64_t received = 0;
    for (int q = 0; q < world; ++q) {
      const uint64_t x = uint64_t(rows[q * (world + 1) + p]);
      if (x > capacity - received) {
        kind = kSplitOutput;
        from = q, to = p, n = int64_t(x), at = received, limit = capacity;
        for (int k = 0; k < world; ++k) total += uint64_t(rows[k * (world + 1) + p]);
        break;
      }
      received += x;
    }
  }
  if (kind != 0 && report) {
    err->split_from = from;
    err->split_to = to;
    err->split_n = n;
    err->split_at = at;
    err->split_limit = limit;
    err->split_total = total;
    __threadfence_system();
    err->bad_splits = kind;
    __threadfence_system();
  }
  return kind;
}

// Bytes before the data of the in-place scratch: the received count (UINT64_MAX after bad splits),
// for the copy back; 16 keep the data 16-byte aligned.
constexpr uint64_t kA2avScratchHeader = 16;

// All-to-all-v: each block writes the own capacity beside the own splits (its own barrier orders
// it for the peers' same block), reads every row after the first barrier, judges them, and copies
// the parts for this rank, packed in rank order. out_splits: counts, then offsets (block 0).
template <class T, bool IN_PLACE>
__global__ void __launch_bounds__(512) all_to_all_v_kernel(CollArgs a, uint64_t splits_at, T* out,
                                                           uint64_t capacity, int64_t* out_splits) {
  __shared__ int64_t rows[kMaxCollWorld * (kMaxCollWorld + 1)];
  __shared__ uint32_t verdict;
  const uint32_t e = enter_epoch(a);
  const int world = a.world;
  if (threadIdx.x == 0) {
    reinterpret_cast<int64_t*>(a.data[a.rank] + splits_at)[world] =
        capacity > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(capacity);
    __threadfence_system();
  }
  if (!coll_barrier(a, e + 1, 1, 2)) return;
  for (int t = threadIdx.x; t < world * (world + 1); t += blockDim.x)
    rows[t] = __ldcg(reinterpret_cast<const long long*>(a.data[t / (world + 1)] + splits_at) + t % (world + 1));
  __syncthreads();
  if (threadIdx.x == 0) verdict = judge_splits(rows, world, splits_at / sizeof(T), a.err, blockIdx.x == 0);
  __syncthreads();
  uint64_t received = 0;
  for (int q = 0; q < world; ++q) received += verdict == 0 ? uint64_t(rows[q * (world + 1) + a.rank]) : 0;
  if (IN_PLACE && blockIdx.x == 0 && threadIdx.x == 0)
    *reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(out) - kA2avScratchHeader) =
        verdict == 0 ? received : UINT64_MAX;
  if (verdict == 0) {
    uint64_t offset = 0;
    for (int q = 0; q < world; ++q) {
      uint64_t from = 0;  // where rank q's part for this rank starts in its input
      for (int p = 0; p < a.rank; ++p) from += uint64_t(rows[q * (world + 1) + p]);
      const uint64_t n = uint64_t(rows[q * (world + 1) + a.rank]);
      if (blockIdx.x == 0 && threadIdx.x == 0) {
        out_splits[q] = int64_t(n);
        out_splits[world + q] = int64_t(offset);
      }
      copy_elements<T>(out + offset, reinterpret_cast<const T*>(a.data[q]) + from, n, gtid(), gsize());
      offset += n;
    }
  }
  coll_barrier(a, e + 2, 2, 2);  // also after bad splits: every rank has read every row
}

// The in-place all-to-all-v's copy back from its scratch, as many elements as were received.
template <class T>
__global__ void __launch_bounds__(512) a2av_copy_back_kernel(T* dst, const T* scratch) {
  const uint64_t n = *reinterpret_cast<const uint64_t*>(reinterpret_cast<const char*>(scratch) - kA2avScratchHeader);
  if (n == UINT64_MAX) return;
  copy_elements<T>(dst, scratch, n, gtid(), gsize());
}

// ---- launch helpers -----------------------------------------------------------------------------
// The runtime's cudaLaunchKernelEx finds the kernel's function for the current context on every
// call (a lookup keyed by the host stub) and then calls the driver's cuLaunchKernelEx. Here each
// kernel's function is looked up once per device (cudaGetFuncBySymbol, as NCCL's enqueue does) and
// launched through the driver directly: the same launch without the lookup. Anything the driver
// refuses (a stale function after a device reset, an older driver) goes the runtime's way, which
// reports the error as before; the slot is cleared so that the next call looks the function up
// again. The legacy default stream (NULL) always goes the runtime's way, which knows whether this
// library was built with per-thread default streams.
constexpr int kMaxLaunchDevices = 64;

template <auto K>
std::atomic<CUfunction>& function_slot(int device) {
  static std::atomic<CUfunction> slots[kMaxLaunchDevices];  // static storage: all null
  return slots[device];
}

template <auto K>
CUfunction driver_function(int device) {
  if (device < 0 || device >= kMaxLaunchDevices) return nullptr;
  std::atomic<CUfunction>& slot = function_slot<K>(device);
  CUfunction f = slot.load(std::memory_order_acquire);
  if (f != nullptr) return f;
  cudaFunction_t rf = nullptr;
  if (cudaGetFuncBySymbol(&rf, reinterpret_cast<const void*>(K)) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  f = reinterpret_cast<CUfunction>(rf);
  slot.store(f, std::memory_order_release);
  return f;
}

const Driver* launch_driver() {
  static const Driver* d = [] {
    const Driver* t = nullptr;
    return driver(&t) == SYMMEM_OK ? t : nullptr;
  }();
  return d;
}

// One launch through the driver; false: not launched (the caller takes the runtime's way).
template <auto K, class... P, class... A>
bool launch_direct(void (*)(P...), bool pdl, int blocks, int threads, cudaStream_t s, A&&... args) {
  const Driver* d = launch_driver();
  if (d == nullptr || d->LaunchKernelEx == nullptr) return false;
  const int device = t_launch_device;
  const CUfunction f = driver_function<K>(device);
  if (f == nullptr) return false;
  // As the runtime's cudaLaunchKernelEx: each argument converted to the kernel's parameter type,
  // then one pointer per parameter.
  const CUresult r = [&](P... coerced) {
    void* params[] = {&coerced...};
    CUlaunchAttribute attr[1];
    attr[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr[0].value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg = {};
    cfg.gridDimX = static_cast<unsigned>(blocks);
    cfg.gridDimY = 1;
    cfg.gridDimZ = 1;
    cfg.blockDimX = static_cast<unsigned>(threads);
    cfg.blockDimY = 1;
    cfg.blockDimZ = 1;
    cfg.sharedMemBytes = 0;
    cfg.hStream = reinterpret_cast<CUstream>(s);
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
#ifdef SYMMEM_HOT_PATH_COUNTERS
    const uint64_t t0 = hot::now_ns();
    const CUresult launched = d->LaunchKernelEx(&cfg, f, params, nullptr);
    hot::driver_ns() += hot::now_ns() - t0;
    return launched;
#else
    return d->LaunchKernelEx(&cfg, f, params, nullptr);
#endif
  }(std::forward<A>(args)...);
  if (r == CUDA_SUCCESS) return true;
  function_slot<K>(device).store(nullptr, std::memory_order_release);
  return false;
}

// Launches kernel K, with programmatic dependent launch when `pdl` (or the launch with the
// attribute is refused: then a plain launch).
template <auto K, class... A>
cudaError_t launch_with(bool pdl, int blocks, int threads, cudaStream_t s, A&&... args) {
  const Tuning& tu = tuning();
  if (tu.direct_launch && s != nullptr && launch_direct<K>(K, pdl, blocks, threads, s, args...)) {
    SYMMEM_HOT_COUNT(kLaunchDriver);
    return cudaSuccess;
  }
  SYMMEM_HOT_COUNT(kLaunchRuntime);
  if (pdl) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    if (cudaLaunchKernelEx(&cfg, K, std::forward<A>(args)...) == cudaSuccess) return cudaSuccess;
    (void)cudaGetLastError();
  }
  K<<<blocks, threads, 0, s>>>(std::forward<A>(args)...);
  return cudaGetLastError();
}

// Launches kernel K with programmatic dependent launch, unless SYMMEM_CUDA_PDL=0 or the GPU is older
// than compute capability 9.0 (its kernels are built without griddepcontrol).
template <auto K, class... A>
cudaError_t launch(int blocks, int threads, cudaStream_t s, A&&... args) {
  const bool pdl = tuning().pdl != 0 && has_programmatic_launch(t_launch_device);
  return launch_with<K>(pdl, blocks, threads, s, std::forward<A>(args)...);
}

// The copy-engine two-shot's kernels go without PDL: a kernel launched early holds its SM slots
// while it waits for the previous one, and these chains wait on copies and on other streams, so
// the slots would be held for as long as a copy takes.
template <auto K, class... A>
cudaError_t launch_plain(int blocks, int threads, cudaStream_t s, A&&... args) {
  return launch_with<K>(false, blocks, threads, s, std::forward<A>(args)...);
}

struct Grid {
  int blocks, threads;
};
// `items` work items, one per thread while the grid allows, at most `max_blocks` blocks.
// spread (one-shot): over as many blocks (SMs) as allowed with at least min_threads threads each
// (64 KiB push one-shot: 5.5 us against 6.0 with full blocks); otherwise, and with min_threads =
// threads, blocks are filled first (two-shot, all-gather, reduce-scatter: spreading them measured
// slower, e.g. reduce-scatter at 64 KiB 7.9 against 7.45 us).
Grid grid_for(uint64_t items, int max_blocks, bool spread = false) {
  const Tuning& tu = tuning();
  const int threads_max = tu.threads;
  uint64_t need = items == 0 ? 1 : items;
  if (!spread || tu.min_threads >= threads_max) {
    int threads = need < uint64_t(threads_max) ? static_cast<int>((need + 31) / 32 * 32)
                                               : threads_max;
    uint64_t blocks = (need + threads - 1) / threads;
    if (blocks > uint64_t(max_blocks)) blocks = max_blocks;
    return {static_cast<int>(blocks), threads};
  }
  uint64_t blocks = (need + tu.min_threads - 1) / tu.min_threads;
  if (blocks > uint64_t(max_blocks)) blocks = max_blocks;
  if (blocks == 0) blocks = 1;
  uint64_t threads = ((need + blocks - 1) / blocks + 31) / 32 * 32;
  if (threads > uint64_t(threads_max)) threads = threads_max;
  return {static_cast<int>(blocks), static_cast<int>(threads)};
}

// The 128-byte-line kernels' grid: full blocks split in two, the same threads on the same SMs (so
// the room a concurrent collective finds is unchanged), scheduled as twice the blocks (one-shot at
// world 2: 2 MiB 9.6 against 9.9 us, 4 MiB 16.3 against 16.4 on 2 x H200).
Grid split_full_blocks(Grid g) {
  if (g.threads == 512 && 2 * g.blocks <= kMaxBlocks) return {2 * g.blocks, 256};
  return g;
}

template <class T, int N, int OP, int W>
cudaError_t all_reduce_t(const CollArgs& a, int algo, uint64_t count, T* out, int out_vec,
                         cudaStream_t s) {
  const uint64_t items = (count + N - 1) / N;
  const Tuning& tu = tuning();
  if (algo == SYMMEM_ALGO_ONE_SHOT) {
    const uint64_t bytes = count * sizeof(T);
    // Every path is chosen by size and area alone, never by out's alignment (each rank's own).
    constexpr int NV = 16 / sizeof(T);
    static_assert(N == NV, "all-reduce kernels take vectors of 16 bytes (store_out)");
    const uint64_t vec_items = (count + NV - 1) / NV;
    Grid gl = grid_for(vec_items, tu.one_shot_blocks, true);
    if (bytes <= tu.ll_max_bytes && 2 * vec_items * sizeof(Pack<T, NV>) <= a.ll_cap) {
      if (out == nullptr)
        return launch<one_shot_ll_kernel<T, NV, OP, true>>(gl.blocks, gl.threads, s, a, count,
                                                           static_cast<T*>(nullptr), 1);
      return launch<one_shot_ll_kernel<T, NV, OP, false>>(gl.blocks, gl.threads, s, a, count, out,
                                                          out_vec);
    }
    // Worlds 2 to 4 only: the lines' area is empty above (DeviceBuffer::ll128_cap).
    if constexpr (W <= 4) {
      if (bytes <= ll128_one_shot_max_bytes(a.ll128_cap, a.world)) {
        gl = split_full_blocks(gl);
        if (out == nullptr)
          return launch<one_shot_ll128_kernel<T, OP, true, W>>(gl.blocks, gl.threads, s, a, count,
                                                               static_cast<T*>(nullptr), 1);
        return launch<one_shot_ll128_kernel<T, OP, false, W>>(gl.blocks, gl.threads, s, a, count,
                                                              out, out_vec);
      }
    }
    // One item per thread while the grid allows (a thread's items are reduced one after the
    // other, each a round trip to the peers); in place up to KREG each at the largest sizes.
    const Grid g = grid_for(items, tu.one_shot_blocks, true);
    const int unroll2 = tu.unroll >= 2 ? 1 : 0;
    if (bytes <= push_one_shot_max_bytes(a.scratch_cap)) {
      if (out == nullptr)
        return launch<one_shot_push_kernel<T, N, OP, true, W>>(g.blocks, g.threads, s, a, count,
                      static_cast<T*>(nullptr), unroll2, 1);
      return launch<one_shot_push_kernel<T, N, OP, false, W>>(g.blocks, g.threads, s, a, count, out,
                    unroll2, out_vec);
    }
    if (out == nullptr)
      return launch<one_shot_kernel<T, N, OP, true, W>>(g.blocks, g.threads, s, a, count,
                    static_cast<T*>(nullptr), 1);
    return launch<one_shot_kernel<T, N, OP, false, W>>(g.blocks, g.threads, s, a, count, out, out_vec);
  }
  if constexpr (W == 4) {
    // Worlds 3 and 4 (the lines' area is empty elsewhere): the 128-byte-line two-shot while a
    // slice fits its half of a region, on the one-shot's grid for a slice's vectors.
    if (count * sizeof(T) <= ll128_two_shot_max_bytes(a.ll128_cap, a.world)) {
      constexpr int NV = 16 / sizeof(T);
      const uint64_t slice_vecs = ((count + NV - 1) / NV + a.world - 1) / a.world;
      const Grid gl = split_full_blocks(grid_for(slice_vecs, tu.one_shot_blocks, true));
      if (out == nullptr)
        return launch<two_shot_ll128_kernel<T, OP, true, W>>(gl.blocks, gl.threads, s, a, count,
                                                             static_cast<T*>(nullptr), 1);
      return launch<two_shot_ll128_kernel<T, OP, false, W>>(gl.blocks, gl.threads, s, a, count, out,
                                                            out_vec);
    }
  }
  Grid g = grid_for((items + a.world - 1) / a.world, tu.two_shot_blocks);
  if constexpr (W == 2) {
    // Half the items into the peer's scratch (see two_shot_push_kernel).
    if (count * sizeof(T) <= push_two_shot_max_bytes(a.scratch_cap, 2)) {
      if (out == nullptr)
        return launch<two_shot_push_kernel<T, N, OP, true>>(g.blocks, g.threads, s, a, count,
                                                            static_cast<T*>(nullptr), 1);
      return launch<two_shot_push_kernel<T, N, OP, false>>(g.blocks, g.threads, s, a, count, out,
                                                           out_vec);
    }
  }
  const int unroll2 = tu.unroll >= 2 ? 1 : 0;
  if (out == nullptr)
    return launch<two_shot_kernel<T, N, OP, true, W>>(g.blocks, g.threads, s, a, count,
                  static_cast<T*>(nullptr), unroll2, tu.claim_items, 1);
  return launch<two_shot_kernel<T, N, OP, false, W>>(g.blocks, g.threads, s, a, count, out, unroll2,
                                                     0u, out_vec);
}

template <class F>
decltype(auto) with_cuda_dtype(int dtype, F&& f) {
  return with_dtype<float, __nv_bfloat16, __half>(dtype, std::forward<F>(f));
}

template <class T>
cudaError_t all_reduce_dt(const CollArgs& a, int algo, int op, uint64_t count, void* out,
                          cudaStream_t s) {
  constexpr int N = 16 / sizeof(T);
  T* o = static_cast<T*>(out);
  // The kernels read the symmetric data as vectors (always 16-byte aligned) and store a pack into
  // out whole only where out is aligned too (store_out).
  const int out_vec = o == nullptr || reinterpret_cast<uintptr_t>(o) % 16 == 0 ? 1 : 0;
  return with_op(op, [&](auto r) {
    return with_world(a.world, [&](auto w) {
      constexpr int OP = decltype(r)::value, W = decltype(w)::value;
      return all_reduce_t<T, N, OP, W>(a, algo, count, o, out_vec, s);
    });
  });
}

template <class T, int N>
cudaError_t all_gather_t(const CollArgs& a, uint64_t count, T* out, int out_vec, cudaStream_t s) {
  Grid g = grid_for(count / N, tuning().two_shot_blocks);
  if (out == nullptr)
    return launch<all_gather_kernel<T, N, true>>(g.blocks, g.threads, s, a, count,
                  static_cast<T*>(nullptr), 1);
  return launch<all_gather_kernel<T, N, false>>(g.blocks, g.threads, s, a, count, out, out_vec);
}

// The unit (vectors or elements) comes from the count alone, the same on every rank; out's
// alignment, each rank's own, only decides how a unit is stored (store_out).
template <class T>
cudaError_t all_gather_dt(const CollArgs& a, uint64_t count, void* out, cudaStream_t s) {
  constexpr int N = 16 / sizeof(T);
  T* o = static_cast<T*>(out);
  const int out_vec = reinterpret_cast<uintptr_t>(o) % 16 == 0 ? 1 : 0;
  return count % N == 0 ? all_gather_t<T, N>(a, count, o, out_vec, s)
                        : all_gather_t<T, 1>(a, count, o, 1, s);
}

template <class T, int N, int OP>
cudaError_t reduce_scatter_t(const CollArgs& a, uint64_t count, T* out, int out_vec, cudaStream_t s) {
  Grid g = grid_for(count / N, tuning().two_shot_blocks);
  return with_world(a.world, [&](auto w) {
    return launch<reduce_scatter_kernel<T, N, OP, decltype(w)::value>>(g.blocks, g.threads, s, a,
                                                                      count, out, out_vec);
  });
}

template <class T>
cudaError_t reduce_scatter_dt(const CollArgs& a, int op, uint64_t count, void* out,
                              cudaStream_t s) {
  constexpr int N = 16 / sizeof(T);
  // In place: the result goes to the own block.
  T* o = out != nullptr ? static_cast<T*>(out)
                        : reinterpret_cast<T*>(a.data[a.rank]) + a.rank * count;
  // As in all_gather_dt: the unit from the count, out's alignment only for the stores.
  const int out_vec = reinterpret_cast<uintptr_t>(o) % 16 == 0 ? 1 : 0;
  return with_op(op, [&](auto r) {
    return count % N == 0 ? reduce_scatter_t<T, N, decltype(r)::value>(a, count, o, out_vec, s)
                          : reduce_scatter_t<T, 1, decltype(r)::value>(a, count, o, 1, s);
  });
}

// ---- loading every kernel up front --------------------------------------------------------------
// With lazy loading (CUDA's default since 12.2) a kernel's code is loaded at its first launch, and
// loading may wait for the whole device to go idle. A collective kernel spins until its peer's
// kernel arrives, so a first launch in one thread, while another thread's collective spins, waits
// for that collective; the peer, doing the same, waits for this one. Both ranks then stall until a
// deadline (measured: copies and launches blocked for exactly one collective deadline with three or
// more threads per rank). Loading every instantiation before the first collective removes the wait.
struct Loader {
  cudaError_t first = cudaSuccess;
  template <class... P>
  void operator()(void (*k)(P...)) {
    cudaFuncAttributes attr;
    const cudaError_t e = cudaFuncGetAttributes(&attr, k);
    if (e != cudaSuccess && first == cudaSuccess) first = e;
  }
};

// All-reduce kernels exist for vectors only (N = 16 / sizeof(T)); reduce-scatter for both.
template <class T, int N, int OP, int W>
void load_world_reductions(Loader& load) {
  load(reduce_scatter_kernel<T, N, OP, W>);
  if constexpr (N == 16 / sizeof(T)) {
    load(one_shot_kernel<T, N, OP, true, W>);
    load(one_shot_kernel<T, N, OP, false, W>);
    load(one_shot_push_kernel<T, N, OP, true, W>);
    load(one_shot_push_kernel<T, N, OP, false, W>);
    if constexpr (W <= 4) {
      load(one_shot_ll128_kernel<T, OP, true, W>);
      load(one_shot_ll128_kernel<T, OP, false, W>);
    }
    if constexpr (W == 4) {
      load(two_shot_ll128_kernel<T, OP, true, W>);
      load(two_shot_ll128_kernel<T, OP, false, W>);
    }
    load(two_shot_kernel<T, N, OP, true, W>);
    load(two_shot_kernel<T, N, OP, false, W>);
    if constexpr (W == 2) {
      load(two_shot_push_kernel<T, N, OP, true>);
      load(two_shot_push_kernel<T, N, OP, false>);
    }
  }
}

template <class T, int N, int OP>
void load_reductions(Loader& load) {
  load_world_reductions<T, N, OP, 2>(load);
  load_world_reductions<T, N, OP, 4>(load);
  load_world_reductions<T, N, OP, kMaxCollWorld>(load);
  if constexpr (sizeof(Pack<T, N>) == kLlWords * 4) {
    load(one_shot_ll_kernel<T, N, OP, true>);
    load(one_shot_ll_kernel<T, N, OP, false>);
  }
  load(ce_reduce_kernel<T, N, OP>);
}

template <class T, int N>
void load_gathers(Loader& load) {
  load(all_gather_kernel<T, N, true>);
  load(all_gather_kernel<T, N, false>);
}

}  // namespace

static_assert(kTunableSpecs[static_cast<int>(Tunable::kCudaOneShotBlocks)].hi == kMaxBlocks &&
                  kTunableSpecs[static_cast<int>(Tunable::kCudaTwoShotBlocks)].hi == kMaxBlocks,
              "the block-count tunables stop at the most blocks the flags have room for");

thread_local int t_launch_device = -1;

const Tuning& tuning() {
  // symmem_backend_open checked these values (core/tunables.cpp holds their ranges and defaults).
  auto get = [](Tunable t) { return static_cast<int>(tunable_value(t)); };
  static const Tuning t{get(Tunable::kCudaThreads),
                        get(Tunable::kCudaOneShotBlocks),
                        get(Tunable::kCudaTwoShotBlocks),
                        get(Tunable::kCudaMinThreads),
                        get(Tunable::kCudaPdl),
                        tunable_or(Tunable::kCudaPushMaxBytes, ~uint64_t{0}),
                        get(Tunable::kCudaUnroll),
                        get(Tunable::kCudaDirectLaunch),
                        tunable_or(Tunable::kCudaLlMaxBytes, ~uint64_t{0}),
                        static_cast<uint32_t>(tunable_value(Tunable::kCudaTwoShotClaimItems)),
                        tunable_value(Tunable::kCudaLl128MaxBytes)};
  return t;
}

uint64_t one_shot_in_place_max_bytes() {
  const Tuning& t = tuning();
  return uint64_t(t.one_shot_blocks) * t.threads * KREG * 16;
}

cudaError_t launch_put_signal(const SigArgs& a, cudaStream_t s) {
  return launch<put_signal_kernel>(1, 32, s, a);
}
cudaError_t launch_wait_signal(const SigArgs& a, cudaStream_t s) {
  return launch<wait_signal_kernel>(1, 32, s, a);
}
cudaError_t launch_signal_value(const SigArgs& a, cudaStream_t s) {
  return launch<signal_value_kernel>(1, 32, s, a);
}
cudaError_t launch_wait_signal_value(const SigArgs& a, cudaStream_t s) {
  return launch<wait_signal_value_kernel>(1, 32, s, a);
}
cudaError_t launch_barrier(const SigArgs& a, cudaStream_t s) {
  return launch<barrier_kernel>(1, (a.world + 31) / 32 * 32, s, a);
}
cudaError_t launch_memset32(uint32_t* p, uint32_t value, uint64_t count, cudaStream_t s) {
  uint64_t blocks = (count + 511) / 512;
  if (blocks > 1024) blocks = 1024;
  return launch<memset32_kernel>(static_cast<int>(blocks), 512, s, p, value, count);
}

cudaError_t launch_all_reduce(CollArgs a, int algo, int dtype, int op, uint64_t count, void* out,
                              cudaStream_t s) {
  a.op = algo == SYMMEM_ALGO_ONE_SHOT ? kOpAllReduceOneShot : kOpAllReduceTwoShot;
  return with_cuda_dtype(dtype, [&](auto t) {
    return all_reduce_dt<typename decltype(t)::type>(a, algo, op, count, out, s);
  });
}

cudaError_t launch_ce_prepare(const CeArgs& a, int chunks, cudaStream_t s) {
  return launch_plain<ce_prepare_kernel>(1, 256, s, a, chunks);
}

cudaError_t launch_ce_wait(const CeArgs& a, int kind, int chunk, cudaStream_t s) {
  return launch_plain<ce_wait_kernel>(1, 32, s, a, kind, chunk);
}

cudaError_t launch_ce_reduce(const CeArgs& a, int dtype, int op, void* dst, const void* src,
                             uint64_t count, int chunk, cudaStream_t s) {
  return with_cuda_dtype(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    constexpr int N = 16 / sizeof(T);
    const bool vec = reinterpret_cast<uintptr_t>(dst) % 16 == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0;
    const Grid g = grid_for(vec ? (count + N - 1) / N : count, tuning().two_shot_blocks);
    return with_op(op, [&](auto r) {
      constexpr int OP = decltype(r)::value;
      if (vec)
        return launch_plain<ce_reduce_kernel<T, N, OP>>(g.blocks, g.threads, s, a, static_cast<T*>(dst),
                                                  static_cast<const T*>(src), count, chunk);
      return launch_plain<ce_reduce_kernel<T, 1, OP>>(g.blocks, g.threads, s, a, static_cast<T*>(dst),
                                                static_cast<const T*>(src), count, chunk);
    });
  });
}

cudaError_t launch_ce_finish(const CeArgs& a, int chunks, cudaStream_t s) {
  return launch_plain<ce_finish_kernel>(1, 32, s, a, chunks);
}

cudaError_t launch_all_gather(CollArgs a, int dtype, uint64_t count, void* out, cudaStream_t s) {
  a.op = kOpAllGather;
  // Copies are type-blind: move float32 as float, 16-bit types as __half.
  if (dtype == SYMMEM_FLOAT32) return all_gather_dt<float>(a, count, out, s);
  return all_gather_dt<__half>(a, count, out, s);
}

cudaError_t launch_reduce_scatter(CollArgs a, int dtype, int op, uint64_t count, void* out,
                                  cudaStream_t s) {
  a.op = kOpReduceScatter;
  return with_cuda_dtype(dtype, [&](auto t) {
    return reduce_scatter_dt<typename decltype(t)::type>(a, op, count, out, s);
  });
}

namespace {

// Copies move 4-byte elements as float and 2-byte ones as __half.
template <class F>
cudaError_t with_copy_type(int dtype, F&& f) {
  if (dtype == SYMMEM_FLOAT32) return f(float{});
  return f(__half{});
}

}  // namespace

cudaError_t launch_broadcast(CollArgs a, int dtype, uint64_t count, int root, void* out, cudaStream_t s) {
  a.op = kOpBroadcast;
  return with_copy_type(dtype, [&](auto t) {
    using T = decltype(t);
    const Grid g = grid_for(count / (16 / sizeof(T)), tuning().two_shot_blocks);
    if (out == nullptr)
      return launch<broadcast_kernel<T, true>>(g.blocks, g.threads, s, a, count, root, static_cast<T*>(nullptr));
    return launch<broadcast_kernel<T, false>>(g.blocks, g.threads, s, a, count, root, static_cast<T*>(out));
  });
}

cudaError_t launch_all_to_all(CollArgs a, int dtype, uint64_t count, void* out, cudaStream_t s) {
  a.op = kOpAllToAll;
  return with_copy_type(dtype, [&](auto t) {
    using T = decltype(t);
    const Grid g = grid_for(count * a.world / (16 / sizeof(T)), tuning().two_shot_blocks);
    return launch<all_to_all_kernel<T>>(g.blocks, g.threads, s, a, count, static_cast<T*>(out));
  });
}

uint64_t a2av_scratch_header() { return kA2avScratchHeader; }

cudaError_t launch_all_to_all_v(CollArgs a, int dtype, uint64_t splits_at, void* out, uint64_t capacity,
                                int64_t* out_splits, bool in_place, cudaStream_t s) {
  a.op = kOpAllToAllV;
  return with_copy_type(dtype, [&](auto t) {
    using T = decltype(t);
    const Grid g = grid_for(splits_at / 16, tuning().two_shot_blocks);
    if (in_place)
      return launch<all_to_all_v_kernel<T, true>>(g.blocks, g.threads, s, a, splits_at, static_cast<T*>(out),
                                                  capacity, out_splits);
    return launch<all_to_all_v_kernel<T, false>>(g.blocks, g.threads, s, a, splits_at, static_cast<T*>(out),
                                                 capacity, out_splits);
  });
}

cudaError_t launch_a2av_copy_back(int dtype, void* dst, const void* scratch, uint64_t max_bytes, cudaStream_t s) {
  return with_copy_type(dtype, [&](auto t) {
    using T = decltype(t);
    const Grid g = grid_for(max_bytes / 16, tuning().two_shot_blocks);
    return launch_plain<a2av_copy_back_kernel<T>>(g.blocks, g.threads, s, static_cast<T*>(dst),
                                                  static_cast<const T*>(scratch));
  });
}

cudaError_t load_all_kernels() {
  Loader load;
  load(put_signal_kernel);
  load(wait_signal_kernel);
  load(signal_value_kernel);
  load(wait_signal_value_kernel);
  load(barrier_kernel);
  load(memset32_kernel);
  load(ce_prepare_kernel);
  load(ce_wait_kernel);
  load(ce_finish_kernel);
  for (int dtype : {SYMMEM_FLOAT32, SYMMEM_BFLOAT16, SYMMEM_FLOAT16})
    for (int op : {SYMMEM_SUM, SYMMEM_AVG, SYMMEM_MAX, SYMMEM_MIN})
      with_cuda_dtype(dtype, [&](auto t) {
        using T = typename decltype(t)::type;
        with_op(op, [&](auto r) {
          load_reductions<T, 16 / sizeof(T), decltype(r)::value>(load);
          load_reductions<T, 1, decltype(r)::value>(load);
        });
      });
  load_gathers<float, 4>(load);
  load_gathers<float, 1>(load);
  load_gathers<__half, 8>(load);
  load_gathers<__half, 1>(load);
  load(broadcast_kernel<float, true>);
  load(broadcast_kernel<float, false>);
  load(broadcast_kernel<__half, true>);
  load(broadcast_kernel<__half, false>);
  load(all_to_all_kernel<float>);
  load(all_to_all_kernel<__half>);
  load(all_to_all_v_kernel<float, true>);
  load(all_to_all_v_kernel<float, false>);
  load(all_to_all_v_kernel<__half, true>);
  load(all_to_all_v_kernel<__half, false>);
  load(a2av_copy_back_kernel<float>);
  load(a2av_copy_back_kernel<__half>);
  return load.first;
}

}  // namespace symmem::cuda
