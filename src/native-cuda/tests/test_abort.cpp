// symmem_abort cuts every host wait short: barrier, signals, one-shot all-reduce and the fd channel
// return SYMMEM_ERR_ABORTED with the reason and what they were waiting for, long before their
// deadline; a wait that starts after the abort ends at once; after symmem_abort_reset waits time
// out as usual again, while a wait that was running at the abort still ends, even when the reset
// came before it looked. The bounds here are generous: they tell "cut short" from "waited 30 s".
#include <chrono>
#include <thread>

#include "test_util.h"

static const int kWorld = 3;
static const int kLong = 30000;  // ms: what an abort must not wait for

// Runs `wait` while another thread aborts after 300 ms (the wait has long started by then, so the
// message must be the one of a wait in progress); checks status, message and duration.
template <class F>
static void expect_cut_short(const char* what, F wait, const char* must_contain) {
  symmem_abort_reset();
  std::thread aborter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    symmem_abort("rank 2 is gone (test)");
  });
  auto t0 = std::chrono::steady_clock::now();
  symmem_status s = wait();
  double took = seconds_since(t0);
  aborter.join();
  if (s != SYMMEM_ERR_ABORTED) TEST_FAIL("%s: status %d (%s), expected ABORTED", what, s, symmem_last_error());
  if (took > 5.0) TEST_FAIL("%s: took %.1f s to notice the abort", what, took);
  CHECK_ERROR_HAS("aborted: rank 2 is gone (test)");
  CHECK_ERROR_HAS(must_contain);
}

