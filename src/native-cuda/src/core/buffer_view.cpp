// Views of symmetric buffers (core/buffer_view.h) and their C entry point.
#include "core/buffer_view.h"

#include "core/validate.h"

namespace symmem {

BufferView::BufferView(symmem_buffer* segment, uint64_t offset, uint64_t size)
    : segment_(segment), offset_(offset), size_(size) {
  segment_->live_views.fetch_add(1, std::memory_order_acq_rel);
}

BufferView::~BufferView() { segment_->live_views.fetch_sub(1, std::memory_order_acq_rel); }

symmem_status BufferView::export_fd(int*) {
  return fail(SYMMEM_ERR_STATE, "a view (offset %llu, %llu bytes) shares its segment's memory: "
              "export the segment, not the view",
              static_cast<unsigned long long>(offset_), static_cast<unsigned long long>(size_));
}

symmem_status BufferView::import(int, int, const int*) {
  return fail(SYMMEM_ERR_STATE, "a view is born imported: it uses its segment's peer mappings");
}

void* BufferView::ptr(int r) {
  char* p = static_cast<char*>(segment_->ptr(r));
  return p == nullptr ? nullptr : p + offset_;
}

template <class Call>
symmem_status BufferView::on_shared_pad(const char* what, Call&& call) {
  bool expected = false;
  if (!segment_->view_call_busy.compare_exchange_strong(expected, true,
                                                        std::memory_order_acq_rel))
    return fail(SYMMEM_ERR_STATE,
                "%s on the block at offset %llu: another thread is using a block of the same "
                "segment right now; blocks of one segment share its signal pad, so issue their "
                "signals and collectives from one thread at a time, in the same order on every rank",
                what, static_cast<unsigned long long>(offset_));
  symmem_status s = call();
  segment_->view_call_busy.store(false, std::memory_order_release);
  return s;
}

symmem_status BufferView::put_signal(int peer, int channel, int timeout_ms) {
  return on_shared_pad("put_signal", [&] { return segment_->put_signal(peer, channel, timeout_ms); });
}
symmem_status BufferView::wait_signal(int peer, int channel, int timeout_ms) {
  return on_shared_pad("wait_signal",
                       [&] { return segment_->wait_signal(peer, channel, timeout_ms); });
}
symmem_status BufferView::barrier(int channel, int timeout_ms) {
  return on_shared_pad("barrier", [&] { return segment_->barrier(channel, timeout_ms); });
}
symmem_status BufferView::put_signal_on_stream(int peer, int channel, void* s, int timeout_ms) {
  return on_shared_pad("put_signal_on_stream", [&] {
    return segment_->put_signal_on_stream(peer, channel, s, timeout_ms);
  });
}
symmem_status BufferView::wait_signal_on_stream(int peer, int channel, void* s, int timeout_ms) {
  return on_shared_pad("wait_signal_on_stream", [&] {
    return segment_->wait_signal_on_stream(peer, channel, s, timeout_ms);
  });
}
symmem_status BufferView::barrier_on_stream(int channel, void* s, int timeout_ms) {
  return on_shared_pad("barrier_on_stream",
                       [&] { return segment_->barrier_on_stream(channel, s, timeout_ms); });
}
symmem_status BufferView::signal_value(int peer, int channel, uint64_t value, int op) {
  return on_shared_pad("signal_value", [&] { return segment_->signal_value(peer, channel, value, op); });
}
symmem_status BufferView::wait_signal_value(int peer, int channel, int cmp, uint64_t value, int timeout_ms) {
  return on_shared_pad("wait_signal_value",
                       [&] { return segment_->wait_signal_value(peer, channel, cmp, value, timeout_ms); });
}
symmem_status BufferView::signal_value_on_stream(int peer, int channel, uint64_t value, int op, void* s) {
  return on_shared_pad("signal_value_on_stream",
                       [&] { return segment_->signal_value_on_stream(peer, channel, value, op, s); });
}
symmem_status BufferView::wait_signal_value_on_stream(int peer, int channel, int cmp, uint64_t value, void* s,
                                                      int timeout_ms) {
  return on_shared_pad("wait_signal_value_on_stream", [&] {
    return segment_->wait_signal_value_on_stream(peer, channel, cmp, value, s, timeout_ms);
  });
}
symmem_status BufferView::memset32(int r, uint64_t offset, uint32_t value, uint64_t count,
                                   void* stream) {
  return segment_->memset32(r, offset_ + offset, value, count, stream);
}
symmem_status BufferView::write_value32(int r, uint64_t offset, uint32_t value, void* stream) {
  return segment_->write_value32(r, offset_ + offset, value, stream);
}
symmem_status BufferView::all_reduce(uint64_t at, int algo, int dtype, int op, uint64_t count,
                                     void* out, void* stream, int timeout_ms) {
  return on_shared_pad("all_reduce", [&] {
    return segment_->all_reduce(offset_ + at, algo, dtype, op, count, out, stream, timeout_ms);
  });
}
symmem_status BufferView::all_gather(uint64_t at, int dtype, uint64_t count, void* out,
                                     void* stream, int timeout_ms) {
  return on_shared_pad("all_gather", [&] {
    return segment_->all_gather(offset_ + at, dtype, count, out, stream, timeout_ms);
  });
}
symmem_status BufferView::reduce_scatter(uint64_t at, int dtype, int op, uint64_t count, void* out,
                                         void* stream, int timeout_ms) {
  return on_shared_pad("reduce_scatter", [&] {
    return segment_->reduce_scatter(offset_ + at, dtype, op, count, out, stream, timeout_ms);
  });
}
symmem_status BufferView::broadcast(uint64_t at, int dtype, uint64_t count, int root, void* out,
                                    void* stream, int timeout_ms) {
  return on_shared_pad("broadcast", [&] {
    return segment_->broadcast(offset_ + at, dtype, count, root, out, stream, timeout_ms);
  });
}
symmem_status BufferView::all_to_all(uint64_t at, int dtype, uint64_t count, void* out,
                                     void* stream, int timeout_ms) {
  return on_shared_pad("all_to_all", [&] {
    return segment_->all_to_all(offset_ + at, dtype, count, out, stream, timeout_ms);
  });
}
symmem_status BufferView::all_to_all_v(uint64_t at, int dtype, uint64_t splits_at, void* out,
                                       uint64_t out_capacity, int64_t* out_splits, void* stream,
                                       int timeout_ms) {
  return on_shared_pad("all_to_all_v", [&] {
    return segment_->all_to_all_v(offset_ + at, dtype, splits_at, out, out_capacity, out_splits,
                                  stream, timeout_ms);
  });
}
uint64_t BufferView::one_shot_in_place_max_bytes() {
  const uint64_t m = segment_->one_shot_in_place_max_bytes();
  return m < size_ ? m : size_;
}
symmem_status BufferView::copy_in(int r, uint64_t offset, const void* src, uint64_t bytes) {
  return segment_->copy_in(r, offset_ + offset, src, bytes);
}
symmem_status BufferView::copy_out(int r, uint64_t offset, void* dst, uint64_t bytes) {
  return segment_->copy_out(r, offset_ + offset, dst, bytes);
}

}  // namespace symmem

