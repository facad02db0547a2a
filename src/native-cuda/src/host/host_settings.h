// What the host backend reads from the environment (once, when it is opened; a bad value fails
// symmem_backend_open with one line naming the variable), and how a rank's threads are laid out
// over the CPUs this process may use.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/abi.h"
#include "host/worker_pool.h"

namespace symmem::host {

struct HostSettings {
  int threads = 0;  // SYMMEM_HOST_THREADS: threads per rank, caller included; 0 = from the CPUs
  // SYMMEM_HOST_TWO_SHOT_MIN_BYTES: AUTO all-reduces of at least this many bytes run two-shot.
  uint64_t two_shot_min_bytes = 0;
  // SYMMEM_HOST_PARALLEL_MIN_BYTES: a step that reads at least this many bytes is shared with the
  // workers; smaller ones the calling thread does alone.
  uint64_t parallel_min_bytes = 0;
  int local_rank = -1, local_world = 0;  // LOCAL_RANK / LOCAL_WORLD_SIZE when both are valid
};
symmem_status read_host_settings(HostSettings* out);

// The measured default of two_shot_min_bytes (docs/host-backend.md).
constexpr uint64_t kDefaultTwoShotMinBytes = uint64_t{64} << 10;
// The measured default of parallel_min_bytes (docs/host-backend.md).
constexpr uint64_t kDefaultParallelMinBytes = uint64_t{4} << 20;

struct ThreadPlan {
  int threads = 1;        // caller included
  std::vector<int> cpus;  // the workers' CPUs (empty: unpinned)
};
// threads: the setting, else the CPUs of sched_getaffinity divided by the local ranks (at least 1).
// The allowed CPUs are cut into local_world equal runs and rank local_rank's workers are pinned
// to its run, leaving the run's first CPU to the (unpinned) calling thread; with fewer CPUs than
// ranks, or more threads than the run has CPUs, nothing is pinned.
ThreadPlan plan_threads(int setting, int local_rank, int local_world);

// The pool shared by a backend and its buffers: started at the first import (then the rank and
// world are known), joined when the backend and every buffer are gone.
class PoolHolder {
 public:
  explicit PoolHolder(const HostSettings& s) : settings_(s) {}
  const HostSettings& settings() const { return settings_; }
  // The pool, started on first use with this rank/world unless LOCAL_RANK/LOCAL_WORLD_SIZE say.
  WorkerPool& pool(int rank, int world);

 private:
  HostSettings settings_;
  std::once_flag started_;
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace symmem::host
