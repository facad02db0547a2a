/*
 * symmem.h: the only C ABI of libsymmem, the native core of symmem.
 *
 * Conventions
 *  - Every function that can fail returns a symmem_status. On failure a message that names the
 *    thing that went wrong (rank, size, channel, path) is kept per thread: symmem_last_error().
 *  - Handles are opaque. Every *_open / *_alloc has a matching *_close / *_free that releases all
 *    memory, mappings and file descriptors it owns; passing NULL to a close/free is a no-op.
 *  - Timeouts are in milliseconds and must be > 0: no call here waits forever.
 *  - The core never talks to the rendezvous store. Java moves exported handles between ranks and
 *    hands the peers' handles back to import.
 */
#ifndef SYMMEM_H
#define SYMMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SYMMEM_ABI_VERSION 1
/* Signal pad geometry: one 32-bit slot per (channel, peer rank). */
#define SYMMEM_MAX_WORLD 64
#define SYMMEM_SIGNAL_CHANNELS 32

typedef enum symmem_status {
  SYMMEM_OK = 0,
  SYMMEM_ERR_INVALID_ARGUMENT = 1, /* a bad argument: the message names it */
  SYMMEM_ERR_TIMEOUT = 2,          /* a deadline passed: the message names the peer(s) */
  SYMMEM_ERR_SYSTEM = 3,           /* an OS call failed: the message has the call and errno text */
  SYMMEM_ERR_NO_DEVICE = 4,        /* the backend has no device (e.g. "no CUDA device") */
  SYMMEM_ERR_UNSUPPORTED = 5,      /* the backend or build does not support this */
  SYMMEM_ERR_MISMATCH = 6,         /* peers disagree (sizes, world, backend) */
  SYMMEM_ERR_STATE = 7,            /* called in the wrong state (e.g. before import) */
  SYMMEM_ERR_ABORTED = 8           /* a wait was cut short by symmem_abort: the message has the reason */
} symmem_status;

/* Element types. bf16/fp16 are reduced with fp32 accumulation (cuda backend). */
typedef enum symmem_dtype {
  SYMMEM_FLOAT32 = 0,
  SYMMEM_BFLOAT16 = 1,
  SYMMEM_FLOAT16 = 2
} symmem_dtype;
/* Reductions. AVG = SUM / world. */
typedef enum symmem_reduce_op {
  SYMMEM_SUM = 0,
  SYMMEM_AVG = 1,
  SYMMEM_MAX = 2,
  SYMMEM_MIN = 3
} symmem_reduce_op;
/* All-reduce algorithm. AUTO picks by size, world and in/out of place from measured crossovers. */
typedef enum symmem_algo {
  SYMMEM_ALGO_AUTO = 0,
  SYMMEM_ALGO_ONE_SHOT = 1, /* every rank reads every peer's whole input */
  SYMMEM_ALGO_TWO_SHOT = 2, /* reduce-scatter of one slice per rank, then all-gather */
  /* Two-shot whose data the GPUs' copy engines move over the link and the SMs only add, in
   * chunks through the buffer's copy-engine scratch: cuda and nccl backends, world 2, in place,
   * on a buffer allocated with that scratch (SYMMEM_CUDA_CE_MIN_BYTES, SYMMEM_CUDA_CE_SLOT_BYTES);
   * anything else is refused with the reason. AUTO picks it where it is allowed, from
   * SYMMEM_CUDA_CE_MIN_BYTES up. */
  SYMMEM_ALGO_TWO_SHOT_CE = 3
} symmem_algo;

/* ---- library ---------------------------------------------------------------------------- */
/* Message of the last failed call on this thread ("" if none). Valid until the next call. */
const char* symmem_last_error(void);
/* Semantic version of the library, e.g. "0.1.0". */
const char* symmem_version(void);
int symmem_abi_version(void);
/* Closes a file descriptor received from a channel (Java has no call for a raw fd). */
symmem_status symmem_close_fd(int fd);
/* 1 if this build contains the CUDA backend (nvcc was found at build time), else 0. */
int symmem_built_with_cuda(void);

/* ---- native tunables: the environment variables the library reads itself ---------------------
 * Index 0 .. symmem_tunable_count() - 1. The strings are static; NULL for an index out of range.
 * A backend checks its own tunables when it is opened (a bad value fails symmem_backend_open with
 * the same one-line message symmem_tunable_check gives). */
int symmem_tunable_count(void);
const char* symmem_tunable_name(int index);
/* "host" or "cuda" (the nccl backend runs the cuda kernels and reads the cuda tunables). */
const char* symmem_tunable_backend(int index);
/* What a value may be, in words, with the default. */
const char* symmem_tunable_allowed(int index);
/* SYMMEM_OK when the variable is unset, empty or valid; else SYMMEM_ERR_INVALID_ARGUMENT naming
 * the variable, its value and what is allowed. */
symmem_status symmem_tunable_check(int index);
/* The value the library uses for the tunable, read from this process's environment as the library
 * reads it: the variable's value, or the default when unset or empty (*is_set 0; UINT64_MAX for a
 * default the backend computes). SYMMEM_ERR_INVALID_ARGUMENT as symmem_tunable_check when the
 * value is not valid. For agreeing on a setting that every rank must share before a collective
 * allocation (SYMMEM_CUDA_PUSH_SCRATCH_BYTES sizes an nvshmem buffer's nvshmem_malloc). */
symmem_status symmem_tunable_value(int index, uint64_t* value, int* is_set);

/* ---- abort: fail fast when a peer is known to be dead --------------------------------------
 * symmem_abort makes every native wait of this process, running or future, return
 * SYMMEM_ERR_ABORTED with "<what was waiting>: aborted: <reason>" instead of waiting for its
 * deadline: host barriers, signals and collectives (within about a millisecond), fd channel
 * receives and sends (within 20 ms), and device kernels of the cuda backend (they poll a pinned
 * host word at most every ~20 us of GPU time while they wait; a cuda buffer then behaves as after a
 * device timeout: free it). A wait called while aborted is refused before it touches a signal pad
 * or launches a kernel ("<call>, not started: aborted: <reason>"), so no wait succeeds by chance
 * after an abort. Safe from any thread, concurrently with waits. Idempotent: the first
 * reason is kept. A NULL or empty reason is SYMMEM_ERR_INVALID_ARGUMENT. */
symmem_status symmem_abort(const char* reason);
/* Clears the abort for the waits that start from now on (tests; a process that goes on to join a new
 * world). A wait that was running when symmem_abort came still ends with SYMMEM_ERR_ABORTED, also when
 * this reset came before it looked (host waits and the fd channel). */
void symmem_abort_reset(void);
/* 1 once symmem_abort has been called (and not reset), else 0. */
int symmem_aborted(void);