static int rank_main(int rank) {
  Names names("abort", kWorld);
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_imported_buffer("host", 0, names, rank, kWorld, 4096, &be);
  if (rank != 0) {
    sleep(6);  // alive and mapped, but never waits: rank 0's waits can only end by abort
    CHECK_OK(symmem_buffer_free(b));
    CHECK_OK(symmem_backend_close(be));
    return 0;
  }
  expect_cut_short("barrier", [&] { return symmem_barrier(b, 0, kLong); },
                   "barrier(channel 0) waiting for rank(s) 1, 2");
  expect_cut_short("wait_signal", [&] { return symmem_wait_signal(b, 2, 3, kLong); }, "wait_signal(peer 2, channel 3)");
  symmem_abort_reset();
  CHECK_OK(symmem_put_signal(b, 2, 4, 100));  // fills the slot: the next put must wait
  expect_cut_short("put_signal", [&] { return symmem_put_signal(b, 2, 4, kLong); }, "put_signal(peer 2, channel 4)");
  std::vector<float> out(16);
  expect_cut_short("all_reduce",
                   [&] {
                     return symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, 16, out.data(),
                                              nullptr, kLong);
                   },
                   "all_reduce (waiting for inputs)");

  // An fd channel receive that nobody will ever satisfy, and a gather missing ranks 1 and 2.
  symmem_channel* ch = nullptr;
  CHECK_OK(symmem_channel_open(channel_name("abort-ch", 0).c_str(), &ch));
  int from = -1, fd = -1;
  expect_cut_short("recv_fd", [&] { return symmem_channel_recv_fd(ch, 7, &from, &fd, kLong); }, "channel '");
  std::vector<std::string> gone = {channel_name("abort-ch", 0), channel_name("abort-nobody", 1),
                                   channel_name("abort-nobody", 2)};
  std::vector<const char*> peer_names = {gone[0].c_str(), gone[1].c_str(), gone[2].c_str()};
  int mine = memfd_with("x");
  std::vector<int> fds(3, -1);
  expect_cut_short("all_gather_fds",
                   [&] { return symmem_channel_all_gather_fds(ch, peer_names.data(), 0, 3, 8, mine, fds.data(), kLong); },
                   "all_gather_fds(tag 8)");
  for (int f : fds)
    if (f != -1) TEST_FAIL("an aborted gather left fd %d behind", f);

  // Already aborted: a new wait ends at once, without touching a pad (a put that would succeed at
  // once, the slot being free, is refused too).
  auto t0 = std::chrono::steady_clock::now();
  CHECK_STATUS(symmem_barrier(b, 1, kLong), SYMMEM_ERR_ABORTED);
  CHECK_ERROR_HAS("symmem_barrier, not started: aborted: rank 2 is gone (test)");
  CHECK_STATUS(symmem_put_signal(b, 1, 9, kLong), SYMMEM_ERR_ABORTED);
  CHECK_ERROR_HAS("symmem_put_signal, not started");
  if (seconds_since(t0) > 2.0) TEST_FAIL("a barrier after the abort waited %.1f s", seconds_since(t0));
  if (symmem_aborted() != 1) TEST_FAIL("symmem_aborted() = %d after an abort", symmem_aborted());
  // The first reason stays.
  CHECK_OK(symmem_abort("another reason"));
  CHECK_STATUS(symmem_barrier(b, 1, kLong), SYMMEM_ERR_ABORTED);
  CHECK_ERROR_HAS("rank 2 is gone (test)");

  // Reset: waits time out again (and name the ranks as before).
  symmem_abort_reset();
  if (symmem_aborted() != 0) TEST_FAIL("symmem_aborted() = %d after reset", symmem_aborted());
  CHECK_STATUS(symmem_barrier(b, 2, 200), SYMMEM_ERR_TIMEOUT);
  CHECK_ERROR_HAS("timed out after 200 ms waiting for rank(s) 1, 2");

  // An abort undone at once by a reset (a process forming its world again) still ends the wait that
  // was running when it came, late but long before its deadline; a wait begun after the reset is not
  // aborted.
  {
    std::thread quick([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      symmem_abort("rank 1 is gone (test, reset at once)");
      symmem_abort_reset();
    });
    auto t1 = std::chrono::steady_clock::now();
    const symmem_status s = symmem_barrier(b, 3, kLong);
    quick.join();
    if (s != SYMMEM_ERR_ABORTED)
      TEST_FAIL("a barrier whose abort was reset at once: status %d (%s), expected ABORTED", s, symmem_last_error());
    if (seconds_since(t1) > 5.0) TEST_FAIL("a barrier whose abort was reset at once took %.1f s", seconds_since(t1));
    CHECK_ERROR_HAS("aborted: rank 1 is gone (test, reset at once)");
    if (symmem_aborted() != 0) TEST_FAIL("symmem_aborted() = %d after the reset", symmem_aborted());
    CHECK_STATUS(symmem_barrier(b, 4, 200), SYMMEM_ERR_TIMEOUT);
    // The same for a receive on the fd channel (an allocation's exchange), which looks every 20 ms.
    std::thread quick_channel([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      symmem_abort("rank 1 is gone (test, channel, reset at once)");
      symmem_abort_reset();
    });
    auto t2 = std::chrono::steady_clock::now();
    const symmem_status r = symmem_channel_recv_fd(ch, 9, &from, &fd, kLong);
    quick_channel.join();
    if (r != SYMMEM_ERR_ABORTED)
      TEST_FAIL("a receive whose abort was reset at once: status %d (%s), expected ABORTED", r, symmem_last_error());
    if (seconds_since(t2) > 5.0) TEST_FAIL("a receive whose abort was reset at once took %.1f s", seconds_since(t2));
    CHECK_ERROR_HAS("rank 1 is gone (test, channel, reset at once)");
  }

  CHECK_STATUS(symmem_abort(nullptr), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(symmem_abort(""), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("reason");

  close(mine);
  CHECK_OK(symmem_channel_close(ch));
  CHECK_OK(symmem_buffer_free(b));  // an aborted buffer frees like any other
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

int main() {
  RUN_RANKS(kWorld, rank_main);
  std::printf("test_abort: host waits and the fd channel cut short by symmem_abort: OK\n");
  return 0;
}
