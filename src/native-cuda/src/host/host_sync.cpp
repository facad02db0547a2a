// HostBuffer's signals and barriers, on top of the protocols in signal.h. Nothing here allocates
// unless a wait fails (the message).
#include <algorithm>
#include <cstdio>
#include <cstring>
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

symmem_status HostBuffer::signal_value(int peer, int channel, uint64_t value, int op) {
  uint64_t* s = value_slot(peer, channel, rank_);
  if (op == SYMMEM_SIGNAL_SET)
    __atomic_store_n(s, value, __ATOMIC_RELEASE);
  else
    __atomic_fetch_add(s, value, __ATOMIC_RELEASE);
  return SYMMEM_OK;
}

symmem_status HostBuffer::wait_signal_value(int peer, int channel, int cmp, uint64_t value, int timeout_ms) {
  Deadline dl(timeout_ms);
  const uint64_t* s = value_slot(rank_, channel, peer);
  uint64_t seen = __atomic_load_n(s, __ATOMIC_RELAXED);
  const Driven d = wait_value(s, cmp, value, &seen, dl);
  if (d == Driven::done) return SYMMEM_OK;
  const char* want = cmp == SYMMEM_CMP_EQ ? "==" : ">=";
  char what[160];
  std::snprintf(what, sizeof what, "wait_signal_value(peer %d, channel %d, %s %llu)", peer, channel, want,
                static_cast<unsigned long long>(value));
  if (d == Driven::aborted) return fail_aborted(what);
  return fail(SYMMEM_ERR_TIMEOUT, "%s: timed out after %d ms; rank %d's value is %llu", what, timeout_ms, peer,
              static_cast<unsigned long long>(seen));
}

symmem_status HostBuffer::collective_barrier(int timeout_ms) {
  if (out_of_step_) return refuse_out_of_step();
  const int early = marked_peer();
  const uint32_t epoch = ++epoch_;
  if (early >= 0) {
    go_out_of_step(epoch, early, peer_reason(early));
    return refuse_out_of_step();
  }
  Deadline dl(timeout_ms);
  PendingSet waiting, marks;
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    waiting.add(r, epoch_slot(r));
    marks.add(r, out_of_step_slot(r));
  }
  arrive(epoch_slot(rank_), epoch);
  int marked = -1;
  Driven d = wait_epochs_or_mark(waiting, epoch, marks, &marked, dl);
  if (d == Driven::done) return SYMMEM_OK;
  const std::string what = "barrier(channel " + std::to_string(kCollectiveChannel) + ")";
  if (d == Driven::marked) {
    // The call cannot pass any more (the peer will never arrive here): end it now, naming who gave up,
    // why (a peer that knew a rank was dead says so), and who was still missing, rather than at this
    // rank's own deadline.
    const std::string why = peer_reason(marked);
    go_out_of_step(epoch, marked, why);
    return fail(why.rfind("aborted", 0) == 0 ? SYMMEM_ERR_ABORTED : SYMMEM_ERR_TIMEOUT,
                "%s: rank %d gave up this collective (%s) while this rank was waiting for rank(s) %s; "
                "this buffer's collectives are out of step on every rank from now on: free it (a pool "
                "block: close its pool) and allocate a new one",
                what.c_str(), marked, why.c_str(), rank_list(waiting).c_str());
  }
  if (d == Driven::aborted) {
    go_out_of_step(epoch, rank_, "aborted: " + abort_reason());
    return fail_aborted(what + " waiting for rank(s) " + rank_list(waiting));
  }
  std::string msg = what + ": timed out after " + std::to_string(timeout_ms) +
                    " ms waiting for rank(s) " + rank_list(waiting);
  go_out_of_step(epoch, rank_, "its deadline passed: " + msg);
  msg += "; this buffer's collectives are out of step on every rank from now on: free it (a pool "
         "block: close its pool) and allocate a new one";
  return fail(SYMMEM_ERR_TIMEOUT, "%s", msg.c_str());
}

void HostBuffer::go_out_of_step(uint32_t epoch, int cause_rank, const std::string& why) {
  if (out_of_step_) return;
  out_of_step_ = true;
  const std::string cause = cause_rank == rank_ || !why.empty() ? why : peer_reason(cause_rank);
  out_of_step_why_ = "rank " + std::to_string(cause_rank) + " gave up a collective of this buffer (" + cause +
                     "), so the ranks no longer agree on which call is which";
  // The reason first, then the mark (release): a peer that sees the mark reads the whole reason.
  char* mine = reason_slot(rank_);
  const size_t n = std::min(cause.size(), size_t{kReasonBytes} - 1);
  std::memcpy(mine, cause.data(), n);
  mine[n] = '\0';
  __atomic_store_n(out_of_step_slot(rank_), epoch == 0 ? 1u : epoch, __ATOMIC_RELEASE);
}

std::string HostBuffer::peer_reason(int r) const {
  if (__atomic_load_n(out_of_step_slot(r), __ATOMIC_ACQUIRE) == 0) return "its deadline passed or it was aborted";
  const char* text = reason_slot(r);
  return std::string(text, strnlen(text, kReasonBytes - 1));
}

symmem_status HostBuffer::refuse_out_of_step() const {
  return fail(SYMMEM_ERR_STATE,
              "this buffer's collectives are out of step: %s; every collective on it is refused on "
              "every rank from now on: free it (a pool block: close its pool) and allocate a new one",
              out_of_step_why_.c_str());
}

int HostBuffer::marked_peer() const {
  for (int r = 0; r < world_; ++r)
    if (r != rank_ && __atomic_load_n(out_of_step_slot(r), __ATOMIC_ACQUIRE) != 0) return r;
  return -1;
}

}  // namespace symmem::host
