// 200 rounds of alloc / import / signal / free (plus failing imports and channels) leave the
// process's fd table and memory map exactly as they were.
#include "test_util.h"

static const int kWorld = 4;

static void round_trip(symmem_backend* be, int iteration) {
  // One process plays all four ranks: each buffer imports the other three.
  symmem_buffer* b[kWorld];
  int fds[kWorld];
  for (int r = 0; r < kWorld; ++r) {
    CHECK_OK(symmem_buffer_alloc(be, 10000 + r % 2, &b[r]));  // same page-rounded size
    CHECK_OK(symmem_buffer_export_fd(b[r], &fds[r]));
  }
  for (int r = 0; r < kWorld; ++r) CHECK_OK(symmem_buffer_import(b[r], r, kWorld, fds));
  CHECK(count_mappings() == kWorld * kWorld);  // own + 3 peers, per buffer: the counter works
  CHECK_OK(symmem_put_signal(b[0], 3, 1, 1000));
  CHECK_OK(symmem_wait_signal(b[3], 0, 1, 1000));
  // A failing import (size mismatch on the last rank) must undo its mappings.
  symmem_buffer *x = nullptr, *big = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, 10000, &x));
  CHECK_OK(symmem_buffer_alloc(be, 100000, &big));
  int bad[kWorld] = {fds[0], fds[1], fds[2], -1};
  CHECK_OK(symmem_buffer_export_fd(big, &bad[3]));
  CHECK_STATUS(symmem_buffer_import(x, 0, kWorld, bad), SYMMEM_ERR_MISMATCH);
  CHECK_OK(symmem_buffer_free(x));
  CHECK_OK(symmem_buffer_free(big));
  // Channels: a gather with world 1 exercises the dup path, then close.
  std::string name = channel_name("leak", iteration);
  symmem_channel* ch = nullptr;
  CHECK_OK(symmem_channel_open(name.c_str(), &ch));
  const char* names[1] = {name.c_str()};
  int out = -1;
  CHECK_OK(symmem_channel_all_gather_fds(ch, names, 0, 1, 1, fds[0], &out, 1000));
  close(out);
  // A message left unreceived in the queue is closed with the channel.
  CHECK_OK(symmem_channel_send_fd(ch, name.c_str(), 0, 5, fds[1], 1000));
  CHECK_OK(symmem_channel_close(ch));
  for (int r = 0; r < kWorld; ++r) CHECK_OK(symmem_buffer_free(b[r]));
}

int main() {
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("host", 0, &be));
  round_trip(be, -1);  // warm-up: lets malloc set up its arenas before we count
  const int fds_before = count_open_fds(), maps_before = count_mappings();
  for (int i = 0; i < 200; ++i) round_trip(be, i);
  const int fds_after = count_open_fds(), maps_after = count_mappings();
  CHECK_OK(symmem_backend_close(be));
  if (fds_after != fds_before || maps_after != maps_before)
    TEST_FAIL("leak: fds %d -> %d, mappings %d -> %d", fds_before, fds_after, maps_before, maps_after);
  std::printf("test_no_leak: 200 rounds, fds %d -> %d, mappings %d -> %d: OK\n", fds_before,
              fds_after, maps_before, maps_after);
  return 0;
}
