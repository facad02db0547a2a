// C entry points for the IPC channel: argument checks, then ipc/channel.cpp does the work.
#include <cstdio>
#include <cerrno>
#include <cstring>

#include <unistd.h>

#include "core/validate.h"
#include "ipc/channel.h"

using namespace symmem;

namespace {

symmem_status check_name(const char* name, const char* what, int index = -1) {
  char label[48];
  if (index >= 0)
    std::snprintf(label, sizeof label, "%s[%d]", what, index);
  else
    std::snprintf(label, sizeof label, "%s", what);
  SYMMEM_REQUIRE(name != nullptr, "%s is NULL", label);
  const size_t len = std::strlen(name);
  SYMMEM_REQUIRE(len > 0, "%s is empty", label);
  SYMMEM_REQUIRE(len <= symmem_channel::kMaxName,
                 "%s is %zu bytes long; an abstract socket name holds at most %zu", label, len,
                 symmem_channel::kMaxName);
  return SYMMEM_OK;
}

symmem_status check_fd(int fd) {
  SYMMEM_REQUIRE(fd >= 0, "fd %d is not a file descriptor", fd);
  return SYMMEM_OK;
}

// Names of every rank but the own one are needed (the own one is not read).
symmem_status check_peer_names(const char* const* peer_names, int rank, int world) {
  SYMMEM_REQUIRE_NOT_NULL(peer_names);
  for (int r = 0; r < world; ++r)
    if (r != rank) SYMMEM_TRY(check_name(peer_names[r], "peer_names", r));
  return SYMMEM_OK;
}

}  // namespace

extern "C" {

symmem_status symmem_channel_open(const char* name, symmem_channel** out) {
  return guarded("symmem_channel_open", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(out);
    *out = nullptr;
    SYMMEM_TRY(check_name(name, "name"));
    return symmem_channel::open(name, out);
  });
}

symmem_status symmem_channel_close(symmem_channel* channel) {
  delete channel;  // NULL is a no-op
  return SYMMEM_OK;
}

symmem_status symmem_close_fd(int fd) {
  SYMMEM_TRY(check_fd(fd));
  // EINTR still releases the descriptor on Linux, so retrying would close someone else's fd.
  if (close(fd) != 0 && errno != EINTR)
    return fail(SYMMEM_ERR_SYSTEM, "close(fd %d): %s", fd, strerror(errno));
  return SYMMEM_OK;
}

symmem_status symmem_channel_send_fd(symmem_channel* channel, const char* peer_name, int rank,
                                     int tag, int fd, int timeout_ms) {
  return guarded("symmem_channel_send_fd", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(channel);
    SYMMEM_TRY(check_name(peer_name, "peer_name"));
    SYMMEM_REQUIRE(rank >= 0 && rank < SYMMEM_MAX_WORLD, "rank %d is out of range 0..%d", rank,
                   SYMMEM_MAX_WORLD - 1);
    SYMMEM_TRY(check_fd(fd));
    SYMMEM_TRY(check_timeout(timeout_ms));
    return channel->send_fd(peer_name, rank, tag, fd, timeout_ms);
  });
}

symmem_status symmem_channel_recv_fd(symmem_channel* channel, int tag, int* out_rank, int* out_fd,
                                     int timeout_ms) {
  return guarded("symmem_channel_recv_fd", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(channel);
    SYMMEM_REQUIRE_NOT_NULL(out_rank);
    SYMMEM_REQUIRE_NOT_NULL(out_fd);
    SYMMEM_TRY(check_timeout(timeout_ms));
    return channel->recv_fd(tag, out_rank, out_fd, timeout_ms);
  });
}

symmem_status symmem_channel_all_gather_fds(symmem_channel* channel, const char* const* peer_names,
                                            int rank, int world, int tag, int fd, int* out_fds,
                                            int timeout_ms) {
  return guarded("symmem_channel_all_gather_fds", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(channel);
    SYMMEM_REQUIRE_NOT_NULL(out_fds);
    SYMMEM_TRY(check_world_rank(world, rank));
    SYMMEM_TRY(check_peer_names(peer_names, rank, world));
    SYMMEM_TRY(check_fd(fd));
    SYMMEM_TRY(check_timeout(timeout_ms));
    return channel->all_gather_fds(peer_names, rank, world, tag, fd, out_fds, timeout_ms);
  });
}

symmem_status symmem_channel_broadcast_fds(symmem_channel* channel, const char* const* peer_names,
                                           int rank, int world, int root, int tag, int fd,
                                           int* out_fd, int timeout_ms) {
  return guarded("symmem_channel_broadcast_fds", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(channel);
    SYMMEM_REQUIRE_NOT_NULL(out_fd);
    SYMMEM_TRY(check_world_rank(world, rank));
    SYMMEM_REQUIRE(root >= 0 && root < world, "root %d is out of range 0..%d (world %d)", root,
                   world - 1, world);
    if (rank == root) {  // only the root sends, so only it needs the names and a valid fd
      SYMMEM_TRY(check_peer_names(peer_names, rank, world));
      SYMMEM_TRY(check_fd(fd));
    }
    SYMMEM_TRY(check_timeout(timeout_ms));
    return channel->broadcast_fds(peer_names, rank, world, root, tag, fd, out_fd, timeout_ms);
  });
}

}  // extern "C"
