#include "host/worker_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <system_error>

#include "core/abort.h"
#include "core/deadline.h"

namespace symmem::host {
namespace {

// A worker that has just finished a job polls for the next one this long before it blocks: the
// collectives run their jobs back to back (reduce, barrier, gather), and a wake-up through the
// kernel costs tens of microseconds.
constexpr int64_t kSpinNs = 200000;

constexpr uint64_t kIndexMask = 0xffffffffu;

void pin_to(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // Refused (a cgroup or container narrowed the CPUs since they were listed): run unpinned.
  (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

}  // namespace

WorkerPool::WorkerPool(int workers, const std::vector<int>& cpus) {
  for (int i = 0; i < workers; ++i) {
    const int cpu = cpus.empty() ? -1 : cpus[static_cast<size_t>(i) % cpus.size()];
    try {
      workers_.emplace_back(&WorkerPool::worker_main, this, cpu);
    } catch (const std::system_error&) {
      break;  // out of threads: the caller and the workers already started do the work
    }
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

uint64_t WorkerPool::work(const Job& job, uint32_t gen) {
  uint64_t done = 0;
  uint64_t t = ticket_.load(std::memory_order_acquire);
  for (;;) {
    if ((t >> 32) != gen || (t & kIndexMask) >= job.chunks) return done;
    if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire))
      continue;  // t now holds the current ticket
    job.task(job.ctx, t & kIndexMask);
    completed_.fetch_add(1, std::memory_order_release);
    ++done;
    t = ticket_.load(std::memory_order_acquire);
  }
}

void WorkerPool::worker_main(int cpu) {
  pin_to(cpu);
  uint32_t seen = 0;
  for (;;) {
    const int64_t spin_end = now_ns() + kSpinNs;
    while (gen_.load(std::memory_order_acquire) == seen && now_ns() < spin_end) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleeping_;
      // No deadline here: an idle worker waits for work or for the pool's destruction, both of
      // which notify; it is never what a collective waits on.
      wake_.wait(lock, [&] { return stop_ || gen_.load(std::memory_order_relaxed) != seen; });
      --sleeping_;
      if (stop_) return;
      seen = gen_.load(std::memory_order_relaxed);
      job = job_;
    }
    work(job, seen);
  }
}

bool WorkerPool::run(uint64_t chunks, Task task, const void* ctx, bool share) {
  const uint64_t epoch = abort_epoch();
  std::unique_lock<std::mutex> mine(run_mutex_, std::defer_lock);
  if (!share || workers_.empty() || chunks <= 1 || !mine.try_lock()) {
    // Alone: the same chunks in the same order on this thread.
    for (uint64_t i = 0; i < chunks; ++i) {
      if (aborted_since(epoch)) return false;
      task(ctx, i);
    }
    return true;
  }
  if (chunks > kIndexMask) chunks = kIndexMask;  // callers size chunks far below this
  Job job{task, ctx, chunks};
  uint32_t gen;
  bool notify;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = job;
    gen = gen_.load(std::memory_order_relaxed) + 1;
    completed_.store(0, std::memory_order_relaxed);
    ticket_.store(uint64_t{gen} << 32, std::memory_order_release);
    gen_.store(gen, std::memory_order_release);
    notify = sleeping_ > 0;
  }
  if (notify) wake_.notify_all();

  // Work alongside the workers, checking for an abort between chunks.
  bool cancelled = false;
  uint64_t t = ticket_.load(std::memory_order_acquire);
  for (;;) {
    if ((t & kIndexMask) >= chunks) break;
    if (aborted_since(epoch)) {
      // Nothing further is handed out; what was taken is waited for below.
      t = ticket_.exchange((uint64_t{gen} << 32) | chunks, std::memory_order_acq_rel);
      cancelled = true;
      break;
    }
    if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire))
      continue;
    task(ctx, t & kIndexMask);
    completed_.fetch_add(1, std::memory_order_release);
    t = ticket_.load(std::memory_order_acquire);
  }
  const uint64_t taken = std::min<uint64_t>(t & kIndexMask, chunks);
  // Chunks still running on workers: computation only, so this ends within a chunk's time.
  Backoff backoff;
  while (completed_.load(std::memory_order_acquire) < taken) backoff.pause();
  return !cancelled;
}

}  // namespace symmem::host
