// Signal-pad protocol on host-visible memory (same semantics as PyTorch symm_mem):
// slot(pad, channel, rank) = pad[channel * SYMMEM_MAX_WORLD + rank] holds 1 while a signal from
// `rank` is pending, 0 once consumed. A sender waits for 0 before setting 1, so signals are never
// lost or merged; a receiver waits for 1 and resets it to 0.
#pragma once
#include <cstdint>
#include <string>

#include "core/abi.h"
#include "core/deadline.h"

namespace symmem::host {

inline uint32_t* slot(uint32_t* pad, int channel, int rank) {
  return pad + channel * SYMMEM_MAX_WORLD + rank;
}

// One attempt each; true on success. put: 0 -> 1 with release (the data written before it is
// visible to whoever consumes the signal). take: 1 -> 0 with acquire (the sender's data is visible
// after it).
bool try_put(uint32_t* s);
bool try_take(uint32_t* s);

// Waits for every put and take until done, the deadline, or symmem_abort. On return, `puts` and
// `takes` hold the ranks still pending (empty on success).
// puts: (rank, slot on that rank's pad); takes: (rank, slot on the own pad).
struct PendingSlot {
  int rank;
  uint32_t* slot;
};
// At most one entry per rank; fixed size, so that a barrier allocates nothing.
struct PendingSet {
  PendingSlot v[SYMMEM_MAX_WORLD];
  int n = 0;
  void add(int rank, uint32_t* s) { v[n++] = {rank, s}; }
  bool empty() const { return n == 0; }
};
enum class Driven { done, timed_out, aborted, marked };
Driven drive(PendingSet& puts, PendingSet& takes, const Deadline& dl);

// The collectives' barrier (the internal channel): every rank counts the collective barriers it has
// reached on a buffer and publishes the count (its epoch) in its own slot, which only it writes;
// barrier e is passed once every peer's slot shows e or more. A store per arrival and a read per
// peer: no read-modify-write, and no cache line written by two ranks (the put/take protocol above
// has every peer swap a slot in the one line of the pad that holds the channel). No rank gets more
// than one barrier ahead of another (it cannot pass e + 1 before every peer has reached it), so
// "e or more" never confuses two barriers, and the counts may wrap.
// arrive: publishes `epoch` with release (what this rank wrote before is visible to a peer that
// sees it). wait_epochs: waits, until the deadline or symmem_abort, for every slot in `waiting` to
// reach `epoch` (acquire); on return `waiting` holds the ranks still missing.
void arrive(uint32_t* own_slot, uint32_t epoch);
Driven wait_epochs(PendingSet& waiting, uint32_t epoch, const Deadline& dl);
// As wait_epochs, and ends with Driven::marked as soon as a slot of `marks` is non-zero (a peer
// out of step); *marked_rank is then that peer.
Driven wait_epochs_or_mark(PendingSet& waiting, uint32_t epoch, const PendingSet& marks,
                           int* marked_rank, const Deadline& dl);

// Value signals: waits, until the deadline or symmem_abort, for *value_slot to equal `value`
// (SYMMEM_CMP_EQ) or reach it (SYMMEM_CMP_GE), with acquire; *seen is the value last read.
Driven wait_value(const uint64_t* value_slot, int cmp, uint64_t value, uint64_t* seen, const Deadline& dl);

// The ranks of `set`, ascending, as "1, 2" (for messages).
std::string rank_list(const PendingSet& set);

}  // namespace symmem::host
