// cuda buffers: alloc/export/import/free 200 times with no leak (fds, device memory), pointers
// and pads, size mismatch, two ranks on one GPU (refused, then allowed by
// SYMMEM_ALLOW_OVERLAPPING_DEVICES=1), argument checks, and the topology call.
#include <string>

#include "cuda_test_util.h"

static int leak_rank(int rank, int world, int ngpu) {
  Names names("cudaleak", world);
  CUDA_OK(cudaSetDevice(rank % ngpu));
  CUDA_OK(cudaFree(nullptr));  // context first, so its memory is not counted as a leak
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("cuda", rank % ngpu, &be));
  symmem_channel* ch = nullptr;
  CHECK_OK(symmem_channel_open(names.ptrs[rank], &ch));
  size_t free0 = 0, total = 0, free_after_first = 0;
  int fds0 = 0;
  for (int cycle = 0; cycle < 200; ++cycle) {
    if (cycle == 1) {
      CUDA_OK(cudaMemGetInfo(&free_after_first, &total));
      fds0 = count_open_fds();
    }
    symmem_buffer* b = nullptr;
    CHECK_OK(symmem_buffer_alloc(be, (8u << 20) + 12, &b));
    int fd = -1;
    std::vector<int> fds(world);
    CHECK_OK(symmem_buffer_export_fd(b, &fd));
    CHECK_OK(symmem_channel_all_gather_fds(ch, names.ptrs.data(), rank, world, 100 + cycle, fd,
                                           fds.data(), 20000));
    CHECK_OK(symmem_buffer_import(b, rank, world, fds.data()));
    for (int r = 0; r < world; ++r) close(fds[r]);
    CHECK_OK(symmem_barrier(b, 0, 20000));
    CHECK_OK(symmem_buffer_free(b));
  }
  size_t free1 = 0;
  CUDA_OK(cudaMemGetInfo(&free1, &total));
  const int fds1 = count_open_fds();
  (void)free0;
  if (fds1 != fds0) TEST_FAIL("open fds %d after 200 cycles, %d after the first", fds1, fds0);
  if (free1 + (4u << 20) < free_after_first)
    TEST_FAIL("device memory free %zu after 200 cycles, %zu after the first (leak)", free1,
              free_after_first);
  CHECK_OK(symmem_channel_close(ch));
  CHECK_OK(symmem_backend_close(be));
  if (rank == 0)
    std::printf("200 alloc/import/free cycles: fds %d -> %d, device free %zu -> %zu MiB\n", fds0,
                fds1, free_after_first >> 20, free1 >> 20);
  return 0;
}

// Two ranks whose buffers differ (`bytes` differs, or what sizes the pad region): each allocates,
// exchanges fds and imports, which fails with MISMATCH on both; `check_error` then reads
// symmem_last_error. A failed import leaves the buffer as it was.
template <class CheckError>
static int import_mismatch(const char* name, int rank, uint64_t bytes, CheckError check_error) {
  Names names(name, 2);
  CUDA_OK(cudaSetDevice(0));
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("cuda", 0, &be));
  symmem_buffer* b = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, bytes, &b));
  symmem_channel* ch = nullptr;
  CHECK_OK(symmem_channel_open(names.ptrs[rank], &ch));
  int fd = -1, fds[2];
  CHECK_OK(symmem_buffer_export_fd(b, &fd));
  CHECK_OK(symmem_channel_all_gather_fds(ch, names.ptrs.data(), rank, 2, 1, fd, fds, 20000));
  CHECK_STATUS(symmem_buffer_import(b, rank, 2, fds), SYMMEM_ERR_MISMATCH);
  check_error();
  close(fds[0]);
  close(fds[1]);
  CHECK(symmem_buffer_world(b) == 0);
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_channel_close(ch));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

static int mismatch_rank(int rank) {
  return import_mismatch("cudamismatch", rank, rank == 0 ? 4096 : 8192, [&] {
    CHECK_ERROR_HAS(rank == 0 ? "rank 1's buffer is 8192 bytes, this rank's is 4096"
                              : "rank 0's buffer is 4096 bytes, this rank's is 8192");
  });
}

