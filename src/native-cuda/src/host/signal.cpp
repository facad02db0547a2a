#include "host/signal.h"

#include <algorithm>

#include "core/abort.h"

namespace symmem::host {

bool try_put(uint32_t* s) {
  // Plain load first: while the slot is busy, spinning on a read keeps the cache line shared
  // instead of bouncing it between cores with failed read-modify-writes.
  if (__atomic_load_n(s, __ATOMIC_RELAXED) != 0) return false;
  uint32_t expected = 0;
  return __atomic_compare_exchange_n(s, &expected, 1u, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

bool try_take(uint32_t* s) {
  if (__atomic_load_n(s, __ATOMIC_RELAXED) != 1) return false;
  uint32_t expected = 1;
  return __atomic_compare_exchange_n(s, &expected, 0u, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

namespace {

// Removes the entries whose operation succeeds now; true if any did.
template <class Op>
bool progress(PendingSet& set, Op op) {
  bool any = false;
  for (int i = 0; i < set.n;) {
    if (op(set.v[i].slot)) {
      set.v[i] = set.v[--set.n];
      any = true;
    } else {
      ++i;
    }
  }
  return any;
}

enum class Step { done, moved, idle };

// Repeats `step` until it is done, the process is aborted or the deadline passes. Barriers of a
// collective are short waits: yield for up to 200 us before the back-off sleeps (see Backoff);
// any progress starts the back-off again.
template <class F>
Driven poll(const Deadline& dl, F step) {
  Backoff backoff(200000);
  const uint64_t epoch = abort_epoch();
  for (;;) {
    const Step st = step();
    if (st == Step::done) return Driven::done;
    if (st == Step::moved) {
      backoff.reset();
      continue;
    }
    if (aborted_since(epoch)) return Driven::aborted;
    if (dl.expired()) return Driven::timed_out;
    backoff.pause();
  }
}

}  // namespace

std::string rank_list(const PendingSet& set) {
  int ranks[SYMMEM_MAX_WORLD];
  for (int i = 0; i < set.n; ++i) ranks[i] = set.v[i].rank;
  std::sort(ranks, ranks + set.n);
  std::string s;
  for (int i = 0; i < set.n; ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(ranks[i]);
  }
  return s;
}

Driven drive(PendingSet& puts, PendingSet& takes, const Deadline& dl) {
  // Puts and takes advance together: one slow peer never delays signalling the others, and a
  // timeout can name every rank that is missing, not just the first.
  return poll(dl, [&] {
    bool moved = progress(puts, try_put);
    moved |= progress(takes, try_take);
    return puts.empty() && takes.empty() ? Step::done : moved ? Step::moved : Step::idle;
  });
}

void arrive(uint32_t* own_slot, uint32_t epoch) { __atomic_store_n(own_slot, epoch, __ATOMIC_RELEASE); }

Driven wait_epochs(PendingSet& waiting, uint32_t epoch, const Deadline& dl) {
  auto reached = [epoch](uint32_t* s) {
    return static_cast<int32_t>(__atomic_load_n(s, __ATOMIC_ACQUIRE) - epoch) >= 0;
  };
  return poll(dl, [&] {
    const bool moved = progress(waiting, reached);
    return waiting.empty() ? Step::done : moved ? Step::moved : Step::idle;
  });
}

Driven wait_epochs_or_mark(PendingSet& waiting, uint32_t epoch, const PendingSet& marks,
                           int* marked_rank, const Deadline& dl) {
  auto reached = [epoch](uint32_t* s) {
    return static_cast<int32_t>(__atomic_load_n(s, __ATOMIC_ACQUIRE) - epoch) >= 0;
  };
  bool marked = false;
  const Driven d = poll(dl, [&] {
    for (int i = 0; i < marks.n; ++i) {
      if (__atomic_load_n(marks.v[i].slot, __ATOMIC_ACQUIRE) != 0) {
        *marked_rank = marks.v[i].rank;
        marked = true;
        return Step::done;
      }
    }
    const bool moved = progress(waiting, reached);
    return waiting.empty() ? Step::done : moved ? Step::moved : Step::idle;
  });
  return marked ? Driven::marked : d;
}

// Not poll(): a value may change on every look without ever meeting the wait (a producer that keeps
// adding past an == target), and poll looks at the deadline only on a turn without progress. Here a
// change only starts the back-off again; the abort and the deadline are read on every turn.
Driven wait_value(const uint64_t* value_slot, int cmp, uint64_t value, uint64_t* seen, const Deadline& dl) {
  Backoff backoff(200000);
  const uint64_t epoch = abort_epoch();
  for (;;) {
    const uint64_t now = __atomic_load_n(value_slot, __ATOMIC_ACQUIRE);
    if (cmp == SYMMEM_CMP_EQ ? now == value : now >= value) {
      *seen = now;
      return Driven::done;
    }
    if (now != *seen) {
      *seen = now;
      backoff.reset();
    }
    if (aborted_since(epoch)) return Driven::aborted;
    if (dl.expired()) return Driven::timed_out;
    backoff.pause();
  }
}

}  // namespace symmem::host
