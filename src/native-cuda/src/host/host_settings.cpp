#include "host/host_settings.h"

#include <sched.h>

#include <cerrno>
#include <cstdlib>

#include "core/status.h"
#include "core/validate.h"

namespace symmem::host {
namespace {

constexpr int kMaxThreads = 1024;

// A whole decimal number in [lo, hi], nothing else (no sign, unit or trailing text).
bool parse_whole(const char* v, uint64_t lo, uint64_t hi, uint64_t* out) {
  if (v[0] < '0' || v[0] > '9') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 10);
  if (errno != 0 || *end != '\0' || x < lo || x > hi) return false;
  *out = x;
  return true;
}

// The launcher's (or torchrun's) view of this machine, used only when it is consistent.
void read_local_ranks(HostSettings* s) {
  const char* r = std::getenv("LOCAL_RANK");
  const char* w = std::getenv("LOCAL_WORLD_SIZE");
  uint64_t rank, world;
  if (r == nullptr || w == nullptr || !parse_whole(w, 1, SYMMEM_MAX_WORLD, &world) ||
      !parse_whole(r, 0, world - 1, &rank))
    return;
  s->local_rank = static_cast<int>(rank);
  s->local_world = static_cast<int>(world);
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// A byte count from `name`, or `fallback` when unset or empty.
symmem_status read_bytes(const char* name, uint64_t fallback, uint64_t* out) {
  *out = fallback;
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return SYMMEM_OK;
  if (!parse_whole(v, 0, UINT64_MAX, out))
    return fail(SYMMEM_ERR_INVALID_ARGUMENT, "%s='%s' is not a whole number of bytes", name, v);
  return SYMMEM_OK;
}

}  // namespace

symmem_status read_host_settings(HostSettings* out) {
  HostSettings s;
  uint64_t x;
  if (const char* v = std::getenv("SYMMEM_HOST_THREADS"); v != nullptr && *v != '\0') {
    if (!parse_whole(v, 1, kMaxThreads, &x))
      return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                  "SYMMEM_HOST_THREADS='%s' is not a whole number of threads per rank in 1..%d "
                  "(unset: the CPUs this process may use divided by the local ranks)",
                  v, kMaxThreads);
    s.threads = static_cast<int>(x);
  }
  SYMMEM_TRY(read_bytes("SYMMEM_HOST_TWO_SHOT_MIN_BYTES", kDefaultTwoShotMinBytes,
                        &s.two_shot_min_bytes));
  SYMMEM_TRY(read_bytes("SYMMEM_HOST_PARALLEL_MIN_BYTES", kDefaultParallelMinBytes,
                        &s.parallel_min_bytes));
  read_local_ranks(&s);
  *out = s;
  return SYMMEM_OK;
}

ThreadPlan plan_threads(int setting, int local_rank, int local_world) {
  ThreadPlan plan;
  const std::vector<int> cpus = allowed_cpus();
  const int per_rank = local_world > 0 ? static_cast<int>(cpus.size()) / local_world : 0;
  plan.threads = setting > 0 ? setting : (per_rank > 0 ? per_rank : 1);
  // More threads than the rank's CPUs (the setting asked for it): the scheduler places them.
  if (per_rank >= 2 && plan.threads <= per_rank && local_rank >= 0 && local_rank < local_world) {
    // The rank's run without its first CPU (the caller's); a single-CPU run pins nothing.
    for (int i = 1; i < per_rank; ++i) plan.cpus.push_back(cpus[local_rank * per_rank + i]);
  }
  return plan;
}

WorkerPool& PoolHolder::pool(int rank, int world) {
  std::call_once(started_, [&] {
    const bool local_known = settings_.local_world > 0;
    const ThreadPlan plan = plan_threads(settings_.threads, local_known ? settings_.local_rank : rank,
                                         local_known ? settings_.local_world : world);
    pool_ = std::make_unique<WorkerPool>(plan.threads - 1, plan.cpus);
  });
  return *pool_;
}

}  // namespace symmem::host