// A mismatch of a setting that sizes the pad region is found at cuMemMap (the allocations differ,
// before the header can be read) or at the header check: the error has one of the two texts.
static void error_has_either(int rank, const std::string& at_map, const std::string& at_header) {
  const char* err = symmem_last_error();
  if (std::strstr(err, at_map.c_str()) == nullptr && std::strstr(err, at_header.c_str()) == nullptr)
    TEST_FAIL("rank %d: symmem_last_error \"%s\" contains neither \"%s\" nor \"%s\"", rank, err,
              at_map.c_str(), at_header.c_str());
}

// SYMMEM_CUDA_PUSH_SCRATCH_BYTES different on the two ranks (rank 0 its default, 4 MiB; rank 1
// 0): the pad regions, hence the allocations, differ. Import fails with MISMATCH on both ranks,
// naming the variable and this rank's value: mostly at cuMemMap (INVALID_VALUE or NOT_SUPPORTED,
// before the header can be read), else at the header check.
static int scratch_mismatch_rank(int rank) {
  if (rank == 0) unsetenv("SYMMEM_CUDA_PUSH_SCRATCH_BYTES");
  else setenv("SYMMEM_CUDA_PUSH_SCRATCH_BYTES", "0", 1);
  const int rc = import_mismatch("cudascratch", rank, 8u << 20, [&] {
    const std::string mine = rank == 0 ? "4194304" : "0";
    const std::string at_map = "SYMMEM_CUDA_PUSH_SCRATCH_BYTES and SYMMEM_CUDA_LL128_MAX_BYTES (which "
                               "size the pad region; " + mine + " and 4194304 on this rank) must be the "
                               "same on every rank";
    const std::string at_header = "SYMMEM_CUDA_PUSH_SCRATCH_BYTES=" + mine + " here";
    error_has_either(rank, at_map, at_header);
  });
  unsetenv("SYMMEM_CUDA_PUSH_SCRATCH_BYTES");
  return rc;
}

// SYMMEM_CUDA_LL_MAX_BYTES different on the two ranks (rank 0 unset, rank 1 0): the buffers are
// alike, but a 4 KiB one-shot would go as lines on rank 0 and through the push scratch on rank 1,
// each waiting where the other never writes. Import fails with MISMATCH naming both settings.
static int ll_mismatch_rank(int rank) {
  if (rank == 0) unsetenv("SYMMEM_CUDA_LL_MAX_BYTES");
  else setenv("SYMMEM_CUDA_LL_MAX_BYTES", "0", 1);
  const int rc = import_mismatch("cudallmax", rank, 1u << 20, [&] {
    CHECK_ERROR_HAS(rank == 0 ? "rank 1 sends one-shots as low-latency lines up to 0 bytes"
                              : "rank 0 sends one-shots as low-latency lines up to the default");
    CHECK_ERROR_HAS("set both to the same values on every rank");
  });
  unsetenv("SYMMEM_CUDA_LL_MAX_BYTES");
  return rc;
}

// SYMMEM_CUDA_LL128_MAX_BYTES different on the two ranks (rank 0 unset, 4 MiB; rank 1 0, no line
// area): a 1 MiB one-shot would go as 128-byte lines on rank 0 and through the push scratch on rank
// 1. The pad regions differ too, so import fails with MISMATCH on both ranks, naming the variable:
// at cuMemMap (before the header can be read) or at the header check.
static int ll128_mismatch_rank(int rank) {
  if (rank == 0) unsetenv("SYMMEM_CUDA_LL128_MAX_BYTES");
  else setenv("SYMMEM_CUDA_LL128_MAX_BYTES", "0", 1);
  const int rc = import_mismatch("cudall128", rank, 1u << 20, [&] {
    const std::string at_map = std::string("SYMMEM_CUDA_LL128_MAX_BYTES (which size the pad region; 4194304 and ") +
                               (rank == 0 ? "4194304" : "0") + " on this rank)";
    const std::string at_header = rank == 0 ? "rank 1 sends one-shots as 128-byte lines up to 0 bytes"
                                            : "rank 0 sends one-shots as 128-byte lines up to 4194304 bytes";
    error_has_either(rank, at_map, at_header);
  });
  unsetenv("SYMMEM_CUDA_LL128_MAX_BYTES");
  return rc;
}

