// The nvshmem backend on a real NVSHMEM and GPU: UID bootstrap, heap allocations bound with
// import_pes, symmem's collectives and signals on them, teams, 1000 alloc/free cycles, finalize.
// World 1, and world SYMMEM_TEST_NVSHMEM_WORLD (e.g. 2: PEs share GPU 0 when there is one GPU).
// The library: SYMMEM_TEST_NVSHMEM_LIB (a path), else the loader's search path; not found: skipped.
#include <sys/mman.h>

#include <atomic>
#include <cmath>
#include <vector>

#include "cuda_test_util.h"

namespace {

// A barrier among the forked ranks (shared anonymous memory, made before fork). In the product the
// store plays this part: a peer's header is read only after every PE has allocated.
std::atomic<int>* g_arrived = nullptr;
void rank_barrier(int world, int* round) {
  ++*round;
  g_arrived->fetch_add(1);
  while (g_arrived->load() < world * *round) usleep(100);
}

size_t device_free_bytes() {
  size_t free_b = 0, total = 0;
  CUDA_OK(cudaMemGetInfo(&free_b, &total));
  return free_b;
}

symmem_buffer* bound_buffer(symmem_backend* be, uint64_t bytes, int rank, int world, int* round) {
  symmem_buffer* b = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, bytes, &b));
  rank_barrier(world, round);
  std::vector<int> pes(world);
  for (int r = 0; r < world; ++r) pes[r] = r;
  CHECK_OK(symmem_buffer_import_pes(b, rank, world, pes.data()));
  return b;
}