/* ---- IPC channel: file descriptors between local processes (SCM_RIGHTS) ------------------- */
/* A channel is a Unix datagram socket bound in the Linux abstract namespace under `name`
 * (no file on disk, nothing to clean up). Each rank opens its own; peers address each other by
 * name. Every message carries the sender's rank and a tag, so arrival order never matters. */
typedef struct symmem_channel symmem_channel;

symmem_status symmem_channel_open(const char* name, symmem_channel** out);
symmem_status symmem_channel_close(symmem_channel* channel);
/* Sends a duplicate of `fd` (the caller keeps its own) with (rank, tag) to the peer channel. */
symmem_status symmem_channel_send_fd(symmem_channel* channel, const char* peer_name, int rank,
                                     int tag, int fd, int timeout_ms);
/* Receives one fd sent with `tag`; stores the sender's rank. The caller owns the fd. Messages with
 * other tags that arrive meanwhile are kept for later receives. */
symmem_status symmem_channel_recv_fd(symmem_channel* channel, int tag, int* out_rank, int* out_fd,
                                     int timeout_ms);
/* Every rank contributes `fd`; out_fds[r] receives rank r's (out_fds[rank] is a dup of fd).
 * peer_names[r] is rank r's channel name. On timeout the message lists the ranks not heard from. */
symmem_status symmem_channel_all_gather_fds(symmem_channel* channel, const char* const* peer_names,
                                            int rank, int world, int tag, int fd, int* out_fds,
                                            int timeout_ms);
/* Rank `root` sends its fd to all; the others receive it into *out_fd (root gets a dup). */
symmem_status symmem_channel_broadcast_fds(symmem_channel* channel, const char* const* peer_names,
                                           int rank, int world, int root, int tag, int fd,
                                           int* out_fd, int timeout_ms);

/* ---- backends ------------------------------------------------------------------------------ */
typedef struct symmem_backend symmem_backend;

typedef struct symmem_backend_info {
  char name[16];         /* "host", "cuda", "nvshmem" or "nccl" */
  char device_name[128]; /* "cpu" or the GPU's name */
  int device;            /* device ordinal (-1 for host) */
  int device_count;      /* devices visible to this process */
} symmem_backend_info;

/* name: "host", "cuda", "nvshmem" or "nccl". device: the ordinal for the GPU backends, ignored for host.
 * "cuda" on a machine without a driver or GPU fails with SYMMEM_ERR_NO_DEVICE ("no CUDA device");
 * in a build without nvcc it fails with SYMMEM_ERR_UNSUPPORTED. */
symmem_status symmem_backend_open(const char* name, int device, symmem_backend** out);
symmem_status symmem_backend_close(symmem_backend* backend);
symmem_status symmem_backend_get_info(symmem_backend* backend, symmem_backend_info* out);
/* Number of CUDA devices this process can use; 0 (and SYMMEM_OK) when there is no driver or GPU. */
symmem_status symmem_cuda_device_count(int* out);

/* ---- symmetric buffers ------------------------------------------------------------------- */
/* Lifecycle: alloc (local memory + signal pad) -> export_fd -> [Java moves fds] -> import (maps
 * every peer) -> use -> free. */
typedef struct symmem_buffer symmem_buffer;

symmem_status symmem_buffer_alloc(symmem_backend* backend, uint64_t size_bytes,
                                  symmem_buffer** out);
/* The fd that shares this rank's allocation (owned by the buffer: do not close it). */
symmem_status symmem_buffer_export_fd(symmem_buffer* buffer, int* out_fd);
/* Maps the peers' allocations. fds[r] is rank r's exported fd (fds[rank] is ignored); the buffer
 * takes no ownership of them. Fails with SYMMEM_ERR_MISMATCH naming the rank whose allocation has
 * a different size. */
symmem_status symmem_buffer_import(symmem_buffer* buffer, int rank, int world, const int* fds);
/* Frees the buffer (or view). A buffer that still has live views is NOT freed: SYMMEM_ERR_STATE,
 * naming how many (free the views first). On device buffers it first waits for every launch symmem
 * made on the buffer (any stream), not for the rest of the device; work you enqueued yourself on
 * its memory must have finished (synchronize your stream first). */
symmem_status symmem_buffer_free(symmem_buffer* buffer);

/* The own rank is only known from import on, so `r` may also be SYMMEM_RANK_SELF: this process's
 * own allocation, before and after import (symmem_buffer_rank returns it before import). */
#define SYMMEM_RANK_SELF (-1)

uint64_t symmem_buffer_size(symmem_buffer* buffer); /* the size_bytes given to alloc */
int symmem_buffer_rank(symmem_buffer* buffer);      /* SYMMEM_RANK_SELF (-1) before import */
int symmem_buffer_world(symmem_buffer* buffer);     /* 0 before import */
/* Rank r's buffer as mapped in this process (after import: 0..world-1; before import only
 * SYMMEM_RANK_SELF). NULL (with symmem_last_error set) otherwise. */
void* symmem_buffer_ptr(symmem_buffer* buffer, int r);
/* Rank r's signal pad: SYMMEM_SIGNAL_CHANNELS * SYMMEM_MAX_WORLD uint32 slots. */
void* symmem_buffer_signal_pad(symmem_buffer* buffer, int r);

/* ---- synchronisation (release/acquire ordering; every wait has a deadline) ---------------- */
/* Sets slot [channel][own rank] of peer's pad once it is 0 (waits while the peer has not consumed
 * the previous signal). */
symmem_status symmem_put_signal(symmem_buffer* buffer, int peer, int channel, int timeout_ms);
/* Waits until slot [channel][peer] of the own pad is set, then clears it. */
symmem_status symmem_wait_signal(symmem_buffer* buffer, int peer, int channel, int timeout_ms);
/* put_signal to every peer, then wait_signal from every peer. On timeout the message names the
 * ranks that did not arrive. (cuda buffers: an epoch barrier on a per-channel flag array separate
 * from the put/wait slots: the same guarantee without a round trip; see docs/cuda-backend.md.) */
symmem_status symmem_barrier(symmem_buffer* buffer, int channel, int timeout_ms);

