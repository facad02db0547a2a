// Signal-pad protocol on host-visible memory (same semantics as PyTorch symm_mem):
// slot(pad, channel, rank) = pad[channel * SYMMEM_MAX_WORLD + rank] holds 1 while a signal from
// `rank` is pending, 0 once consumed. A sender waits for 0 before setting 1, so signals are never
// lost or merged; a receiver waits for 1 and resets it to 0.
#pragma once
#include <cstdint>
#include <vector>

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
enum class Driven { done, timed_out, aborted };
Driven drive(std::vector<PendingSlot>& puts, std::vector<PendingSlot>& takes, const Deadline& dl);

}  // namespace symmem::host