static int overlap_rank(int rank, bool allow) {
  Names names(allow ? "cudaovl1" : "cudaovl0", 2);
  // Set or cleared explicitly: the refusal case must not depend on the caller's environment.
  if (allow) setenv("SYMMEM_ALLOW_OVERLAPPING_DEVICES", "1", 1);
  else unsetenv("SYMMEM_ALLOW_OVERLAPPING_DEVICES");
  CUDA_OK(cudaSetDevice(0));
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("cuda", 0, &be));
  symmem_buffer* b = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, 1 << 16, &b));
  symmem_channel* ch = nullptr;
  CHECK_OK(symmem_channel_open(names.ptrs[rank], &ch));
  int fd = -1, fds[2];
  CHECK_OK(symmem_buffer_export_fd(b, &fd));
  CHECK_OK(symmem_channel_all_gather_fds(ch, names.ptrs.data(), rank, 2, 1, fd, fds, 20000));
  if (!allow) {
    CHECK_STATUS(symmem_buffer_import(b, rank, 2, fds), SYMMEM_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_HAS("ranks 0 and 1 both use GPU GPU-");
    CHECK_ERROR_HAS("SYMMEM_ALLOW_OVERLAPPING_DEVICES=1");
  } else {
    CHECK_OK(symmem_buffer_import(b, rank, 2, fds));
    CHECK_OK(symmem_barrier(b, 0, 20000));
    void* out;
    CUDA_OK(cudaMalloc(&out, 4096));
    CHECK_OK(symmem_memset32(b, SYMMEM_RANK_SELF, 0, 0x40000000u, 100, nullptr));  // 2.0f
    CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_SUM, 100, out, nullptr, 20000));
    CHECK_OK(symmem_stream_synchronize(b, nullptr));
    float r[100];
    CUDA_OK(cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost));
    for (float x : r) CHECK(x == 4.0f);
    CUDA_OK(cudaFree(out));
  }
  close(fds[0]);
  close(fds[1]);
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_channel_close(ch));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

