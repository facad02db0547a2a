// Channel timeouts name the ranks that never showed up, and a failed call leaks no fd.
#include "test_util.h"

static const int kWorld = 4;

// Ranks 0..2 gather; rank 3 never opens its channel.
static int gather_without_rank3(int rank) {
  Names names("gtimeout", kWorld);
  symmem_channel* ch = nullptr;
  CHECK_OK(symmem_channel_open(names.ptrs[rank], &ch));
  int fd = memfd_with("x");
  const int fds_before = count_open_fds();
  int out[kWorld];
  CHECK_STATUS(symmem_channel_all_gather_fds(ch, names.ptrs.data(), rank, kWorld, 7, fd, out, 500),
               SYMMEM_ERR_TIMEOUT);
  CHECK_ERROR_HAS("all_gather_fds(tag 7): timed out after 500 ms; no fd from rank(s) 3");
  CHECK_ERROR_HAS("could not deliver to rank(s) 3");
  for (int r = 0; r < kWorld; ++r) CHECK(out[r] == -1);
  CHECK(count_open_fds() == fds_before);  // received fds were closed
  close(fd);
  CHECK_OK(symmem_channel_close(ch));
  return 0;
}

static int rank_main(int rank) { return rank == 3 ? 0 : gather_without_rank3(rank); }

int main() {
  RUN_RANKS(kWorld, rank_main);

  // Single-process timeouts: nothing to receive, nobody to send to, a root that never comes.
  Names names("solo", 2);
  symmem_channel* ch = nullptr;
  CHECK_OK(symmem_channel_open(names.ptrs[0], &ch));
  int rank = -1, fd = -1;
  CHECK_STATUS(symmem_channel_recv_fd(ch, 9, &rank, &fd, 50), SYMMEM_ERR_TIMEOUT);
  CHECK_ERROR_HAS("recv_fd(tag 9): timed out after 50 ms");
  int mine = memfd_with("y");
  CHECK_STATUS(symmem_channel_send_fd(ch, names.ptrs[1], 0, 1, mine, 50), SYMMEM_ERR_TIMEOUT);
  CHECK_ERROR_HAS("timed out after 50 ms");
  CHECK_ERROR_HAS(names.ptrs[1]);
  CHECK_STATUS(symmem_channel_broadcast_fds(ch, names.ptrs.data(), 0, 2, 1, 4, -1, &fd, 50),
               SYMMEM_ERR_TIMEOUT);
  CHECK_ERROR_HAS("no fd from rank 1");
  CHECK(fd == -1);
  // Opening the same name twice fails with a message naming it.
  symmem_channel* twin = nullptr;
  CHECK_STATUS(symmem_channel_open(names.ptrs[0], &twin), SYMMEM_ERR_SYSTEM);
  CHECK_ERROR_HAS(names.ptrs[0]);
  close(mine);
  CHECK_OK(symmem_channel_close(ch));
  std::printf("test_channel_timeout: missing rank named, no fd leak: OK\n");
  return 0;
}
