// Bad arguments give SYMMEM_ERR_INVALID_ARGUMENT (or STATE) with a message naming the argument.
#include <unistd.h>

#include "test_util.h"

// Java passes the enums as plain ints. Calling through an int-typed pointer does the same, without
// ever forming an out-of-range C++ enum value in this test.
using all_reduce_int_fn = symmem_status (*)(symmem_buffer*, int, int, int, uint64_t, void*, void*, int);
static const all_reduce_int_fn all_reduce_ints = reinterpret_cast<all_reduce_int_fn>(&symmem_all_reduce);

#define CHECK_INVALID(expr, text)                          \
  do {                                                     \
    CHECK_STATUS(expr, SYMMEM_ERR_INVALID_ARGUMENT);       \
    CHECK_ERROR_HAS(text);                                 \
  } while (0)

int main() {
  // Library identity.
  CHECK(std::strcmp(symmem_version(), "0.1.0") == 0);
  CHECK(symmem_abi_version() == SYMMEM_ABI_VERSION);

  // close_fd: closes once, then names the fd that is no longer open.
  int pipe_fds[2];
  CHECK(pipe(pipe_fds) == 0);
  CHECK_OK(symmem_close_fd(pipe_fds[0]));
  CHECK_STATUS(symmem_close_fd(pipe_fds[0]), SYMMEM_ERR_SYSTEM);
  CHECK_ERROR_HAS("close(fd");
  CHECK_OK(symmem_close_fd(pipe_fds[1]));
  CHECK_STATUS(symmem_close_fd(-1), SYMMEM_ERR_INVALID_ARGUMENT);

  // Channel.
  symmem_channel* ch = nullptr;
  CHECK_INVALID(symmem_channel_open(nullptr, &ch), "name is NULL");
  CHECK_INVALID(symmem_channel_open("", &ch), "name is empty");
  std::string long_name(200, 'n');
  CHECK_INVALID(symmem_channel_open(long_name.c_str(), &ch), "name is 200 bytes long");
  CHECK_INVALID(symmem_channel_open("x", nullptr), "out is NULL");
  Names names("badargs", 2);
  CHECK_OK(symmem_channel_open(names.ptrs[0], &ch));
  int fd = memfd_with("z"), out[SYMMEM_MAX_WORLD + 1], rank, got;
  const char* const* pn = names.ptrs.data();
  CHECK_INVALID(symmem_channel_all_gather_fds(nullptr, pn, 0, 2, 1, fd, out, 100), "channel is NULL");
  CHECK_INVALID(symmem_channel_all_gather_fds(ch, nullptr, 0, 2, 1, fd, out, 100), "peer_names is NULL");
  CHECK_INVALID(symmem_channel_all_gather_fds(ch, pn, 0, 0, 1, fd, out, 100), "world 0 is out of range 1..64");
  CHECK_INVALID(symmem_channel_all_gather_fds(ch, pn, 0, 65, 1, fd, out, 100), "world 65 is out of range 1..64");
  CHECK_INVALID(symmem_channel_all_gather_fds(ch, pn, 2, 2, 1, fd, out, 100), "rank 2 is out of range 0..1");
  CHECK_INVALID(symmem_channel_all_gather_fds(ch, pn, -1, 2, 1, fd, out, 100), "rank -1 is out of range");
  CHECK_INVALID(symmem_channel_all_gather_fds(ch, pn, 0, 2, 1, fd, out, 0), "timeout_ms 0 must be > 0");
  CHECK_INVALID(symmem_channel_all_gather_fds(ch, pn, 0, 2, 1, fd, out, -5), "timeout_ms -5");
  CHECK_INVALID(symmem_channel_all_gather_fds(ch, pn, 0, 2, 1, -3, out, 100), "fd -3");
  CHECK_INVALID(symmem_channel_all_gather_fds(ch, pn, 0, 2, 1, fd, nullptr, 100), "out_fds is NULL");
  const char* with_null[2] = {names.ptrs[0], nullptr};
  CHECK_INVALID(symmem_channel_all_gather_fds(ch, with_null, 0, 2, 1, fd, out, 100), "peer_names[1] is NULL");
  const char* with_long[2] = {names.ptrs[0], long_name.c_str()};
  CHECK_INVALID(symmem_channel_all_gather_fds(ch, with_long, 0, 2, 1, fd, out, 100), "peer_names[1] is 200 bytes");
  CHECK_INVALID(symmem_channel_broadcast_fds(ch, pn, 0, 2, 2, 1, fd, &got, 100), "root 2 is out of range");
  CHECK_INVALID(symmem_channel_send_fd(ch, nullptr, 0, 1, fd, 100), "peer_name is NULL");
  CHECK_INVALID(symmem_channel_send_fd(ch, names.ptrs[1], 64, 1, fd, 100), "rank 64 is out of range");
  CHECK_INVALID(symmem_channel_send_fd(ch, names.ptrs[1], 0, 1, 999, 100), "fd 999 is not an open file descriptor");
  CHECK_INVALID(symmem_channel_recv_fd(ch, 1, nullptr, &got, 100), "out_rank is NULL");
  CHECK_INVALID(symmem_channel_recv_fd(ch, 1, &rank, &got, 0), "timeout_ms 0");
  CHECK_OK(symmem_channel_close(ch));
  CHECK_OK(symmem_channel_close(nullptr));

  // Backends and buffers.
  symmem_backend* be = nullptr;
  CHECK_INVALID(symmem_backend_open(nullptr, 0, &be), "name is NULL");
  CHECK_INVALID(symmem_backend_open("host", 0, nullptr), "out is NULL");
  CHECK_INVALID(symmem_backend_get_info(nullptr, nullptr), "backend is NULL");
  CHECK_OK(symmem_backend_open("host", 0, &be));
  symmem_buffer* b = nullptr;
  CHECK_INVALID(symmem_buffer_alloc(be, 0, &b), "size_bytes 0");
  CHECK(b == nullptr);
  CHECK_INVALID(symmem_buffer_alloc(nullptr, 64, &b), "backend is NULL");
  CHECK_INVALID(symmem_buffer_alloc(be, ~uint64_t{0}, &b), "size_bytes");
  CHECK_OK(symmem_buffer_alloc(be, 64, &b));
  int fds[2] = {-1, -1};
  CHECK_INVALID(symmem_buffer_import(b, 0, 2, nullptr), "fds is NULL");
  CHECK_INVALID(symmem_buffer_import(b, 0, 2, fds), "fds[1] is -1");
  CHECK_INVALID(symmem_buffer_import(b, 3, 2, fds), "rank 3 is out of range 0..1");
  CHECK_INVALID(symmem_buffer_import(b, 0, 100, fds), "world 100 is out of range");
  CHECK_STATUS(symmem_barrier(b, 0, 100), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("not imported");
  CHECK_STATUS(symmem_put_signal(b, 1, 0, 100), SYMMEM_ERR_STATE);
  CHECK(symmem_buffer_ptr(nullptr, 0) == nullptr);
  CHECK_ERROR_HAS("buffer is NULL");
  CHECK(symmem_buffer_size(nullptr) == 0);
  CHECK(symmem_buffer_rank(nullptr) == -1);

  // A world-1 import (no peers) makes the buffer usable for the checks on signals.
  int own = -1;
  CHECK_OK(symmem_buffer_export_fd(b, &own));
  CHECK_OK(symmem_buffer_import(b, 0, 1, &own));
  CHECK_INVALID(symmem_barrier(b, 32, 100), "channel 32 is out of range 0..31");
  CHECK_INVALID(symmem_barrier(b, -1, 100), "channel -1");
  CHECK_INVALID(symmem_barrier(b, 0, 0), "timeout_ms 0");
  CHECK_INVALID(symmem_put_signal(b, 0, 0, 100), "peer 0 is this rank");
  CHECK_INVALID(symmem_wait_signal(b, 1, 0, 100), "peer 1 is out of range 0..0");
  CHECK_OK(symmem_barrier(b, 0, 100));  // world 1: nobody to wait for
  float in_out[16] = {1.5f};
  static_cast<float*>(symmem_buffer_ptr(b, 0))[0] = 2.5f;
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_ONE_SHOT, SYMMEM_FLOAT32, SYMMEM_SUM, 1, in_out, nullptr, 100));
  CHECK(in_out[0] == 2.5f);
  CHECK_INVALID(all_reduce_ints(b, 7, SYMMEM_FLOAT32, SYMMEM_SUM, 1, in_out, nullptr, 100), "algo 7");
  CHECK_INVALID(all_reduce_ints(b, SYMMEM_ALGO_AUTO, 3, SYMMEM_SUM, 1, in_out, nullptr, 100), "dtype 3");
  CHECK_INVALID(all_reduce_ints(b, SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, 9, 1, in_out, nullptr, 100), "op 9");
  CHECK_INVALID(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_SUM, 17, in_out, nullptr, 100),
                "count 17");
  CHECK_INVALID(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_SUM, 1, in_out, nullptr, 0),
                "timeout_ms 0");
  // CUDA graphs: the host backend has nothing to capture; bad handles are named.
  int not_a_stream = 0;
  CHECK_INVALID(symmem_graph_capture_begin(be, nullptr), "the legacy default stream cannot be captured");
  CHECK_STATUS(symmem_graph_capture_begin(be, &not_a_stream), SYMMEM_ERR_UNSUPPORTED);
  CHECK_ERROR_HAS("the host backend has no CUDA graphs");
  symmem_graph* g = nullptr;
  CHECK_STATUS(symmem_graph_capture_end(be, &not_a_stream, &g), SYMMEM_ERR_UNSUPPORTED);
  CHECK(g == nullptr);
  CHECK_INVALID(symmem_graph_capture_end(be, &not_a_stream, nullptr), "out is NULL");
  CHECK_INVALID(symmem_graph_replay(nullptr, &not_a_stream), "graph is NULL");
  CHECK_INVALID(symmem_graph_synchronize(nullptr, &not_a_stream), "graph is NULL");
  CHECK(symmem_graph_buffer_count(nullptr) == -1);
  CHECK_OK(symmem_graph_free(nullptr));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_buffer_free(nullptr));
  CHECK_OK(symmem_backend_close(be));
  CHECK_OK(symmem_backend_close(nullptr));
  close(fd);
  std::printf("test_bad_args: OK\n");
  return 0;
}
