// A rank's worker threads for the host collectives: started once (when the first buffer is
// imported), joined when the last owner lets go, never started or allocated per call.
//
// run() hands out the chunks of one job to the calling thread and the workers through one atomic
// ticket (generation << 32 | next chunk), so a worker still busy with an earlier job can never take
// a chunk of this one. The caller works too, then waits only for chunks already running: pure
// computation on mapped memory, bounded by the chunk size, never a wait on a peer. symmem_abort
// stops the hand-out of further chunks (run() then reports it), so an abort ends the call within
// one chunk; the peers' deadlines stay with the barriers around the job.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace symmem::host {

class WorkerPool {
 public:
  using Task = void (*)(const void* ctx, uint64_t chunk);

  // `workers` threads besides the caller; worker i is pinned to cpus[i % cpus.size()] (none when
  // cpus is empty or pinning is refused). Threads that cannot be started are simply not there.
  WorkerPool(int workers, const std::vector<int>& cpus);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Threads that run a job: the workers plus the caller.
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(ctx, i) for every i in [0, chunks), each exactly once, and returns true once all have
  // run; false if symmem_abort stopped it (some chunks then never ran). `share` false (a small job)
  // keeps it on the calling thread. One job at a time: a caller that finds the pool busy (another
  // thread's collective) runs its chunks alone.
  bool run(uint64_t chunks, Task task, const void* ctx, bool share = true);

 private:
  struct Job {
    Task task = nullptr;
    const void* ctx = nullptr;
    uint64_t chunks = 0;
  };
  void worker_main(int cpu);
  // Takes and runs chunks of generation `gen` until none is left; returns how many it ran.
  uint64_t work(const Job& job, uint32_t gen);

  std::mutex run_mutex_;  // one job at a time

  std::mutex mutex_;  // guards job_, gen_ writes, stop_
  std::condition_variable wake_;
  Job job_;
  std::atomic<uint32_t> gen_{0};
  bool stop_ = false;
  int sleeping_ = 0;  // workers blocked on wake_ (under mutex_)

  std::atomic<uint64_t> ticket_{0};     // gen << 32 | next chunk to hand out
  std::atomic<uint64_t> completed_{0};  // chunks of the current job that have finished
  std::vector<std::thread> workers_;
};

}  // namespace symmem::host
