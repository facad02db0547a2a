#include "ipc/channel.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "core/abort.h"
#include "core/status.h"

namespace {

struct Wire {  // the datagram payload
  int32_t rank;
  int32_t tag;
};

socklen_t abstract_address(const char* name, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  const size_t len = std::strlen(name);
  // sun_path[0] == '\0' selects the abstract namespace; the name is the next `len` bytes exactly
  // (no terminator), so the address length must count them precisely.
  std::memcpy(addr->sun_path + 1, name, len);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + len);
}

std::string join(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) {
    if (!s.empty()) s += ", ";
    s += std::to_string(r);
  }
  return s;
}

// How long to wait for input before retrying sends that are not through yet.
constexpr int64_t kSendRetryNs = 1000000;  // 1 ms
// A receive sleeps in slices of this, to notice symmem_abort (a dead peer's fd never comes).
constexpr int64_t kAbortPollNs = 20000000;  // 20 ms

}  // namespace

symmem_status symmem_channel::open(const char* name, symmem_channel** out) {
  int sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return symmem::fail_errno(errno, "socket(AF_UNIX, SOCK_DGRAM) for channel '%s'", name);
  sockaddr_un addr;
  socklen_t len = abstract_address(name, &addr);
  if (bind(sock, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    int err = errno;
    close(sock);
    if (err == EADDRINUSE)
      return symmem::fail(SYMMEM_ERR_SYSTEM,
                          "bind channel '%s': the name is already in use by another channel", name);
    return symmem::fail_errno(err, "bind channel '%s'", name);
  }
  *out = new symmem_channel(sock, name);
  return SYMMEM_OK;
}

symmem_channel::~symmem_channel() {
  for (const Message& m : pending_) close(m.fd);
  close(sock_);
}

symmem_channel::Sent symmem_channel::try_send(const char* peer, int rank, int tag, int fd,
                                              symmem_status* err) {
  sockaddr_un addr;
  socklen_t addr_len = abstract_address(peer, &addr);
  Wire payload{rank, tag};
  iovec iov{&payload, sizeof payload};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  std::memset(control, 0, sizeof control);
  msghdr msg{};
  msg.msg_name = &addr;
  msg.msg_namelen = addr_len;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;  // the kernel installs a duplicate in the receiver; ours stays open
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  // DONTWAIT: a full peer queue must not block us past the deadline (we retry instead).
  if (sendmsg(sock_, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) return Sent::yes;
  switch (errno) {
    case ECONNREFUSED:  // peer has not bound its name yet: peers start at different times
    case ENOENT:
    case EAGAIN:        // peer's receive queue is full
    case ENOBUFS:
    case EINTR:
      return Sent::not_yet;
    case EBADF:
      *err = symmem::fail(SYMMEM_ERR_INVALID_ARGUMENT, "fd %d is not an open file descriptor", fd);
      return Sent::failed;
    default:
      *err = symmem::fail_errno(errno, "sendmsg from channel '%s' to channel '%s'", name_.c_str(), peer);
      return Sent::failed;
  }
}

symmem_status symmem_channel::receive_one(Message* out, bool* got) {
  for (;;) {
    *got = false;
    Wire payload{};
    char extra[8];  // catches datagrams longer than Wire, which are not ours
    iovec iov[2] = {{&payload, sizeof payload}, {extra, sizeof extra}};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 16)];
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = 2;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = recvmsg(sock_, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return SYMMEM_OK;
      if (errno == EINTR) continue;
      return symmem::fail_errno(errno, "recvmsg on channel '%s'", name_.c_str());
    }
    // Collect every fd that came along, so none leaks whatever the datagram looks like.
    std::vector<int> fds;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        fds.push_back(fd);
      }
    }
    if (n != static_cast<ssize_t>(sizeof payload) || fds.size() != 1) {
      for (int fd : fds) close(fd);  // not a symmem message: drop it and read on
      continue;
    }
    *out = Message{payload.rank, payload.tag, fds[0]};
    *got = true;
    return SYMMEM_OK;
  }
}

