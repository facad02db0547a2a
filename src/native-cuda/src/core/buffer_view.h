// A view: the window [offset, offset + size) of an imported symmetric buffer, its "segment". It is
// how a memory pool hands out blocks without a rendezvous each: rank r's block is rank r's segment
// mapping shifted by the offset, which the segment's one rendezvous already made. Everything is
// the segment's: mappings, signal pad, stream, error record, epochs; the view only shifts offsets,
// so it works alike on every backend (host, cuda, nvshmem and any DeviceBuffer subclass).
#pragma once
#include <cstdint>

#include "core/backend.h"

namespace symmem {

class BufferView final : public symmem_buffer {
 public:
  // segment: imported, not a view; [offset, offset + size) inside it (checked by the C entry).
  BufferView(symmem_buffer* segment, uint64_t offset, uint64_t size);
  ~BufferView() override;

  static bool is_view(const symmem_buffer* b) { return b->is_view(); }
  bool is_view() const override { return true; }
  uint64_t offset() const { return offset_; }

  symmem_status export_fd(int* out_fd) override;
  symmem_status import(int rank, int world, const int* fds) override;

  uint64_t size() const override { return size_; }
  int rank() const override { return segment_->rank(); }
  int world() const override { return segment_->world(); }
  void* ptr(int r) override;
  void* signal_pad(int r) override { return segment_->signal_pad(r); }
  bool overlaps(const void* p, size_t n) const override { return segment_->overlaps(p, n); }

  symmem_status put_signal(int peer, int channel, int timeout_ms) override;
  symmem_status wait_signal(int peer, int channel, int timeout_ms) override;
  symmem_status barrier(int channel, int timeout_ms) override;
  symmem_status put_signal_on_stream(int peer, int channel, void* s, int timeout_ms) override;
  symmem_status wait_signal_on_stream(int peer, int channel, void* s, int timeout_ms) override;
  symmem_status barrier_on_stream(int channel, void* s, int timeout_ms) override;
  symmem_status signal_value(int peer, int channel, uint64_t value, int op) override;
  symmem_status wait_signal_value(int peer, int channel, int cmp, uint64_t value, int timeout_ms) override;
  symmem_status signal_value_on_stream(int peer, int channel, uint64_t value, int op, void* s) override;
  symmem_status wait_signal_value_on_stream(int peer, int channel, int cmp, uint64_t value, void* s,
                                            int timeout_ms) override;
  symmem_status memset32(int r, uint64_t offset, uint32_t value, uint64_t count,
                         void* stream) override;
  symmem_status write_value32(int r, uint64_t offset, uint32_t value, void* stream) override;
  symmem_status synchronize(void* s) override { return segment_->synchronize(s); }
  symmem_status check() override { return segment_->check(); }
  symmem_status all_reduce(uint64_t at, int algo, int dtype, int op, uint64_t count, void* out,
                           void* stream, int timeout_ms) override;
  symmem_status all_gather(uint64_t at, int dtype, uint64_t count, void* out, void* stream,
                           int timeout_ms) override;
  symmem_status reduce_scatter(uint64_t at, int dtype, int op, uint64_t count, void* out,
                               void* stream, int timeout_ms) override;
  symmem_status broadcast(uint64_t at, int dtype, uint64_t count, int root, void* out, void* stream,
                          int timeout_ms) override;
  symmem_status all_to_all(uint64_t at, int dtype, uint64_t count, void* out, void* stream,
                           int timeout_ms) override;
  symmem_status all_to_all_v(uint64_t at, int dtype, uint64_t splits_at, void* out,
                             uint64_t out_capacity, int64_t* out_splits, void* stream,
                             int timeout_ms) override;
  int auto_algo(int dtype, uint64_t bytes, bool in_place) override {
    return segment_->auto_algo(dtype, bytes, in_place);
  }
  uint64_t one_shot_in_place_max_bytes() override;
  symmem_status device_uuid(int r, uint8_t out[16]) override {
    return segment_->device_uuid(r, out);
  }
  symmem_status copy_in(int r, uint64_t offset, const void* src, uint64_t bytes) override;
  symmem_status copy_out(int r, uint64_t offset, void* dst, uint64_t bytes) override;
  symmem_status put_on_stream(int r, uint64_t offset, const void* src, uint64_t bytes, void* s) override {
    return segment_->put_on_stream(r, offset_ + offset, src, bytes, s);
  }
  symmem_status get_on_stream(int r, uint64_t offset, void* dst, uint64_t bytes, void* s) override {
    return segment_->get_on_stream(r, offset_ + offset, dst, bytes, s);
  }

 private:
  // Runs `call` holding the segment's shared-pad use (see symmem_buffer::view_call_busy).
  template <class Call>
  symmem_status on_shared_pad(const char* what, Call&& call);

  symmem_buffer* segment_;
  uint64_t offset_;
  uint64_t size_;
};

}  // namespace symmem
