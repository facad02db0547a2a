// symmem_channel: moves file descriptors between local processes. A Unix SOCK_DGRAM socket bound
// in the Linux abstract namespace (no file to clean up, gone when the process is). Each datagram
// is {int32 rank, int32 tag} plus one fd in SCM_RIGHTS; datagrams keep message boundaries, so a
// message is never split or merged, and arrival order does not matter because of the tags.
// Operations on one channel are serialised by a mutex (they share the pending queue).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

#include "core/abi.h"
#include "core/deadline.h"

struct symmem_channel {
 public:
  // Longest name: sun_path minus the leading NUL of an abstract address.
  static constexpr size_t kMaxName = 107;

  // name: 1..kMaxName bytes (checked by the caller).
  static symmem_status open(const char* name, symmem_channel** out);
  ~symmem_channel();  // closes the socket and every fd still queued

  symmem_status send_fd(const char* peer, int rank, int tag, int fd, int timeout_ms);
  symmem_status recv_fd(int tag, int* out_rank, int* out_fd, int timeout_ms);
  symmem_status all_gather_fds(const char* const* names, int rank, int world, int tag, int fd,
                               int* out_fds, int timeout_ms);
  symmem_status broadcast_fds(const char* const* names, int rank, int world, int root, int tag,
                              int fd, int* out_fd, int timeout_ms);

 private:
  struct Message {
    int rank;
    int tag;
    int fd;
  };
  enum class Sent { yes, not_yet, failed };

  explicit symmem_channel(int sock, std::string name) : sock_(sock), name_(std::move(name)) {}

  // One non-blocking attempt. not_yet: the peer is not bound yet or its queue is full, both of
  // which a retry fixes. failed: the message is stored and *err set.
  Sent try_send(const char* peer, int rank, int tag, int fd, symmem_status* err);
  // Takes the first queued or arriving message that `want` accepts, waiting until `until_ns`.
  // Others are queued. *found tells whether one was taken; the status is only for socket errors.
  symmem_status take(const std::function<bool(const Message&)>& want, int64_t until_ns,
                     Message* out, bool* found);
  // One recvmsg without waiting; false when nothing is there. Malformed datagrams are dropped.
  symmem_status receive_one(Message* out, bool* got);

  int sock_;
  std::string name_;
  std::deque<Message> pending_;  // received, not yet asked for
  std::mutex mu_;
  // The abort count when the operation under mu_ began: an abort after that ends it, also one that
  // symmem_abort_reset has undone before the operation looked (core/abort.h).
  uint64_t abort_epoch_ = 0;
};