/* ---- streams, device-side waits and collectives of every dtype ---------------------------------
 *
 * Streams: `stream` is a cudaStream_t (NULL = the legacy default stream). On a cuda buffer the
 * *_on_stream calls and the collectives below ENQUEUE work and return; a device-side wait that
 * passes its deadline (measured on the GPU) does not hang: it records {what, channel, peer} in the
 * buffer's error record and the kernel exits. symmem_stream_synchronize (or symmem_cuda_check
 * after any other synchronisation) turns that record into SYMMEM_ERR_TIMEOUT with a message such as
 * "barrier(channel 0): rank 3 did not arrive within 500 ms". After a device timeout the buffer's
 * signal pads are in an unknown state: free it. The host backend ignores `stream` and runs each
 * call synchronously.
 * The host-synchronous calls above (symmem_barrier, symmem_put_signal, symmem_wait_signal) work on
 * cuda buffers too: they launch on an internal stream, synchronise and report.
 *
 * Concurrency. Different buffers are independent: their signals and collectives may run at once
 * from any threads and streams (each has its own signal pad, epochs and scratch; give each its own
 * stream so that neither queues behind the other). The calls on ONE buffer (and on the views of
 * one segment) are one sequence that every rank issues in the same order: a thread that calls one
 * while another thread is inside one on the same buffer gets SYMMEM_ERR_STATE at once. On device
 * buffers each launch waits for the previous launch on the same buffer when it comes on another
 * stream (a CUDA event; nothing is added on the same stream), so work of one buffer on two streams
 * never runs at the same time and a one-shot on one stream cannot deadlock with a two-shot on
 * another.
 * The NULL stream: a collective on the legacy default stream waits for all earlier work of every
 * blocking stream of the device, and those streams' later work waits for it. Two threads (or two
 * groups) that both use NULL therefore run their buffers' collectives one after the other, in the
 * order each rank enqueued them, and two ranks that enqueue in different orders wait for each other
 * until the deadline. Give every buffer (or every thread) a stream of its own
 * (symmem_stream_create) when more than one thread issues collectives.
 */

/* Bytes per element of dtype; 0 for an unknown dtype. */
size_t symmem_dtype_size(symmem_dtype dtype);

/* put_signal / wait_signal / barrier enqueued on a stream (same slots and semantics as the
 * host-synchronous calls: put waits for the slot to be 0 and sets 1 with release; wait waits for 1
 * and clears it with acquire; barrier = put to every peer, then wait for every peer). */
symmem_status symmem_put_signal_on_stream(symmem_buffer* buffer, int peer, int channel,
                                          void* stream, int timeout_ms);
symmem_status symmem_wait_signal_on_stream(symmem_buffer* buffer, int peer, int channel,
                                           void* stream, int timeout_ms);
symmem_status symmem_barrier_on_stream(symmem_buffer* buffer, int channel, void* stream,
                                       int timeout_ms);

/* ---- value signals: counters a peer sets or adds to, waited for by value ---------------------
 *
 * Apart from the 0/1 slots above, each rank's pad holds a uint64 value per [channel][sending rank]
 * for SYMMEM_VALUE_CHANNELS channels, 0 at alloc. Only the sending rank writes a value and only the
 * pad's rank waits on it, and a wait leaves the value as it is: a producer counts what it has
 * handed over (chunks put, a pipeline's step) and the consumer waits for a count, any number of
 * times, without a round trip (NVSHMEM's signal op and signal wait-until).
 * symmem_signal_value: on `peer`'s pad, sets (SYMMEM_SIGNAL_SET) or adds `value` to
 *   (SYMMEM_SIGNAL_ADD) the value [channel][own rank], with release: what this rank wrote before
 *   (a put) is visible to the peer once its wait has seen the value. Never waits.
 * symmem_wait_signal_value: waits until the own value [channel][peer] is == value (SYMMEM_CMP_EQ)
 *   or >= value (SYMMEM_CMP_GE, unsigned), with acquire. On timeout the message names the peer,
 *   the channel, the value waited for and the value last seen; an abort ends it at once.
 * The *_on_stream forms enqueue the same after the stream's earlier work (a put on the stream) on
 * device buffers, where a device-side timeout is reported as for wait_signal; the host backend
 * runs them at once. The host-synchronous forms run on the buffer's internal stream and
 * synchronise. Blocks of one pool segment share its values, as they share its signal pad. */
#define SYMMEM_VALUE_CHANNELS 16
typedef enum symmem_signal_op { SYMMEM_SIGNAL_SET = 0, SYMMEM_SIGNAL_ADD = 1 } symmem_signal_op;
typedef enum symmem_signal_cmp { SYMMEM_CMP_EQ = 0, SYMMEM_CMP_GE = 1 } symmem_signal_cmp;
symmem_status symmem_signal_value(symmem_buffer* buffer, int peer, int channel, uint64_t value,
                                  symmem_signal_op op);
symmem_status symmem_wait_signal_value(symmem_buffer* buffer, int peer, int channel,
                                       symmem_signal_cmp cmp, uint64_t value, int timeout_ms);
symmem_status symmem_signal_value_on_stream(symmem_buffer* buffer, int peer, int channel,
                                            uint64_t value, symmem_signal_op op, void* stream);
symmem_status symmem_wait_signal_value_on_stream(symmem_buffer* buffer, int peer, int channel,
                                                 symmem_signal_cmp cmp, uint64_t value, void* stream,
                                                 int timeout_ms);

/* Fills `count` uint32 words at byte offset `offset_bytes` (a multiple of 4) of rank r's data
 * (r = SYMMEM_RANK_SELF or, after import, any rank) with `value`. */
symmem_status symmem_memset32(symmem_buffer* buffer, int r, uint64_t offset_bytes, uint32_t value,
                              uint64_t count, void* stream);
/* One 32-bit write of `value` at byte offset `offset_bytes` (a multiple of 4) of rank r's data,
 * ordered on the stream (cuStreamWriteValue32 on cuda). */
symmem_status symmem_stream_write_value32(symmem_buffer* buffer, int r, uint64_t offset_bytes,
                                          uint32_t value, void* stream);

/* Waits for `stream`, then reports any device-side timeout recorded for this buffer (and clears
 * the record). On the host backend: SYMMEM_OK. */
symmem_status symmem_stream_synchronize(symmem_buffer* buffer, void* stream);
/* Reports (and clears) a device-side error recorded for this buffer by work that has completed,
 * without waiting. SYMMEM_OK if none. */
symmem_status symmem_cuda_check(symmem_buffer* buffer);

/* All-reduce of `count` elements at offset 0 of every rank's symmetric buffer.
 * out: NULL = in place (the result replaces the input in the symmetric buffer), else local memory
 * of count elements that must not overlap the symmetric buffer (device memory for cuda).
 * ONE_SHOT in place: cuda only up to symmem_one_shot_in_place_max_bytes(); TWO_SHOT out of place
 * uses the symmetric buffer as scratch (its contents are unspecified afterwards).
 * Results are identical on every rank (peers are reduced in rank order). Collective. */
symmem_status symmem_all_reduce(symmem_buffer* buffer, symmem_algo algo, symmem_dtype dtype,
                                symmem_reduce_op op, uint64_t count, void* out, void* stream,
                                int timeout_ms);
/* All-gather: rank r contributes `count` elements at offset 0 of its symmetric buffer; `out`
 * (world * count elements, local memory) receives rank p's at [p*count, (p+1)*count).
 * out NULL = in place: rank r's contribution must already be at [r*count, (r+1)*count) of its
 * own symmetric buffer, and every rank's buffer ends up holding all of them. */
