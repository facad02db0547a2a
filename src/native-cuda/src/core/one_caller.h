// One caller at a time per buffer. A buffer's signals, barriers and collectives are one ordered
// sequence that every rank issues alike (barrier epochs counted on the host, the host backend's
// scratch, the device buffers' order across streams). Two threads issuing on one buffer at once
// would interleave that sequence differently on each rank: the second is refused at once, naming
// the rule, instead of pairing barriers wrongly or waiting for its deadline. Different buffers
// never meet here. Views are guarded by their segment (BufferView::on_shared_pad).
#pragma once
#include <atomic>

#include "core/backend.h"
#include "core/buffer_view.h"
#include "core/status.h"

namespace symmem {

template <class Call>
symmem_status one_caller(symmem_buffer* buffer, const char* what, Call&& call) {
  if (BufferView::is_view(buffer)) return call();
  bool expected = false;
  if (!buffer->call_busy.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
    const char* inside = buffer->call_what.load(std::memory_order_acquire);
    return fail(SYMMEM_ERR_STATE,
                "%s: another thread is issuing a signal, barrier or collective on this buffer "
                "right now (%s); the calls on one buffer form one sequence that every rank issues "
                "in the same order, so issue them from one thread (or give each thread a buffer "
                "of its own)",
                what, inside != nullptr ? inside : "a call just starting");
  }
  buffer->call_what.store(what, std::memory_order_release);
  // Released on every way out: a call that throws (std::bad_alloc) must not leave the buffer refusing
  // every later call for a reason that is no longer true.
  struct Release {
    symmem_buffer* b;
    ~Release() {
      b->call_what.store(nullptr, std::memory_order_release);
      b->call_busy.store(false, std::memory_order_release);
    }
  } release{buffer};
  return call();
}

}  // namespace symmem