symmem_status symmem_channel::take(const std::function<bool(const Message&)>& want,
                                   int64_t until_ns, Message* out, bool* found) {
  *found = false;
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (want(*it)) {
      *out = *it;
      pending_.erase(it);
      *found = true;
      return SYMMEM_OK;
    }
  }
  for (;;) {
    Message m;
    bool got;
    // Drain what is there before sleeping.
    while (true) {
      if (symmem_status s = receive_one(&m, &got); s != SYMMEM_OK) return s;
      if (!got) break;
      if (want(m)) {
        *out = m;
        *found = true;
        return SYMMEM_OK;
      }
      pending_.push_back(m);  // another tag (or rank) than asked: keep it for a later receive
    }
    if (symmem::aborted_since(abort_epoch_)) return symmem::fail_aborted("channel '" + name_ + "'");
    int64_t left = until_ns - symmem::now_ns();
    if (left <= 0) return SYMMEM_OK;
    left = std::min<int64_t>(left, kAbortPollNs);  // wake up to notice symmem_abort
    pollfd p{sock_, POLLIN, 0};
    timespec ts{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
    if (ppoll(&p, 1, &ts, nullptr) < 0 && errno != EINTR)
      return symmem::fail_errno(errno, "ppoll on channel '%s'", name_.c_str());
  }
}

symmem_status symmem_channel::send_fd(const char* peer, int rank, int tag, int fd, int timeout_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  abort_epoch_ = symmem::abort_epoch();
  symmem::Deadline dl(timeout_ms);
  for (;;) {
    symmem_status err = SYMMEM_OK;
    switch (try_send(peer, rank, tag, fd, &err)) {
      case Sent::yes:
        return SYMMEM_OK;
      case Sent::failed:
        return err;
      case Sent::not_yet:
        break;
    }
    if (symmem::aborted_since(abort_epoch_))
      return symmem::fail_aborted("send_fd(tag " + std::to_string(tag) + ") to channel '" + peer + "'");
    if (dl.expired())
      return symmem::fail(SYMMEM_ERR_TIMEOUT,
                          "send_fd(tag %d) to channel '%s': timed out after %d ms; the peer "
                          "channel is not open or its queue is full",
                          tag, peer, timeout_ms);
    symmem::sleep_ns(std::min<int64_t>(kSendRetryNs, dl.end_ns() - symmem::now_ns()));
  }
}

symmem_status symmem_channel::recv_fd(int tag, int* out_rank, int* out_fd, int timeout_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  abort_epoch_ = symmem::abort_epoch();
  symmem::Deadline dl(timeout_ms);
  Message m;
  bool found;
  symmem_status s = take([&](const Message& x) { return x.tag == tag; }, dl.end_ns(), &m, &found);
  if (s != SYMMEM_OK) return s;
  if (!found)
    return symmem::fail(SYMMEM_ERR_TIMEOUT, "recv_fd(tag %d): timed out after %d ms; no fd arrived",
                        tag, timeout_ms);
  *out_rank = m.rank;
  *out_fd = m.fd;
  return SYMMEM_OK;
}

