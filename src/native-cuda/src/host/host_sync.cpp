// HostBuffer's signals and barriers, on top of the protocols in signal.h. Nothing here allocates
// unless a wait fails (the message).
#include <string>

#include "core/abort.h"
#include "core/status.h"
#include "host/host_buffer.h"
#include "host/signal.h"

namespace symmem::host {

symmem_status HostBuffer::put_signal(int peer, int channel, int timeout_ms) {
  Deadline dl(timeout_ms);
  PendingSet puts, takes;
  puts.add(peer, slot(pad(peer), channel, rank_));
  Driven d = drive(puts, takes, dl);
  if (d == Driven::done) return SYMMEM_OK;
  if (d == Driven::aborted)
    return fail_aborted("put_signal(peer " + std::to_string(peer) + ", channel " + std::to_string(channel) +
                        ")");
  return fail(SYMMEM_ERR_TIMEOUT,
              "put_signal(peer %d, channel %d): timed out after %d ms; rank %d has not consumed "
              "the previous signal",
              peer, channel, timeout_ms, peer);
}

symmem_status HostBuffer::wait_signal(int peer, int channel, int timeout_ms) {
  Deadline dl(timeout_ms);
  PendingSet puts, takes;
  takes.add(peer, slot(pad(rank_), channel, peer));
  Driven d = drive(puts, takes, dl);
  if (d == Driven::done) return SYMMEM_OK;
  if (d == Driven::aborted)
    return fail_aborted("wait_signal(peer " + std::to_string(peer) + ", channel " +
                        std::to_string(channel) + ")");
  return fail(SYMMEM_ERR_TIMEOUT,
              "wait_signal(peer %d, channel %d): timed out after %d ms; no signal from rank %d",
              peer, channel, timeout_ms, peer);
}

symmem_status HostBuffer::barrier(int channel, int timeout_ms) {
  Deadline dl(timeout_ms);
  PendingSet puts, takes;
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    puts.add(r, slot(pad(r), channel, rank_));    // "I have arrived", on r's pad
    takes.add(r, slot(pad(rank_), channel, r));   // "r has arrived", on my pad
  }
  Driven d = drive(puts, takes, dl);
  if (d == Driven::done) return SYMMEM_OK;
  if (d == Driven::aborted) {
    std::string what = "barrier(channel " + std::to_string(channel) + ")";
    if (!takes.empty()) what += " waiting for rank(s) " + rank_list(takes);
    return fail_aborted(what);
  }
  std::string msg = "barrier(channel " + std::to_string(channel) + "): timed out after " +
                    std::to_string(timeout_ms) + " ms";
  if (!takes.empty()) msg += " waiting for rank(s) " + rank_list(takes);
  if (!puts.empty())
    msg += (takes.empty() ? "; " : "; also ") + std::string("rank(s) ") + rank_list(puts) +
           " did not consume this rank's previous signal";
  return fail(SYMMEM_ERR_TIMEOUT, "%s", msg.c_str());
}

symmem_status HostBuffer::collective_barrier(int timeout_ms) {
  Deadline dl(timeout_ms);
  const uint32_t epoch = ++epoch_;
  PendingSet waiting;
  for (int r = 0; r < world_; ++r)
    if (r != rank_) waiting.add(r, epoch_slot(r));
  arrive(epoch_slot(rank_), epoch);
  Driven d = wait_epochs(waiting, epoch, dl);
  if (d == Driven::done) return SYMMEM_OK;
  const std::string what = "barrier(channel " + std::to_string(kCollectiveChannel) + ")";
  if (d == Driven::aborted) return fail_aborted(what + " waiting for rank(s) " + rank_list(waiting));
  return fail(SYMMEM_ERR_TIMEOUT, "%s: timed out after %d ms waiting for rank(s) %s", what.c_str(),
              timeout_ms, rank_list(waiting).c_str());
}

}  // namespace symmem::host