using namespace symmem;

extern "C" {

symmem_status symmem_buffer_view(symmem_buffer* segment, uint64_t offset, uint64_t size,
                                 symmem_buffer** out) {
  return guarded("symmem_buffer_view", [&]() -> symmem_status {
    SYMMEM_REQUIRE_NOT_NULL(segment);
    SYMMEM_REQUIRE_NOT_NULL(out);
    *out = nullptr;
    if (BufferView::is_view(segment))
      return fail(SYMMEM_ERR_INVALID_ARGUMENT,
                  "symmem_buffer_view: the segment is itself a view; take views of the whole "
                  "buffer (offsets add up)");
    if (!segment->imported())
      return fail(SYMMEM_ERR_STATE,
                  "symmem_buffer_view: the segment is not imported yet (a view borrows its peers' "
                  "mappings)");
    SYMMEM_REQUIRE(size > 0, "symmem_buffer_view: size 0: a view must not be empty");
    SYMMEM_REQUIRE(offset % SYMMEM_VIEW_ALIGNMENT == 0,
                   "symmem_buffer_view: offset %llu is not a multiple of %d (the collectives' "
                   "vector width)",
                   static_cast<unsigned long long>(offset), SYMMEM_VIEW_ALIGNMENT);
    SYMMEM_REQUIRE(offset <= segment->size() && size <= segment->size() - offset,
                   "symmem_buffer_view: offset %llu + size %llu exceed the segment's %llu bytes",
                   static_cast<unsigned long long>(offset), static_cast<unsigned long long>(size),
                   static_cast<unsigned long long>(segment->size()));
    *out = new BufferView(segment, offset, size);
    return SYMMEM_OK;
  });
}

int symmem_buffer_live_views(symmem_buffer* buffer) {
  if (buffer == nullptr) {
    fail(SYMMEM_ERR_INVALID_ARGUMENT, "symmem_buffer_live_views: buffer is NULL");
    return -1;
  }
  return buffer->live_views.load(std::memory_order_acquire);
}

}  // extern "C"