symmem_status symmem_channel::all_gather_fds(const char* const* names, int rank, int world, int tag,
                                             int fd, int* out_fds, int timeout_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  abort_epoch_ = symmem::abort_epoch();
  symmem::Deadline dl(timeout_ms);
  std::vector<int> got(world, -1);
  std::vector<char> sent(world, 0);
  auto cleanup = [&]() {  // a failed call leaves no fd behind
    for (int r = 0; r < world; ++r) {
      if (got[r] >= 0) close(got[r]);
      out_fds[r] = -1;
    }
  };
  got[rank] = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (got[rank] < 0) {
    int err = errno;
    cleanup();
    if (err == EBADF)
      return symmem::fail(SYMMEM_ERR_INVALID_ARGUMENT, "fd %d is not an open file descriptor", fd);
    return symmem::fail_errno(err, "dup of fd %d", fd);
  }
  sent[rank] = 1;
  int unsent = world - 1, missing = world - 1;
  // Sends and receives interleave: a peer that is not up yet must not stop us from serving the
  // others (or from collecting their fds), so one late rank never looks like many.
  for (;;) {
    for (int r = 0; r < world; ++r) {
      if (sent[r]) continue;
      symmem_status err = SYMMEM_OK;
      Sent result = try_send(names[r], rank, tag, fd, &err);
      if (result == Sent::failed) {
        cleanup();
        return err;
      }
      if (result == Sent::yes) {
        sent[r] = 1;
        --unsent;
      }
    }
    if (unsent == 0 && missing == 0) break;
    if (symmem::aborted_since(abort_epoch_)) {
      std::vector<int> silent;
      for (int r = 0; r < world; ++r)
        if (got[r] < 0) silent.push_back(r);
      cleanup();
      return symmem::fail_aborted("all_gather_fds(tag " + std::to_string(tag) + ")" +
                                  (silent.empty() ? "" : " waiting for rank(s) " + join(silent)));
    }
    if (dl.expired()) {
      std::vector<int> silent, undelivered;
      for (int r = 0; r < world; ++r) {
        if (got[r] < 0) silent.push_back(r);
        if (!sent[r]) undelivered.push_back(r);
      }
      std::string msg = "all_gather_fds(tag " + std::to_string(tag) + "): timed out after " +
                        std::to_string(timeout_ms) + " ms";
      if (!silent.empty()) msg += "; no fd from rank(s) " + join(silent);
      if (!undelivered.empty())
        msg += "; could not deliver to rank(s) " + join(undelivered) +
               " (channel not open or queue full)";
      cleanup();
      return symmem::fail(SYMMEM_ERR_TIMEOUT, "%s", msg.c_str());
    }
    int64_t until = unsent > 0 ? std::min(dl.end_ns(), symmem::now_ns() + kSendRetryNs) : dl.end_ns();
    Message m;
    bool found;
    symmem_status s = take(
        [&](const Message& x) {
          return x.tag == tag && x.rank >= 0 && x.rank < world && got[x.rank] < 0;
        },
        until, &m, &found);
    if (s == SYMMEM_ERR_ABORTED) continue;  // reported at the top, naming the ranks not heard from
    if (s != SYMMEM_OK) {
      cleanup();
      return s;
    }
    if (found) {
      got[m.rank] = m.fd;
      --missing;
    }
  }
  std::copy(got.begin(), got.end(), out_fds);
  return SYMMEM_OK;
}

symmem_status symmem_channel::broadcast_fds(const char* const* names, int rank, int world, int root,
                                            int tag, int fd, int* out_fd, int timeout_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  abort_epoch_ = symmem::abort_epoch();
  symmem::Deadline dl(timeout_ms);
  *out_fd = -1;
  if (rank != root) {
    Message m;
    bool found;
    symmem_status s = take([&](const Message& x) { return x.tag == tag && x.rank == root; },
                           dl.end_ns(), &m, &found);
    if (s != SYMMEM_OK) return s;
    if (!found)
      return symmem::fail(SYMMEM_ERR_TIMEOUT,
                          "broadcast_fds(tag %d, root %d): timed out after %d ms; no fd from rank %d",
                          tag, root, timeout_ms, root);
    *out_fd = m.fd;
    return SYMMEM_OK;
  }
  int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) {
    if (errno == EBADF)
      return symmem::fail(SYMMEM_ERR_INVALID_ARGUMENT, "fd %d is not an open file descriptor", fd);
    return symmem::fail_errno(errno, "dup of fd %d", fd);
  }
  std::vector<char> sent(world, 0);
  sent[rank] = 1;
  int unsent = world - 1;
  for (;;) {
    for (int r = 0; r < world; ++r) {
      if (sent[r]) continue;
      symmem_status err = SYMMEM_OK;
      Sent result = try_send(names[r], rank, tag, fd, &err);
      if (result == Sent::failed) {
        close(own);
        return err;
      }
      if (result == Sent::yes) {
        sent[r] = 1;
        --unsent;
      }
    }
    if (unsent == 0) break;
    if (symmem::aborted_since(abort_epoch_)) {
      close(own);
      return symmem::fail_aborted("broadcast_fds(tag " + std::to_string(tag) + ", root " +
                                  std::to_string(root) + ")");
    }
    if (dl.expired()) {
      std::vector<int> undelivered;
      for (int r = 0; r < world; ++r)
        if (!sent[r]) undelivered.push_back(r);
      close(own);
      return symmem::fail(SYMMEM_ERR_TIMEOUT,
                          "broadcast_fds(tag %d, root %d): timed out after %d ms; could not deliver "
                          "to rank(s) %s (channel not open or queue full)",
                          tag, root, timeout_ms, join(undelivered).c_str());
    }
    symmem::sleep_ns(std::min<int64_t>(kSendRetryNs, dl.end_ns() - symmem::now_ns()));
  }
  *out_fd = own;
  return SYMMEM_OK;
}