int rank_main(int rank, int world, int ngpu, int uid_pipe[2]) {
  g_rank_for_log = rank;
  int round = 0;
  char path[512];
  const int device = rank % ngpu;
  join_nvshmem_world(rank, world, device, uid_pipe, path, sizeof path);
  int ma = 0, mi = 0, pa = 0;
  CHECK_OK(symmem_nvshmem_version(&ma, &mi, &pa));
  if (rank == 0) std::printf("NVSHMEM %d.%d.%d from %s\n", ma, mi, pa, path);
  int pe = -1, n = 0;
  CHECK_OK(symmem_nvshmem_pe(&pe, &n));
  CHECK(pe == rank && n == world);
  symmem_backend* be = nullptr;
  if (ngpu == 1) {
    CHECK_STATUS(symmem_backend_open("nvshmem", device + 1, &be), SYMMEM_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("initialised on device");
  }
  CHECK_OK(symmem_backend_open("nvshmem", device, &be));
  symmem_backend_info info;
  CHECK_OK(symmem_backend_get_info(be, &info));
  CHECK(std::strcmp(info.name, "nvshmem") == 0);

  // All-reduce (both algorithms), all-gather, reduce-scatter of 4099 floats per rank against a
  // float64 reference; rank r's element i is (r + 1) * (i % 97) / 7.
  const uint64_t count = 4099;
  symmem_buffer* b = bound_buffer(be, count * 4 * world, rank, world, &round);
  int fd = -1;
  CHECK_STATUS(symmem_buffer_export_fd(b, &fd), SYMMEM_ERR_UNSUPPORTED);
  std::vector<float> in(count * world), got(count * world);
  auto value = [](int r, uint64_t i) { return float((r + 1) * double(i % 97) / 7.0); };
  void* out = nullptr;
  CHECK_OK(symmem_local_alloc(be, count * 4 * world, &out));
  for (symmem_algo algo : {SYMMEM_ALGO_ONE_SHOT, SYMMEM_ALGO_TWO_SHOT}) {
    for (uint64_t i = 0; i < count; ++i) in[i] = value(rank, i);
    CHECK_OK(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 0, in.data(), count * 4));
    CHECK_OK(symmem_barrier(b, 0, 20000));
    CHECK_OK(symmem_all_reduce(b, algo, SYMMEM_FLOAT32, SYMMEM_SUM, count, out, nullptr, 20000));
    CHECK_OK(symmem_stream_synchronize(b, nullptr));
    CHECK_OK(symmem_local_copy_out(be, out, 0, got.data(), count * 4));
    for (uint64_t i = 0; i < count; ++i) {
      double ref = 0;
      for (int r = 0; r < world; ++r) ref += double(value(r, i));
      if (std::fabs(got[i] - ref) > 1e-4 * (1 + std::fabs(ref)))
        TEST_FAIL("all_reduce algo %d: element %llu is %f, expected %f", int(algo),
                  (unsigned long long)i, got[i], ref);
    }
    CHECK_OK(symmem_barrier(b, 0, 20000));
  }
  for (uint64_t i = 0; i < count; ++i) in[i] = value(rank, i);
  CHECK_OK(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 0, in.data(), count * 4));
  CHECK_OK(symmem_barrier(b, 0, 20000));
  CHECK_OK(symmem_all_gather(b, SYMMEM_FLOAT32, count, out, nullptr, 20000));
  CHECK_OK(symmem_stream_synchronize(b, nullptr));
  CHECK_OK(symmem_local_copy_out(be, out, 0, got.data(), count * 4 * world));
  for (int r = 0; r < world; ++r)
    for (uint64_t i = 0; i < count; ++i)
      if (got[r * count + i] != value(r, i)) TEST_FAIL("all_gather: rank %d element %llu", r, (unsigned long long)i);
  // Reduce-scatter: rank r gets block r of the sum, the blocks being rank q's elements q*count/world...
  {
    const uint64_t per = count / world;  // elements per rank's block (the buffer holds world * per)
    for (int q = 0; q < world; ++q)
      for (uint64_t i = 0; i < per; ++i) in[q * per + i] = value(rank, q * per + i);
    CHECK_OK(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 0, in.data(), per * world * 4));
    CHECK_OK(symmem_barrier(b, 0, 20000));
    CHECK_OK(symmem_reduce_scatter(b, SYMMEM_FLOAT32, SYMMEM_SUM, per, out, nullptr, 20000));
    CHECK_OK(symmem_stream_synchronize(b, nullptr));
    CHECK_OK(symmem_local_copy_out(be, out, 0, got.data(), per * 4));
    for (uint64_t i = 0; i < per; ++i) {
      double ref = 0;
      for (int q = 0; q < world; ++q) ref += double(value(q, rank * per + i));
      if (std::fabs(got[i] - ref) > 1e-4 * (1 + std::fabs(ref)))
        TEST_FAIL("reduce_scatter: element %llu is %f, expected %f", (unsigned long long)i, got[i], ref);
    }
    CHECK_OK(symmem_barrier(b, 0, 20000));
  }
  // Signals between every pair, then a barrier: they wait (with a deadline) and pass.
  for (int p = 0; p < world; ++p) {
    if (p == rank) continue;
    CHECK_OK(symmem_put_signal(b, p, 3, 20000));
    CHECK_OK(symmem_wait_signal(b, p, 3, 20000));
  }
  CHECK_OK(symmem_barrier(b, 1, 20000));
  CHECK_OK(symmem_local_free(be, out));
  rank_barrier(world, &round);
  CHECK_OK(symmem_buffer_free(b));
  uint64_t used = 1;
  int live = 1;
  CHECK_OK(symmem_nvshmem_heap_usage(&used, &live));
  CHECK(used == 0 && live == 0);

  // A wait on a peer that never signals ends at its deadline, naming the peer.
  if (world > 1) {
    symmem_buffer* w = bound_buffer(be, 4096, rank, world, &round);
    if (rank == 0) {
      CHECK_STATUS(symmem_wait_signal(w, 1, 5, 300), SYMMEM_ERR_TIMEOUT);
      CHECK_ERROR_HAS("no signal from rank 1");
    }
    rank_barrier(world, &round);
    CHECK_OK(symmem_buffer_free(w));
  }

  // Several PEs on one GPU without MPS is NVSHMEM's "limited MPG" mode: it ends the process on
  // teams and on finalize, so those parts are left out (symmem's Java side refuses teams there and
  // leaves NVSHMEM unfinalized).
  const bool limited_mpg = world > ngpu;
  if (limited_mpg && rank == 0)
    std::printf("world %d on %d GPU(s): teams and finalize skipped (NVSHMEM's limited MPG)\n", world, ngpu);
  int team = -2;
  if (!limited_mpg) {
  CHECK_OK(symmem_nvshmem_team_split_strided(0, 1, world, &team));
  CHECK(team > 0);
  for (int t = 0; t < world; ++t) {
    int w = -1;
    CHECK_OK(symmem_nvshmem_team_translate_pe(team, t, &w));
    CHECK(w == t);
  }
  CHECK_OK(symmem_nvshmem_team_destroy(team));
  }

  // 1000 alloc/bind/free cycles leave the device's free memory where the first left it.
  symmem_buffer* first = bound_buffer(be, 1 << 20, rank, world, &round);
  CHECK_OK(symmem_buffer_free(first));
  const size_t before = device_free_bytes();
  for (int i = 0; i < 1000; ++i) {
    symmem_buffer* c = nullptr;
    CHECK_OK(symmem_buffer_alloc(be, (1 << 20) + 4096 * (i % 7), &c));
    CHECK_OK(symmem_buffer_free(c));
  }
  const size_t after = device_free_bytes();
  if (rank == 0)
    std::printf("1000 alloc/free cycles: device free %zu -> %zu bytes (delta %lld)\n", before, after,
                (long long)after - (long long)before);
  CHECK(after + (2u << 20) >= before);

  // Finalize is refused while a buffer lives, then leaves NVSHMEM.
  symmem_buffer* keep = bound_buffer(be, 4096, rank, world, &round);
  CHECK_STATUS(symmem_nvshmem_finalize(), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("still live");
  rank_barrier(world, &round);
  CHECK_OK(symmem_buffer_free(keep));
  CHECK_OK(symmem_backend_close(be));
  if (!limited_mpg) {
    CHECK_OK(symmem_nvshmem_finalize());
    CHECK(symmem_nvshmem_initialized() == 0);
  }
  if (rank == 0)
    std::printf("nvshmem world %d: all-reduce (both), all-gather, reduce-scatter, signals, deadline, %scycles: PASS\n", world,
                limited_mpg ? "" : "teams, finalize, ");
  return 0;
}

}  // namespace

