// Process-wide abort (symmem_abort): when a peer is known to be dead, every wait of this process
// ends at once instead of at its deadline. Host waits read the flag; device kernels read a pinned
// host word that each cuda backend registers here, so that symmem_abort reaches the GPU too.
#pragma once
#include <cstdint>
#include <string>

#include "core/abi.h"

namespace symmem {

// Cheap enough for every turn of a spin loop (one relaxed load).
bool aborted();
// Aborts are counted. A wait notes the count when it starts and is cut short by any abort after that,
// also one that symmem_abort_reset has undone before the wait looked again: a process that forms its
// world again resets the abort while a wait of the old world may still be asleep in its back-off.
uint64_t abort_epoch();
bool aborted_since(uint64_t epoch);
// The reason given to the latest symmem_abort ("" before the first); kept across a reset, for the
// waits that meet that abort late.
std::string abort_reason();
// fail(SYMMEM_ERR_ABORTED, "<what>: aborted: <reason>"); `what` names the wait that was cut short.
symmem_status fail_aborted(const std::string& what);

// SYMMEM_OK, or (once aborted) fail_aborted("<call>, not started"): a wait that would start in an
// aborted process is refused before it touches a signal pad or launches a kernel, so that after an
// abort no wait succeeds by chance, whether or not its peers happen to be there.
symmem_status refuse_if_aborted(const char* call);

// A word (host memory that a device can read) set to 1 by symmem_abort and to 0 by reset; it is
// set to the current state when registered.
void register_abort_word(volatile uint32_t* word);
void unregister_abort_word(volatile uint32_t* word);

// A function that symmem_abort calls (once per abort, with the reason) after it has set the flag:
// for things that do not poll the flag, such as NCCL communicators that no thread is waiting on.
// It runs under the abort lock, so it must not call abort_reason(), fail_aborted() or symmem_abort,
// and must not block for long. Registering the same hook twice registers it once.
using AbortHook = void (*)(const char* reason);
void register_abort_hook(AbortHook hook);

}  // namespace symmem
