#include "host/host_settings.h"

#include <sched.h>

#include <cstdlib>

#include "core/status.h"
#include "core/tunables.h"
#include "core/validate.h"

namespace symmem::host {
namespace {

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

}  // namespace

symmem_status read_host_settings(HostSettings* out) {
  HostSettings s;
  uint64_t x;
  bool set;
  SYMMEM_TRY(read_tunable(Tunable::kHostThreads, &x, &set));
  if (set) s.threads = static_cast<int>(x);
  s.two_shot_min_bytes = tunable_default(Tunable::kHostTwoShotMinBytes);
  SYMMEM_TRY(read_tunable(Tunable::kHostTwoShotMinBytes, &s.two_shot_min_bytes, &set));
  s.parallel_min_bytes = tunable_default(Tunable::kHostParallelMinBytes);
  SYMMEM_TRY(read_tunable(Tunable::kHostParallelMinBytes, &s.parallel_min_bytes, &set));
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
