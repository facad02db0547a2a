// Channel: fds really move between processes, tags are matched, other tags wait in the queue.
#include "test_util.h"

static const int kWorld = 4;
static const int kTimeout = 10000;

static std::string content(int rank) { return "memfd of rank " + std::to_string(rank); }

// all_gather_fds: each rank ends up with an fd of every rank's memfd, by sender rank.
static int all_gather(int rank) {
  Names names("gather", kWorld);
  symmem_channel* ch = nullptr;
  CHECK_OK(symmem_channel_open(names.ptrs[rank], &ch));
  if (rank == 2) usleep(200000);  // a late peer: the others must retry sending to it
  int fd = memfd_with(content(rank));
  int out[kWorld];
  CHECK_OK(symmem_channel_all_gather_fds(ch, names.ptrs.data(), rank, kWorld, 7, fd, out, kTimeout));
  for (int r = 0; r < kWorld; ++r) {
    CHECK(out[r] >= 0);
    if (read_fd(out[r]) != content(r))
      TEST_FAIL("out_fds[%d] holds \"%s\"", r, read_fd(out[r]).c_str());
  }
  CHECK(out[rank] != fd);  // own entry is a dup, the caller keeps its fd
  // A second gather with another tag works on the same channel.
  int out2[kWorld];
  CHECK_OK(symmem_channel_all_gather_fds(ch, names.ptrs.data(), rank, kWorld, 8, fd, out2, kTimeout));
  for (int r = 0; r < kWorld; ++r) CHECK(read_fd(out2[r]) == content(r));
  for (int r = 0; r < kWorld; ++r) close(out[r]), close(out2[r]);
  close(fd);
  CHECK_OK(symmem_channel_close(ch));
  return 0;
}

// recv_fd by tag: messages of other tags are kept until asked for.
static int tags(int rank) {
  Names names("tags", 2);
  symmem_channel* ch = nullptr;
  CHECK_OK(symmem_channel_open(names.ptrs[rank], &ch));
  if (rank == 1) {
    for (int tag : {3, 2, 1}) {
      int fd = memfd_with("tag " + std::to_string(tag));
      CHECK_OK(symmem_channel_send_fd(ch, names.ptrs[0], 1, tag, fd, kTimeout));
      close(fd);
    }
  } else {
    usleep(100000);  // let all three arrive, in the "wrong" order
    for (int tag : {1, 2, 3}) {
      int from = -1, fd = -1;
      CHECK_OK(symmem_channel_recv_fd(ch, tag, &from, &fd, kTimeout));
      CHECK(from == 1);
      if (read_fd(fd) != "tag " + std::to_string(tag))
        TEST_FAIL("recv tag %d got \"%s\"", tag, read_fd(fd).c_str());
      close(fd);
    }
  }
  CHECK_OK(symmem_channel_close(ch));
  return 0;
}

static int broadcast(int rank) {
  Names names("bcast", kWorld);
  const int root = 2;
  symmem_channel* ch = nullptr;
  if (rank == 0) usleep(100000);
  CHECK_OK(symmem_channel_open(names.ptrs[rank], &ch));
  int fd = rank == root ? memfd_with("from the root") : -1;
  int got = -1;
  CHECK_OK(symmem_channel_broadcast_fds(ch, names.ptrs.data(), rank, kWorld, root, 5, fd, &got, kTimeout));
  CHECK(got >= 0 && got != fd);
  CHECK(read_fd(got) == "from the root");
  close(got);
  if (fd >= 0) close(fd);
  CHECK_OK(symmem_channel_close(ch));
  return 0;
}

int main() {
  RUN_RANKS(kWorld, all_gather);
  RUN_RANKS(2, tags);
  RUN_RANKS(kWorld, broadcast);
  std::printf("test_channel: all_gather (4 ranks), tag queue, broadcast: OK\n");
  return 0;
}
