// Minimal test support: checks that print what failed and exit 1, and a fork-based runner for
// multi-process tests with a hard deadline.
#pragma once
#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "symmem.h"

static int g_rank_for_log = -1;  // set in forked ranks, so failures say which rank

// Seconds of the steady clock since t0: how long a wait took, for the deadline and abort checks.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

#define TEST_FAIL(...)                                                         \
  do {                                                                         \
    std::fprintf(stderr, "[rank %d] %s:%d: ", g_rank_for_log, __FILE__, __LINE__); \
    std::fprintf(stderr, __VA_ARGS__);                                         \
    std::fprintf(stderr, "\n");                                                \
    std::fflush(stderr);                                                       \
    std::exit(1);                                                              \
  } while (0)

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond)) TEST_FAIL("CHECK failed: %s (symmem_last_error: \"%s\")", #cond, symmem_last_error()); \
  } while (0)

#define CHECK_STATUS(expr, expected)                                                   \
  do {                                                                                 \
    symmem_status got_ = (expr);                                                       \
    if (got_ != (expected))                                                            \
      TEST_FAIL("%s returned %d, expected %d (symmem_last_error: \"%s\")", #expr, (int)got_, \
                (int)(expected), symmem_last_error());                                 \
  } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, SYMMEM_OK)

// The last error contains `text`.
#define CHECK_ERROR_HAS(text)                                                             \
  do {                                                                                    \
    if (std::strstr(symmem_last_error(), (text)) == nullptr)                              \
      TEST_FAIL("symmem_last_error \"%s\" does not contain \"%s\"", symmem_last_error(), (text)); \
  } while (0)

// Unique per test run, so parallel ctest runs never share channel names.
inline std::string channel_name(const char* test, int rank) {
  static const pid_t run = getpid();  // first call happens in the parent, before fork
  return "symmem-test-" + std::to_string(run) + "-" + test + "-" + std::to_string(rank);
}

struct Names {
  std::vector<std::string> owned;
  std::vector<const char*> ptrs;
  Names(const char* test, int world) {
    for (int r = 0; r < world; ++r) owned.push_back(channel_name(test, r));
    for (auto& s : owned) ptrs.push_back(s.c_str());
  }
};

// The test rendezvous of a buffer: every rank sends its fd to every peer over a fresh channel and
// imports theirs (the buffer takes no ownership of the received fds, so they are closed here).
inline void exchange_and_import(symmem_buffer* b, const Names& names, int rank, int world,
                                int timeout_ms = 10000) {
  symmem_channel* ch = nullptr;
  CHECK_OK(symmem_channel_open(names.ptrs[rank], &ch));
  int fd = -1;
  std::vector<int> fds(world, -1);
  CHECK_OK(symmem_buffer_export_fd(b, &fd));
  CHECK_OK(symmem_channel_all_gather_fds(ch, names.ptrs.data(), rank, world, 1, fd, fds.data(),
                                         timeout_ms));
  CHECK_OK(symmem_buffer_import(b, rank, world, fds.data()));
  for (int r = 0; r < world; ++r) close(fds[r]);
  CHECK_OK(symmem_channel_close(ch));
}

// Opens `backend` on `device`, allocates `bytes` and maps every peer's buffer.
inline symmem_buffer* make_imported_buffer(const char* backend, int device, const Names& names,
                                           int rank, int world, uint64_t bytes,
                                           symmem_backend** be_out, int timeout_ms = 10000) {
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open(backend, device, &be));
  symmem_buffer* b = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, bytes, &b));
  exchange_and_import(b, names, rank, world, timeout_ms);
  *be_out = be;
  return b;
}

inline int count_open_fds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) TEST_FAIL("opendir /proc/self/fd");
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n - 1;  // the DIR's own fd
}

// Mappings of symmem memfds (they show as "/memfd:symmem (deleted)" in /proc/self/maps). Counting
// only these keeps the check exact even when malloc or a sanitizer maps memory of its own.
inline int count_mappings() {
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (f == nullptr) TEST_FAIL("fopen /proc/self/maps");
  int n = 0;
  char line[4096];
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::strstr(line, "/memfd:symmem") != nullptr) ++n;
  std::fclose(f);
  return n;
}

// Forks `world` ranks running body(rank) (its return value is the exit code). Returns true if all
// exited 0 before `deadline_s`; otherwise kills the rest and reports which ranks failed or hung.
inline bool run_ranks(int world, int deadline_s, const std::function<int(int)>& body) {
  channel_name("", 0);  // pin the run id in the parent
  std::fflush(nullptr);
  std::vector<pid_t> pids(world, -1);
  const pid_t parent = getpid();
  for (int r = 0; r < world; ++r) {
    pid_t pid = fork();
    if (pid < 0) TEST_FAIL("fork: %s", std::strerror(errno));
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // die with the parent (e.g. CTest timeout)
      if (getppid() != parent) _exit(99);
      g_rank_for_log = r;
      int code = body(r);
      std::fflush(nullptr);
      _exit(code);
    }
    pids[r] = pid;
  }
  bool ok = true;
  int remaining = world;
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  while (remaining > 0) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (int r = 0; r < world; ++r) {
        if (pids[r] != pid) continue;
        pids[r] = -1;
        --remaining;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) break;
        ok = false;
        if (WIFEXITED(status))
          std::fprintf(stderr, "rank %d exited with %d\n", r, WEXITSTATUS(status));
        else
          std::fprintf(stderr, "rank %d died of signal %d\n", r, WTERMSIG(status));
      }
      continue;
    }
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec >= deadline_s) {
      for (int r = 0; r < world; ++r) {
        if (pids[r] < 0) continue;
        std::fprintf(stderr, "rank %d still running after %d s: killed\n", r, deadline_s);
        kill(pids[r], SIGKILL);
        waitpid(pids[r], nullptr, 0);
      }
      return false;
    }
    usleep(5000);
  }
  return ok;
}

// A memfd holding `text`, for channel tests.
inline int memfd_with(const std::string& text) {
  int fd = memfd_create("test", MFD_CLOEXEC);
  if (fd < 0 || write(fd, text.data(), text.size()) != (ssize_t)text.size()) TEST_FAIL("memfd");
  return fd;
}

inline std::string read_fd(int fd) {
  char buf[256];
  ssize_t n = pread(fd, buf, sizeof buf, 0);
  return n < 0 ? std::string("<pread failed>") : std::string(buf, n);
}

#define RUN_RANKS(world, body)                                 \
  do {                                                         \
    if (!run_ranks((world), 30, (body))) {                     \
      std::fprintf(stderr, "FAILED: %s\n", #body);             \
      return 1;                                                \
    }                                                          \
  } while (0)
