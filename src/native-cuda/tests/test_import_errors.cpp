// Import failures: size mismatch names the rank and both sizes; a failed import maps nothing and
// leaves the buffer importable.
#include "test_util.h"

int main() {
  symmem_backend* be = nullptr;
  CHECK_OK(symmem_backend_open("host", 0, &be));
  symmem_buffer *a = nullptr, *b4 = nullptr, *b8 = nullptr;
  CHECK_OK(symmem_buffer_alloc(be, 4096, &a));
  CHECK_OK(symmem_buffer_alloc(be, 4096, &b4));
  CHECK_OK(symmem_buffer_alloc(be, 8192, &b8));
  int fa, f4, f8;
  CHECK_OK(symmem_buffer_export_fd(a, &fa));
  CHECK_OK(symmem_buffer_export_fd(b4, &f4));
  CHECK_OK(symmem_buffer_export_fd(b8, &f8));

  // Rank 2 (world 3) has the wrong size; rank 1 was already mapped when that is found.
  const int maps_before = count_mappings();
  int fds[3] = {fa, f4, f8};
  CHECK_STATUS(symmem_buffer_import(a, 0, 3, fds), SYMMEM_ERR_MISMATCH);
  CHECK_ERROR_HAS("rank 2's buffer is 8192 bytes, this rank's is 4096");
  CHECK(count_mappings() == maps_before);  // rank 1's mapping was undone
  CHECK(symmem_buffer_world(a) == 0);

  // Not a symmem buffer at all.
  int tiny = memfd_with("tiny");
  int fds_tiny[2] = {fa, tiny};
  CHECK_STATUS(symmem_buffer_import(a, 0, 2, fds_tiny), SYMMEM_ERR_MISMATCH);
  CHECK_ERROR_HAS("rank 1's fd");
  close(tiny);

  // A closed fd.
  int fds_bad[2] = {fa, 1000};
  CHECK_STATUS(symmem_buffer_import(a, 0, 2, fds_bad), SYMMEM_ERR_INVALID_ARGUMENT);
  CHECK_ERROR_HAS("fds[1] (1000) is not an open file descriptor");

  // After all that the buffer still imports fine, and sees the peer's memory.
  int fds_ok[2] = {-1, f4};  // own entry is ignored
  CHECK_OK(symmem_buffer_import(a, 0, 2, fds_ok));
  static_cast<char*>(symmem_buffer_ptr(b4, SYMMEM_RANK_SELF))[100] = 42;
  CHECK(static_cast<char*>(symmem_buffer_ptr(a, 1))[100] == 42);
  CHECK(symmem_buffer_signal_pad(a, 1) == static_cast<char*>(symmem_buffer_ptr(a, 1)) + 4096);

  CHECK_OK(symmem_buffer_free(a));
  CHECK_OK(symmem_buffer_free(b4));
  CHECK_OK(symmem_buffer_free(b8));
  CHECK_OK(symmem_backend_close(be));
  std::printf("test_import_errors: mismatch named, failed imports undone: OK\n");
  return 0;
}