symmem_status symmem_all_gather(symmem_buffer* buffer, symmem_dtype dtype, uint64_t count,
                                void* out, void* stream, int timeout_ms);
/* Reduce-scatter: every rank's symmetric buffer holds world * count elements; rank r gets the
 * reduction of block r ([r*count, (r+1)*count)) over all ranks, in `out` (count elements, local)
 * or, with out NULL, in place at [r*count, (r+1)*count) of its own symmetric buffer. */
symmem_status symmem_reduce_scatter(symmem_buffer* buffer, symmem_dtype dtype,
                                    symmem_reduce_op op, uint64_t count, void* out, void* stream,
                                    int timeout_ms);
/* Broadcast: the root's first `count` elements reach every rank, into `out` (count elements, local
 * memory; the root's own out too) or, with out NULL, in place over each rank's first count
 * elements. The root's buffer is read, never written. root is 0..world-1, the same on every rank. */
symmem_status symmem_broadcast(symmem_buffer* buffer, symmem_dtype dtype, uint64_t count, int root,
                               void* out, void* stream, int timeout_ms);
/* All-to-all of equal blocks: every rank's buffer holds world blocks of `count` elements, block p
 * for rank p. `out` (world * count elements, local memory) receives rank q's block for this rank
 * at [q*count, (q+1)*count); with out NULL the buffer's blocks are replaced the same way. */
symmem_status symmem_all_to_all(symmem_buffer* buffer, symmem_dtype dtype, uint64_t count, void* out,
                                void* stream, int timeout_ms);
/* All-to-all with variable splits. Each rank's buffer holds its input elements from byte 0 and, at
 * byte `splits_offset` (a multiple of 8, after the input), world + 1 int64 slots: the caller writes
 * splits[p], how many elements go to rank p, taken from the input in rank order (rank p's part
 * starts at splits[0] + ... + splits[p-1]); the call writes the last slot itself (this rank's
 * output capacity, for the peers' checks). The splits are read when the call runs, so an earlier
 * kernel on the stream may write them. Rank p receives the parts for it packed in rank order:
 * into `out` (local memory of `out_capacity` elements) or, with out NULL, in place from byte 0 of
 * its buffer (capacity: the splits_offset bytes before the splits). out_splits (2 * world int64, in
 * local memory or in this rank's buffer after the slots) receives how many elements came from each
 * rank, then where each rank's part starts in the output. Splits that do not fit (a negative split, more input than the room before
 * the splits, more output than a rank's capacity) fail with SYMMEM_ERR_INVALID_ARGUMENT on every
 * rank, naming the rank, the peer and the sizes, and write nothing to out. */
symmem_status symmem_all_to_all_v(symmem_buffer* buffer, symmem_dtype dtype, uint64_t splits_offset,
                                  void* out, uint64_t out_capacity, int64_t* out_splits, void* stream,
                                  int timeout_ms);
/* The algorithm AUTO would run for this all-reduce on this buffer (a concrete ONE_SHOT/TWO_SHOT). */
symmem_status symmem_all_reduce_auto_algo(symmem_buffer* buffer, symmem_dtype dtype,
                                          uint64_t count, int in_place, symmem_algo* out_algo);
/* Largest input (bytes) that ONE_SHOT can reduce in place on this buffer (0 = never). */
uint64_t symmem_one_shot_in_place_max_bytes(symmem_buffer* buffer);

/* Rank r's GPU UUID (16 bytes) as exchanged at import (r = SYMMEM_RANK_SELF before import).
 * SYMMEM_ERR_UNSUPPORTED on the host backend. Two ranks on one GPU are refused at import unless
 * SYMMEM_ALLOW_OVERLAPPING_DEVICES=1. */
symmem_status symmem_buffer_device_uuid(symmem_buffer* buffer, int r, uint8_t out_uuid[16]);

