// Host <-> buffer copies, local memory and streams on the host backend: copy_in/copy_out at
// offsets (own rank before import, any rank after), local_alloc/copy/free, every range and
// pointer check with its message, an all_reduce into local memory, stream create/destroy (NULL).
#include <cmath>

#include "test_util.h"

static const int kWorld = 2;
static const uint64_t kBytes = 4096;

static void single_process_checks() {
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("host", 0, &be));
  symmem_buffer* b = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, kBytes, &b));
  // Before import: the own rank only.
  std::vector<uint8_t> src(kBytes), dst(kBytes);
  for (uint64_t i = 0; i < kBytes; ++i) src[i] = uint8_t(i * 13 + 1);
  CHECK_OK(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 100, src.data(), 200));
  CHECK_OK(symmem_buffer_copy_out(b, SYMMEM_RANK_SELF, 100, dst.data(), 200));
  CHECK(std::memcmp(src.data(), dst.data(), 200) == 0);
  CHECK(std::memcmp(static_cast<uint8_t*>(symmem_buffer_ptr(b, SYMMEM_RANK_SELF)) + 100,
                    src.data(), 200) == 0);
  CHECK_OK(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 0, src.data(), kBytes));  // whole buffer
  CHECK_OK(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, kBytes, src.data(), 0));  // empty at the end
  CHECK_OK(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 0, nullptr, 0));          // empty, NULL src
  CHECK_STATUS(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 4000, src.data(), 97),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("symmem_buffer_copy_in: offset 4000 + bytes 97 exceed the symmetric buffer's 4096 bytes");
  CHECK_STATUS(symmem_buffer_copy_out(b, SYMMEM_RANK_SELF, 4097, dst.data(), 0),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("offset 4097 + bytes 0 exceed");
  CHECK_STATUS(symmem_buffer_copy_out(b, SYMMEM_RANK_SELF, 0, dst.data(), UINT64_MAX),
               SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 0, nullptr, 4), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("symmem_buffer_copy_in: src is NULL");
  CHECK_STATUS(symmem_buffer_copy_out(b, SYMMEM_RANK_SELF, 0, nullptr, 4), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("symmem_buffer_copy_out: dst is NULL");
  CHECK_STATUS(symmem_buffer_copy_out(b, 1, 0, dst.data(), 4), SYMMEM_ERR_STATE);
  CHECK_ERROR_HAS("rank 1 is not mapped before import");
  CHECK_STATUS(symmem_buffer_copy_out(nullptr, 0, 0, dst.data(), 4), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("symmem_buffer_copy_out: buffer is NULL");
  CHECK_OK(symmem_buffer_free(b));

  // Local memory.
  void* local = nullptr;
  CHECK_OK(symmem_local_alloc(be, 1000, &local));
  CHECK(local != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(local) % 64 == 0);
  for (int i = 0; i < 1000; ++i) CHECK(static_cast<uint8_t*>(local)[i] == 0);  // zero-filled
  CHECK_OK(symmem_local_copy_in(be, local, 10, src.data(), 990));
  std::fill(dst.begin(), dst.end(), 0);
  CHECK_OK(symmem_local_copy_out(be, local, 10, dst.data(), 990));
  CHECK(std::memcmp(src.data(), dst.data(), 990) == 0);
  CHECK_STATUS(symmem_local_copy_in(be, local, 10, src.data(), 991), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("symmem_local_copy_in: offset 10 + bytes 991 exceed the local allocation's 1000 bytes");
  CHECK_STATUS(symmem_local_copy_out(be, src.data(), 0, dst.data(), 4), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("was not allocated by symmem_local_alloc on this backend");
  CHECK_STATUS(symmem_local_copy_out(be, local, 0, nullptr, 4), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("symmem_local_copy_out: dst is NULL");
  CHECK_STATUS(symmem_local_alloc(be, 0, &local), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("bytes 0");
  CHECK(local == nullptr);  // cleared on failure
  CHECK_OK(symmem_local_alloc(be, 64, &local));
  CHECK_OK(symmem_local_free(be, local));
  CHECK_STATUS(symmem_local_free(be, local), SYMMEM_ERR_INVALID_ARGUMENT);  // twice
  CHECK_ERROR_HAS("or is already freed");
  CHECK_OK(symmem_local_free(be, nullptr));
  // Streams: the host backend has none (NULL), destroy of NULL is a no-op.
  void* stream = reinterpret_cast<void*>(1);
  CHECK_OK(symmem_stream_create(be, &stream));
  CHECK(stream == nullptr);
  CHECK_OK(symmem_stream_destroy(be, stream));
  CHECK_STATUS(symmem_stream_create(nullptr, &stream), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("symmem_stream_create: backend is NULL");
  // A local allocation left behind is freed with the backend (ASan/valgrind would see a leak).
  CHECK_OK(symmem_local_alloc(be, 4096, &local));
  CHECK_OK(symmem_backend_close(be));
}

static int rank_main(int rank) {
  Names names("copy", kWorld);
  symmem_backend* be = nullptr;
  symmem_buffer* b = make_imported_buffer("host", 0, names, rank, kWorld, kBytes, &be);

  const uint64_t n = 500;
  std::vector<float> in(n), res(n);
  for (uint64_t i = 0; i < n; ++i) in[i] = float(i) * 0.5f + float(rank);
  CHECK_OK(symmem_buffer_copy_in(b, SYMMEM_RANK_SELF, 0, in.data(), n * 4));
  void* out = nullptr;
  CHECK_OK(symmem_local_alloc(be, n * 4, &out));
  CHECK_OK(symmem_all_reduce(b, SYMMEM_ALGO_AUTO, SYMMEM_FLOAT32, SYMMEM_SUM, n, out, nullptr, 10000));
  CHECK_OK(symmem_local_copy_out(be, out, 0, res.data(), n * 4));
  for (uint64_t i = 0; i < n; ++i)
    if (res[i] != float(i) * 1.0f + 1.0f) TEST_FAIL("[%llu] %g", (unsigned long long)i, res[i]);
  // Read the peer's input through copy_out with its rank.
  const int peer = 1 - rank;
  std::vector<float> theirs(n);
  CHECK_OK(symmem_buffer_copy_out(b, peer, 0, theirs.data(), n * 4));
  for (uint64_t i = 0; i < n; ++i)
    if (theirs[i] != float(i) * 0.5f + float(peer)) TEST_FAIL("peer [%llu] %g", (unsigned long long)i, theirs[i]);
  CHECK_STATUS(symmem_buffer_copy_out(b, 2, 0, theirs.data(), 4), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("symmem_buffer_copy_out: rank 2 is out of range 0..1 (world 2)");
  CHECK_OK(symmem_barrier(b, 1, 10000));  // both have read before anyone frees
  CHECK_OK(symmem_local_free(be, out));
  CHECK_OK(symmem_buffer_free(b));
  CHECK_OK(symmem_backend_close(be));
  return 0;
}

int main() {
  single_process_checks();
  RUN_RANKS(kWorld, rank_main);
  std::printf("test_copy: passed\n");
  return 0;
}
