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
  SYMMEM_ERR_STATE = 7             /* called in the wrong state (e.g. before import) */
} symmem_status;

typedef enum symmem_dtype { SYMMEM_FLOAT32 = 0 } symmem_dtype;
typedef enum symmem_reduce_op { SYMMEM_SUM = 0 } symmem_reduce_op;

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
  char name[16];         /* "host" or "cuda" */
  char device_name[128]; /* "cpu" or the GPU's name */
  int device;            /* device ordinal (-1 for host) */
  int device_count;      /* devices visible to this process */
} symmem_backend_info;

/* name: "host" or "cuda". device: the ordinal for cuda, ignored for host.
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
 * ranks that did not arrive. */
symmem_status symmem_barrier(symmem_buffer* buffer, int channel, int timeout_ms);

/* ---- collectives ---------------------------------------------------------------------------- */
/* One-shot all-reduce: every rank has `count` elements at offset 0 of its symmetric buffer; each
 * rank reads all peers' inputs directly and writes the reduction (in rank order, so every rank gets
 * the same bits) to `out`: local memory that must not overlap the symmetric buffer, since peers
 * may still be reading it (SYMMEM_ERR_INVALID_ARGUMENT otherwise).
 * Collective: barriers before (inputs ready) and after (peers done reading) on `channel`. */
symmem_status symmem_all_reduce_one_shot(symmem_buffer* buffer, symmem_dtype dtype,
                                         symmem_reduce_op op, uint64_t count, void* out,
                                         int channel, int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif /* SYMMEM_H */