/* ---- topology of the local GPUs ------------------------------------------------------------ */
#define SYMMEM_TOPOLOGY_MAX_DEVICES 16
typedef enum symmem_multicast_state {
  SYMMEM_MULTICAST_UNSUPPORTED = 0, /* the device or driver cannot */
  SYMMEM_MULTICAST_SUPPORTED = 1,   /* CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED; never used here */
  SYMMEM_MULTICAST_DISABLED = 2     /* SYMMEM_DISABLE_MULTICAST / TORCH_SYMM_MEM_DISABLE_MULTICAST */
} symmem_multicast_state;
typedef struct symmem_topology {
  int device_count; /* devices described (at most SYMMEM_TOPOLOGY_MAX_DEVICES); 0 without CUDA */
  /* [i][j], i != j: cudaDeviceCanAccessPeer / cudaDevP2PAttrPerformanceRank /
   * cudaDevP2PAttrNativeAtomicSupported (the diagonal is 0). */
  int can_access_peer[SYMMEM_TOPOLOGY_MAX_DEVICES][SYMMEM_TOPOLOGY_MAX_DEVICES];
  int performance_rank[SYMMEM_TOPOLOGY_MAX_DEVICES][SYMMEM_TOPOLOGY_MAX_DEVICES];
  int native_atomics[SYMMEM_TOPOLOGY_MAX_DEVICES][SYMMEM_TOPOLOGY_MAX_DEVICES];
  int multicast[SYMMEM_TOPOLOGY_MAX_DEVICES]; /* symmem_multicast_state per device */
  int vmm_supported[SYMMEM_TOPOLOGY_MAX_DEVICES]; /* CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
  uint8_t uuid[SYMMEM_TOPOLOGY_MAX_DEVICES][16];
  char name[SYMMEM_TOPOLOGY_MAX_DEVICES][64];
} symmem_topology;
/* Fills *out (zeroed first). No CUDA (driver, device or build): device_count 0 and SYMMEM_OK. */
symmem_status symmem_cuda_topology(symmem_topology* out);


/* ---- data movement and local memory ------------------------------------------------------------
 * Host <-> symmetric buffer copies, device-local scratch for out-of-place results, and streams.
 * Copies are synchronous. A buffer copy on a device buffer first waits for every signal, barrier
 * and collective symmem launched on that buffer (whichever stream carried it), so their results are
 * visible, and returns once the data has arrived; it does NOT wait for other buffers' work, so one
 * thread's copy never waits for another thread's collective (which may itself wait for a peer
 * whose thread waits for this one). Work you enqueued yourself on the buffer's memory must be
 * synchronized by you first. symmem_buffer_copy_out also reports a device-side timeout recorded for
 * the buffer (like symmem_cuda_check). Local copies (symmem_local_copy_*) know no writer, so they
 * wait for the whole device, other threads' collectives included: a program whose threads run
 * collectives at once should use in-place buffers and buffer copies (the façade does). On the host
 * backend copies are memcpy. */

/* Copies `bytes` from host memory `src` into rank r's data at byte `offset` (r = SYMMEM_RANK_SELF,
 * or after import any rank). offset + bytes must not exceed symmem_buffer_size(). */
symmem_status symmem_buffer_copy_in(symmem_buffer* buffer, int r, uint64_t offset,
                                    const void* src, uint64_t bytes);
/* Copies `bytes` from rank r's data at byte `offset` into host memory `dst`. */
symmem_status symmem_buffer_copy_out(symmem_buffer* buffer, int r, uint64_t offset, void* dst,
                                     uint64_t bytes);

/* One-sided copies on a stream: `bytes` from `src` into rank r's data at byte `offset` (put), or from
 * there into `dst` (get), with no call on rank r. src/dst: memory of the backend's device (cuda: device
 * memory, local or symmetric; host: host memory). Ordered on `stream` after the buffer's earlier work,
 * like a collective; the host backend copies at once. A put followed by symmem_put_signal_on_stream on
 * the same stream is a put with signal: the peer that has waited for the signal
 * (symmem_wait_signal_on_stream) reads the data. */
symmem_status symmem_put_on_stream(symmem_buffer* buffer, int r, uint64_t offset, const void* src,
                                   uint64_t bytes, void* stream);
symmem_status symmem_get_on_stream(symmem_buffer* buffer, int r, uint64_t offset, void* dst,
                                   uint64_t bytes, void* stream);

/* Local (not symmetric) memory of the backend's device, zero-filled: host = 64-byte-aligned
 * malloc, cuda = cudaMalloc on the backend's device. Usable as `out` of the collectives.
 * Allocations still held when the backend is closed are freed by symmem_backend_close. */
symmem_status symmem_local_alloc(symmem_backend* backend, uint64_t bytes, void** out);
/* NULL is a no-op; a pointer not from symmem_local_alloc on this backend is INVALID_ARGUMENT. */
symmem_status symmem_local_free(symmem_backend* backend, void* local);
/* Copies between host memory and [offset, offset + bytes) of a local allocation. */
symmem_status symmem_local_copy_in(symmem_backend* backend, void* local, uint64_t offset,
                                   const void* src, uint64_t bytes);
symmem_status symmem_local_copy_out(symmem_backend* backend, const void* local, uint64_t offset,
                                    void* dst, uint64_t bytes);

/* A stream of the backend's device for the *_on_stream calls and the collectives: cuda = a
 * cudaStreamCreateWithFlags(cudaStreamNonBlocking) stream; host = NULL (the host backend ignores
 * streams). symmem_stream_destroy waits for the stream first; NULL is a no-op. */
symmem_status symmem_stream_create(symmem_backend* backend, void** out_stream);
symmem_status symmem_stream_destroy(symmem_backend* backend, void* stream);


/* ---- CUDA graphs: capture a sequence of collectives once, replay it many times ------------------
 * symmem_graph_capture_begin(backend, stream) starts a CUDA stream capture on `stream` (a
 * cudaStream_t of the backend's device, not NULL: the legacy stream cannot be captured; mode
 * cudaStreamCaptureModeThreadLocal, so other threads keep issuing their own work). Every symmem
 * call the capturing thread then issues on `stream` (collectives, barrier/put/wait on stream,
 * memset32) is recorded, not run, together with any other work the caller puts on the stream
 * (kernels, cudaMemcpyAsync device to device). symmem_graph_capture_end(backend, stream, &graph)
 * ends the capture and instantiates it. symmem_graph_replay(graph, stream) launches it: each replay
 * runs every recorded call again with the arguments of capture (pointers, counts, timeouts) on
 * whatever data the buffers and the out memory hold at that moment, so new input is written before
 * each replay (by work in the graph, or by copies between replays). A copy between replays must be
 * ordered before the replay by the caller: on the replay's stream (cudaMemcpyAsync(..., stream)), or
 * complete when it returns (symmem_local_copy_in, symmem_buffer_copy_in, or a synchronisation). A
 * plain cudaMemcpy from pageable host memory is not: it may return before its DMA has landed, on
 * the legacy stream, which symmem's non-blocking streams do not wait for (the replay then reads part
 * of the previous input).
 *
 * How replays stay correct: the barrier epochs and the one-shot scratch slot of a cuda buffer are
 * kept in device memory and advanced by the kernels themselves, so a replayed kernel uses the
 * buffer's next epoch exactly as an eagerly issued one does. Replays and eager calls may therefore
 * be mixed freely on a buffer, as long as every rank issues the same sequence (a replay counts as
 * the calls it holds). symmem_graph_replay orders the graph after the previous launch on each of
 * its buffers, wherever that went (as eager calls are ordered, docs/cuda-backend.md), and the
 * buffers' next work after the replay. Every device-side wait keeps its deadline inside a graph
 * (measured on the GPU from the wait's start at each replay): a peer that does not replay ends the
 * wait, the error is recorded in the buffer's record, and symmem_graph_synchronize (or
 * symmem_stream_synchronize / symmem_cuda_check of the buffer) reports SYMMEM_ERR_TIMEOUT naming
 * the call and the peer. After such a timeout the buffer's signal state is undefined: free it.
 *
 * Refused while `stream` (or the stream of the buffer's previous launch) is capturing, each with
 * SYMMEM_ERR_STATE and a message that says what to do: symmem_stream_synchronize of the capturing
 * stream (a host wait cannot be recorded: replay, then synchronize); symmem_buffer_copy_in/out of a
 * buffer whose previous launch went to the capturing stream (a copy waits for the buffer's work);
 * an eager call on another stream for a buffer whose previous launch went to a stream that is
 * capturing now (its earlier work cannot be waited for until the capture ends); symmem_stream_destroy
 * of a capturing stream; and, from the capturing thread, symmem_local_alloc and
 * symmem_local_copy_in/out (they wait for the whole device; copy inside a graph with
 * cudaMemcpyAsync on the capturing stream). Host-synchronous calls (symmem_barrier,
 * symmem_put_signal, symmem_wait_signal) run on the buffer's internal stream: they are not captured
 * and run at once. Within one capture, a buffer's calls stay on one stream. The host backend has no
 * graphs: SYMMEM_ERR_UNSUPPORTED.
 *
 * A capture started with the CUDA runtime directly (cudaStreamBeginCapture, e.g. by
 * torch.cuda.graph) records symmem's kernels the same way and replays correctly; symmem then does
 * not know the graph: the caller orders each raw replay (cudaGraphLaunch) after the buffers'
 * earlier work (same stream, or a synchronisation), synchronises before freeing a buffer the graph
 * uses, and checks the buffers' records with symmem_stream_synchronize / symmem_cuda_check.
 */
typedef struct symmem_graph symmem_graph;
/* Starts capturing `stream` (SYMMEM_ERR_STATE if it is capturing already). */
symmem_status symmem_graph_capture_begin(symmem_backend* backend, void* stream);
/* Ends the capture of `stream` begun by symmem_graph_capture_begin and instantiates the graph. A
 * capture CUDA invalidated (an operation that cannot be captured was issued on the stream) fails
 * with SYMMEM_ERR_STATE naming CUDA's error; the capture is over either way. While the graph
 * exists, symmem_buffer_free of a buffer it uses is refused (SYMMEM_ERR_STATE). */
symmem_status symmem_graph_capture_end(symmem_backend* backend, void* stream, symmem_graph** out);
/* Enqueues one replay on `stream` (any stream of the graph's device, not NULL) and returns.
 * Refused after symmem_abort ("not started: aborted: ..."), and while another thread issues a call
 * on one of the graph's buffers (SYMMEM_ERR_STATE, as for any call on a buffer). */
symmem_status symmem_graph_replay(symmem_graph* graph, void* stream);
/* Waits for `stream`, then reports (and clears) a device-side timeout or abort recorded for any of
 * the graph's buffers, as symmem_stream_synchronize does for one. */
symmem_status symmem_graph_synchronize(symmem_graph* graph, void* stream);
/* How many symmetric buffers (segments) the graph's calls use, and how many nodes it has
 * (kernels, copies, ...); -1 / 0 with the last error for NULL. */
int symmem_graph_buffer_count(symmem_graph* graph);
uint64_t symmem_graph_node_count(symmem_graph* graph);
/* Frees the graph (a replay still running completes). NULL is a no-op. */
symmem_status symmem_graph_free(symmem_graph* graph);

/* ---- NVSHMEM -----------------------------------------------------------------------------------
 * NVSHMEM's host library (libnvshmem_host.so.3) is opened at run time from candidate paths the
 * caller gives, never linked. Only its host API is used: initialisation by unique id
 * (nvshmemx_hostlib_init_attr; the header's nvshmemx_init_attr is inline and needs NVSHMEM's
 * static device library), the symmetric heap (nvshmem_malloc/free), nvshmem_ptr and teams. The
 * device work on "nvshmem" buffers is symmem's own kernels (signals, barriers, collectives with
 * deadlines), as on "cuda" buffers. One NVSHMEM world per process: load, init once, finalize once.
 *
 * Collective calls (every PE of the NVSHMEM world, NVSHMEM's rule): symmem_nvshmem_init,
 * symmem_buffer_alloc and symmem_buffer_free of an nvshmem buffer (same sizes, same order on
 * every PE), symmem_nvshmem_team_split_strided (members and non-members alike),
 * symmem_nvshmem_finalize. None of them has a deadline inside NVSHMEM: callers agree first (the
 * Java side does, through the store). After symmem_abort, freeing an nvshmem buffer releases
 * only this process's bookkeeping (nvshmem_free would wait for the dead PE), and finalize is
 * refused. */
#define SYMMEM_NVSHMEM_UNIQUEID_BYTES 128

/* Tries dlopen on each candidate in order (a path, or a bare soname for the loader's search path);
 * the first that opens and exports every entry point symmem uses wins. Its path goes to
 * loaded_path (cap bytes; may be NULL). None: SYMMEM_ERR_UNSUPPORTED, and the message lists every
 * candidate with why it failed. Already loaded: SYMMEM_OK with the earlier path. When
 * NVSHMEM_BOOTSTRAP_UID_PLUGIN is unset and the UID plugin lies beside the library, it is set to
 * that file (NVSHMEM opens the plugin by name, which a pip wheel's directory would not resolve). */
symmem_status symmem_nvshmem_load(const char* const* candidates, int count, char* loaded_path,
                                  size_t cap);
/* The loaded NVSHMEM's version (nvshmemx_vendor_get_version_info). */
symmem_status symmem_nvshmem_version(int* major, int* minor, int* patch);
/* Sets an NVSHMEM_* variable in this process's environment. NVSHMEM reads its environment once,
 * at its first call: afterwards this is SYMMEM_ERR_STATE (the value would be ignored). */
symmem_status symmem_nvshmem_setenv(const char* name, const char* value);
/* The process environment's value of `name` as NVSHMEM will read it (*is_set 0: unset). */
symmem_status symmem_nvshmem_getenv(const char* name, char* out, size_t cap, int* is_set);
/* Rank 0's unique id for the UID bootstrap (NVSHMEM binds a socket the other PEs join). */
symmem_status symmem_nvshmem_get_uniqueid(uint8_t out[SYMMEM_NVSHMEM_UNIQUEID_BYTES]);
/* Joins the NVSHMEM world of `world` PEs as PE `rank` on CUDA `device`, with rank 0's unique id.
 * Returns once every PE has joined: NVSHMEM's bootstrap has no deadline of its own. */
symmem_status symmem_nvshmem_init(int device, int rank, int world,
                                  const uint8_t uid[SYMMEM_NVSHMEM_UNIQUEID_BYTES]);
/* 1 between a successful init and finalize, else 0. */
int symmem_nvshmem_initialized(void);
/* This process's PE and the number of PEs (after init). */
symmem_status symmem_nvshmem_pe(int* my_pe, int* n_pes);
/* Bytes of the NVSHMEM heap held by live nvshmem buffers of this process (pad regions included),
 * and how many. */
symmem_status symmem_nvshmem_heap_usage(uint64_t* bytes, int* buffers);
/* Leaves the NVSHMEM world (collective). Refused while nvshmem buffers are live, or aborted. */
symmem_status symmem_nvshmem_finalize(void);
/* nvshmem_team_split_strided of NVSHMEM_TEAM_WORLD: PEs start, start+stride, ... (size of them).
 * Collective over every PE; *out_team is -1 (NVSHMEM_TEAM_INVALID) on PEs outside the team. */
symmem_status symmem_nvshmem_team_split_strided(int start, int stride, int size, int* out_team);
/* The world PE of `team`'s member number team_pe. */
symmem_status symmem_nvshmem_team_translate_pe(int team, int team_pe, int* out_world_pe);
/* Destroys a team made by split (collective over its members); -1 is a no-op. */
symmem_status symmem_nvshmem_team_destroy(int team);

/* symmem_backend_open("nvshmem", device) needs symmem_nvshmem_init on that device first. Its
 * buffers come from the symmetric heap (symmem_buffer_alloc is collective, see above) and are
 * bound to a group with: rank/world within the group, pes[r] = the NVSHMEM PE of group rank r.
 * Every peer is reached with nvshmem_ptr (SYMMEM_ERR_UNSUPPORTED naming the rank when NULL);
 * sizes are checked as at symmem_buffer_import. */
symmem_status symmem_buffer_import_pes(symmem_buffer* buffer, int rank, int world, const int* pes);
/* ==== views and stream markers (the memory pool) ================================================
 * A view is the window [offset, offset + size) of an imported buffer (its segment): a handle that
 * every buffer call accepts, as if it were a buffer of `size` bytes whose data starts at `offset`
 * of every rank's segment. Rank r's view memory is rank r's segment mapping plus the offset, so no
 * rendezvous is needed: this is how a pool hands out blocks of one symmetric segment.
 *  - It shares the segment's signal pad, stream, error record and barrier epochs. Signals,
 *    barriers and collectives on views of one segment are therefore ONE sequence: every rank must
 *    issue them in the same order (as on one buffer), and a second thread that calls one while
 *    another is inside one on the same segment is refused (SYMMEM_ERR_STATE), never interleaved.
 *    Device buffers order this work across streams themselves (each launch waits for the
 *    previous launch on the segment, through an event), so two blocks used on two streams never
 *    run their pad work at the same time.
 *  - It borrows the segment: symmem_buffer_free of a segment with live views is refused. Free a
 *    view with symmem_buffer_free. A view cannot be exported, imported, or viewed again.
 *  - offset must be a multiple of SYMMEM_VIEW_ALIGNMENT (the collectives' vector width).
 */
#define SYMMEM_VIEW_ALIGNMENT 64
symmem_status symmem_buffer_view(symmem_buffer* segment, uint64_t offset, uint64_t size,
                                 symmem_buffer** out);
/* Number of live views of `buffer` (-1 with last error for NULL). */
int symmem_buffer_live_views(symmem_buffer* buffer);

/* A stream marker: a point recorded in `stream` (cuda: a CUDA event; host: always passed, its
 * streams are synchronous) that says later whether the stream has run past it. The marker must be
 * freed before its backend is closed. */
typedef struct symmem_stream_marker symmem_stream_marker;
symmem_status symmem_stream_marker_record(symmem_backend* backend, void* stream,
                                          symmem_stream_marker** out);
/* *out_passed = 1 once the stream has passed the marker, else 0. Never waits. */
symmem_status symmem_stream_marker_query(symmem_stream_marker* marker, int* out_passed);
/* Waits until the stream has passed the marker; at the deadline SYMMEM_ERR_TIMEOUT naming the
 * stream. */
symmem_status symmem_stream_marker_wait(symmem_stream_marker* marker, int timeout_ms);
/* NULL is a no-op. */
symmem_status symmem_stream_marker_free(symmem_stream_marker* marker);

/* ==== NCCL: communicators through a libnccl loaded at run time ==================================
 * libsymmem neither links NCCL nor needs nccl.h to build: symmem_nccl_load dlopens a libnccl.so.2
 * chosen by the caller and resolves each entry point with dlsym (docs/nccl.md). In a build without
 * CUDA every call here fails with SYMMEM_ERR_UNSUPPORTED.
 *
 * A communicator is made NON-BLOCKING (ncclConfig_t.blocking = 0) and then, where NCCL has
 * ncclCommSplit (2.18+), split into a BLOCKING one that shares its resources and abort flag: the
 * collectives, groups and windows run on that one, so NCCL enqueues in the calling thread as in its
 * own C loop (a non-blocking NCCL starts a thread per call). NCCL connects every algorithm during
 * the init and the split (symmem_nccl_runtime_connect), under their deadline, so a collective never
 * waits for a peer in the calling thread: it enqueues, and a peer that never comes holds only the
 * device, where symmem_nccl_comm_synchronize's deadline ends it. A call that does wait inside NCCL
 * (a window registration, a finalize: both collective) is ended at its deadline by aborting the
 * non-blocking parent, which raises the shared flag; that lever is a last resort (nccl/nccl_comm.cpp
 * says why). A wait that passes its deadline (init whose peers never join, a collective
 * that does not complete, a finalize that does not end) calls ncclCommAbort and fails with
 * SYMMEM_ERR_TIMEOUT naming the operation, the communicator's label, the rank and the deadline; an
 * asynchronous NCCL error aborts it too (SYMMEM_ERR_SYSTEM with NCCL's texts). symmem_abort aborts
 * every communicator of the process (a waiting call ends with SYMMEM_ERR_ABORTED within a polling
 * turn). An aborted communicator refuses further work (SYMMEM_ERR_STATE); free it with
 * symmem_nccl_comm_destroy. Creating a new communicator afterwards works (after symmem_abort, once
 * symmem_abort_reset has been called).
 * Data types and reduction ops are NCCL's own ncclDataType_t (int8 0 … bf16 9) and ncclRedOp_t
 * (sum 0, prod 1, max 2, min 3, avg 4) values. Streams are cudaStream_t (NULL = legacy default).
 */
#define SYMMEM_NCCL_UNIQUE_ID_BYTES 128
typedef struct symmem_nccl_comm symmem_nccl_comm;

/* Tries paths[0..n-1] in order with dlopen (a file path, or a bare soname searched on the loader
 * path); the first that loads, exports every entry point symmem uses and is NCCL >= 2.14 wins.
 * Not found: SYMMEM_ERR_NO_DEVICE, "NCCL not found: tried N places:" then one line per candidate
 * with the reason it was refused. NCCL is loaded once per process and never unloaded: once loaded,
 * later calls return SYMMEM_OK at once (symmem_nccl_library_path says which was loaded). */
symmem_status symmem_nccl_load(const char* const* paths, int n);
/* 1 once symmem_nccl_load has succeeded. */
int symmem_nccl_loaded(void);
/* The file the loaded NCCL came from (as the dynamic loader resolved it); "" before loading. */
const char* symmem_nccl_library_path(void);
/* NCCL_RUNTIME_CONNECT as NCCL's first communicator init will read it, and where it came from:
 * "NCCL_RUNTIME_CONNECT=0 (set by symmem)" (the load sets 0 when the environment has no value: NCCL
 * then connects every algorithm during the init, under its deadline, and no collective waits for a
 * peer in the calling thread) or "NCCL_RUNTIME_CONNECT=<v> (from the environment)" (kept as is;
 * with 1, a first collective connects lazily and a peer that never comes can hold it past its
 * timeout_ms); "" before loading. NCCL reads it once per process: a NCCL communicator created in
 * this process before symmem_nccl_load (by other code) fixes it. Every process of a communicator
 * must read the same value (a rank connecting at init waits for exchanges that a lazy one makes
 * only at its first collective: the init times out). */
const char* symmem_nccl_runtime_connect(void);
/* ncclGetVersion's code (X*10000+Y*100+Z) and its parts; any out pointer may be NULL.
 * SYMMEM_ERR_STATE before loading. (NCCL's C API has no run-time suffix.) */
symmem_status symmem_nccl_version(int* out_code, int* out_major, int* out_minor, int* out_patch);
/* ncclGetUniqueId: SYMMEM_NCCL_UNIQUE_ID_BYTES bytes into out_id. */
symmem_status symmem_nccl_unique_id(uint8_t* out_id);

/* ncclCommInitRankConfig with blocking = 0, then ncclCommSplit into the blocking data communicator
 * (splitShare = 1), both waited for up to timeout_ms in all. device >= 0 is made
 * current for this and every later call on the communicator and stays the calling thread's current
 * device afterwards, as with every symmem call on a GPU (set only where it differs; docs/nccl.md);
 * -1 uses the device current at this call and never sets one. label names the
 * communicator in messages ("group 'world'"); NULL or "" gives "communicator of N ranks". */
symmem_status symmem_nccl_comm_init_rank(int nranks, const uint8_t* unique_id, int rank, int device,
                                         const char* label, int timeout_ms,
                                         symmem_nccl_comm** out);
/* Requests ncclCommAbort now (from any thread): done at once when no call is using the
 * communicator, else by that call at its next polling turn, or (a call blocked inside NCCL) as soon
 * as the raised abort flag lets it return; that call then fails SYMMEM_ERR_ABORTED. */
symmem_status symmem_nccl_comm_abort(symmem_nccl_comm* comm, const char* reason);
/* 1 once the communicator is aborted (or an abort was requested). */
int symmem_nccl_comm_aborted(symmem_nccl_comm* comm);
/* ncclCommFinalize (waited for up to timeout_ms) then ncclCommDestroy; a finalize that does not end
 * in time (unfinished work, a peer that does not close) aborts instead and reports TIMEOUT. An
 * aborted communicator is just freed. The handle is freed in every case, except SYMMEM_ERR_STATE
 * for a communicator used in a group that is still open. NULL is a no-op. */
symmem_status symmem_nccl_comm_destroy(symmem_nccl_comm* comm, int timeout_ms);
/* Waits until all work enqueued on `stream` so far has completed (a CUDA event), checking NCCL's
 * async error meanwhile; at the deadline the communicator is aborted and the message names the last
 * operation enqueued through it. */
symmem_status symmem_nccl_comm_synchronize(symmem_nccl_comm* comm, void* stream, int timeout_ms);

/* Collectives: ENQUEUE on `stream` and return (call symmem_nccl_comm_synchronize to wait). NCCL
 * enqueues before it returns (a first call of an algorithm may wait for the peers to connect: at
 * timeout_ms the communicator is aborted); without ncclCommSplit, NCCL's ncclInProgress answer is
 * polled to its end within timeout_ms instead. Inside
 * symmem_nccl_group_start/end the group end does that. Buffers are device pointers; counts are
 * elements. Reduce: recv is used on the root only. Broadcast: send is read on the root only. */
symmem_status symmem_nccl_all_reduce(symmem_nccl_comm* comm, const void* send, void* recv,
                                     uint64_t count, int dtype, int op, void* stream, int timeout_ms);
symmem_status symmem_nccl_reduce(symmem_nccl_comm* comm, const void* send, void* recv,
                                 uint64_t count, int dtype, int op, int root, void* stream,
                                 int timeout_ms);
symmem_status symmem_nccl_broadcast(symmem_nccl_comm* comm, const void* send, void* recv,
                                    uint64_t count, int dtype, int root, void* stream, int timeout_ms);
/* A measurement aid: `times` (1 or more) all-reduces enqueued back to back by this one C call, each
 * straight into NCCL as an application's own C loop calls it, under one deadline and one check of
 * the communicator, as symmem_nccl_all_reduce. A bench that times it beside single calls from another
 * language, in the same process on the same buffers, tells what that language adds per call from
 * what the process does to NCCL (`symmem bench allreduce --nccl`, its -c columns). Not inside
 * symmem_nccl_group_start/end (SYMMEM_ERR_STATE): a group would hold the calls until its end. Needs
 * NCCL 2.18+ (ncclCommSplit: the blocking data communicator), SYMMEM_ERR_UNSUPPORTED before. */
symmem_status symmem_nccl_all_reduce_repeated(symmem_nccl_comm* comm, const void* send, void* recv,
                                              uint64_t count, int dtype, int op, void* stream,
                                              int timeout_ms, int times);
/* recv holds nranks * send_count elements (rank r's at [r*send_count, (r+1)*send_count)). */
symmem_status symmem_nccl_all_gather(symmem_nccl_comm* comm, const void* send, void* recv,
                                     uint64_t send_count, int dtype, void* stream, int timeout_ms);
/* send holds nranks * recv_count elements; rank r gets the reduction of block r. */
symmem_status symmem_nccl_reduce_scatter(symmem_nccl_comm* comm, const void* send, void* recv,
                                         uint64_t recv_count, int dtype, int op, void* stream,
                                         int timeout_ms);
/* ncclGroupStart / ncclGroupEnd on the calling thread (nestable). The outermost end waits (up to
 * timeout_ms) until every communicator used in the group has taken its operations; at the
 * deadline, or on an error, all of them are aborted. */
symmem_status symmem_nccl_group_start(void);
symmem_status symmem_nccl_group_end(int timeout_ms);

/* ---- NCCL symmetric memory ----------------------------------------------------------------------
 * symmem_backend_open("nccl", device) (after symmem_nccl_load; NCCL 2.19+ for ncclMemAlloc): buffers
 * in ncclMemAlloc memory with the cuda backend's layout and kernels, shared with the peers by fd
 * (symmem_buffer_export_fd / symmem_buffer_import) exactly as cuda buffers are.
 *
 * symmem_nccl_window_register: registers a GPU buffer's own allocation (cuda, nccl or nvshmem
 * backend; signal pad and data) as a window of `comm`; flags 0 or 1 (NCCL_WIN_COLL_SYMMETRIC: the
 * data then sits at the same window offset on every rank, as NCCL requires). Collective over comm
 * (every rank, same buffers, same order), NCCL 2.27+, not inside a group; polled within timeout_ms
 * (a rank that never registers: the communicator is aborted, as for any NCCL wait). NCCL's answer
 * "success, but no window" (no symmetric support) is SYMMEM_ERR_UNSUPPORTED saying what NCCL needs.
 * While a window is registered, symmem_buffer_free of its buffer fails with SYMMEM_ERR_STATE.
 * symmem_nccl_window_deregister: collective too; frees the record. After the communicator was
 * aborted or destroyed (NCCL released its windows then) it only frees the record. Not concurrently
 * with symmem_nccl_comm_destroy of the same communicator. */
typedef struct symmem_nccl_window symmem_nccl_window;
symmem_status symmem_nccl_window_register(symmem_nccl_comm* comm, symmem_buffer* buffer, int flags,
                                          int timeout_ms, symmem_nccl_window** out);
symmem_status symmem_nccl_window_deregister(symmem_nccl_window* window, int timeout_ms);
/* ==== end of NCCL section ==================================================================== */

#ifdef __cplusplus
}
#endif
#endif /* SYMMEM_H */