static int single(int ngpu) {
  CUDA_OK(cudaSetDevice(0));
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("cuda", 0, &be));
  symmem_buffer* b = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, 1000, &b));
  void* p = symmem_buffer_ptr(b, SYMMEM_RANK_SELF);
  void* pad = symmem_buffer_signal_pad(b, SYMMEM_RANK_SELF);
  CHECK(p != nullptr && pad != nullptr);
  cudaPointerAttributes attr;
  CUDA_OK(cudaPointerGetAttributes(&attr, p));
  CHECK(attr.type == cudaMemoryTypeDevice && attr.device == 0);
  std::vector<uint32_t> h(SYMMEM_SIGNAL_CHANNELS * SYMMEM_MAX_WORLD, 7);
  CUDA_OK(cudaMemcpy(h.data(), pad, h.size() * 4, cudaMemcpyDeviceToHost));
  for (uint32_t v : h) CHECK(v == 0);  // zeroed pad
  // Write with memset32 before import (own rank), read back.
  CHECK_OK(symmem_memset32(b, SYMMEM_RANK_SELF, 8, 0xdeadbeef, 10, nullptr));
  CHECK_OK(symmem_stream_write_value32(b, SYMMEM_RANK_SELF, 4, 42, nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  uint32_t w[13];
  CUDA_OK(cudaMemcpy(w, p, sizeof w, cudaMemcpyDeviceToHost));
  CHECK(w[1] == 42 && w[2] == 0xdeadbeef && w[11] == 0xdeadbeef);
  CHECK_STATUS(symmem_memset32(b, SYMMEM_RANK_SELF, 2, 0, 1, nullptr), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("offset_bytes 2 is not a multiple of 4");
  CHECK_STATUS(symmem_memset32(b, SYMMEM_RANK_SELF, 0, 0, 251, nullptr), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("exceed the buffer's 1000 bytes");
  uint8_t u[16];
  CHECK_OK(symmem_buffer_device_uuid(b, SYMMEM_RANK_SELF, u));
  // World of one: import with no peers; collectives are a local copy/reduction.
  int fds[1] = {-1};
  CHECK_OK(symmem_buffer_import(b, 0, 1, fds));
  CHECK_OK(symmem_barrier(b, 0, 1000));
  void* out;
  CUDA_OK(cudaMalloc(&out, 1000));
  CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, SYMMEM_BFLOAT16, SYMMEM_SUM, 501, out, nullptr, 1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("count 501 bfloat16 elements need 1002 bytes but the symmetric buffer has 1000");
  CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, SYMMEM_BFLOAT16, SYMMEM_SUM, 10, p, nullptr, 1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("overlaps the symmetric buffer");
  CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, symmem_dtype(9), SYMMEM_SUM, 10, out, nullptr, 1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("dtype 9 is unknown");
  CHECK_STATUS(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, symmem_reduce_op(7), 10, out, nullptr, 1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("op 7 is unknown");
  CHECK_STATUS(symmem_all_reduce(b, symmem_algo(5), SYMMEM_FLOAT32, SYMMEM_SUM, 10, out, nullptr, 1000),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("algo 5 is unknown");
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_TWO_SHOT, SYMMEM_FLOAT32, SYMMEM_MAX, 250, out, nullptr, 1000));
  CHECK_OK(symmem_stream_synchronize(b, nullptr));
  uint32_t r[250], in[250];
  CUDA_OK(cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(in, p, sizeof in, cudaMemcpyDeviceToHost));
  CHECK(r[1] == 42 && r[2] == 0xdeadbeef);  // world 1: the reduction is the input
  for (int i = 0; i < 250; ++i)
    CHECK(r[i] == in[i] || (in[i] & 0x7f800000u) == 0x7f800000u);  // NaN inputs may change bits
  CUDA_OK(cudaFree(out));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));

  symmem_topology t;
  CHECK_OK(symmem_cuda_topology(&t));
  CHECK(t.device_count == ngpu || (ngpu > SYMMEM_TOPOLOGY_MAX_DEVICES));
  std::printf("topology: %d device(s)\n", t.device_count);
  for (int i = 0; i < t.device_count; ++i) {
    std::printf("  %d %s vmm=%d multicast=%s peers:", i, t.name[i], t.vmm_supported[i],
                t.multicast[i] == SYMMEM_MULTICAST_DISABLED    ? "disabled"
                : t.multicast[i] == SYMMEM_MULTICAST_SUPPORTED ? "supported (unused)"
                                                               : "unsupported");
    for (int j = 0; j < t.device_count; ++j)
      if (j != i)
        std::printf(" [%d: access=%d rank=%d atomics=%d]", j, t.can_access_peer[i][j],
                    t.performance_rank[i][j], t.native_atomics[i][j]);
    std::printf("\n");
  }
  return 0;
}

int main() {
  const int ngpu = require_gpus("test_cuda_buffer", 1);
  if (!run_ranks(1, 60, [&](int) { return single(ngpu); })) return 1;
  if (!run_ranks(2, 60, [](int r) { return mismatch_rank(r); })) return 1;
  if (!run_ranks(2, 60, [](int r) { return scratch_mismatch_rank(r); })) return 1;
  if (!run_ranks(2, 60, [](int r) { return ll_mismatch_rank(r); })) return 1;
  if (!run_ranks(2, 60, [](int r) { return ll128_mismatch_rank(r); })) return 1;
  if (!run_ranks(2, 60, [](int r) { return overlap_rank(r, false); })) return 1;
  if (!run_ranks(2, 60, [](int r) { return overlap_rank(r, true); })) return 1;
  const int world = ngpu >= 2 ? 2 : 1;
  if (!run_ranks(world, 120, [&](int r) { return leak_rank(r, world, ngpu); })) return 1;
  std::printf("test_cuda_buffer: OK\n");
  return 0;
}