int main() {
  const int ngpu = require_gpus("test_nvshmem_gpu", 1);
  // Is the library there at all? (Checked in a child: this process stays CUDA- and NVSHMEM-free.)
  std::fflush(nullptr);
  pid_t probe = fork();
  if (probe == 0) {
    const char* cand[] = {nvshmem_test_library()};
    _exit(symmem_nvshmem_load(cand, 1, nullptr, 0) == SYMMEM_OK ? 0 : 1);
  }
  int st = 0;
  waitpid(probe, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    std::printf("SKIPPED: NVSHMEM's host library not found at %s (set SYMMEM_TEST_NVSHMEM_LIB)\n",
                nvshmem_test_library());
    return kSkip;
  }
  g_arrived = static_cast<std::atomic<int>*>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  std::vector<int> worlds = {1};
  if (const char* w = std::getenv("SYMMEM_TEST_NVSHMEM_WORLD")) worlds.push_back(std::atoi(w));
  for (int world : worlds) {
    if (world < 1) continue;
    g_arrived->store(0);
    int pipe_fds[2];
    CHECK(pipe(pipe_fds) == 0);
    if (!run_ranks(world, 240, [&](int r) { return rank_main(r, world, ngpu, pipe_fds); })) {
      std::printf("nvshmem world %d: FAILED\n", world);
      return 1;
    }
    close(pipe_fds[0]);
    close(pipe_fds[1]);
  }
  return 0;
}
